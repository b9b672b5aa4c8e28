/**
 * What the engine and the daemon ask of history, the finished executions kept out of the live
 * state: the files of history.ts, or a table of the PostgreSQL store (pg/pg-history.ts).
 */
import type { JsonPieces } from './frame.js';
import type { HistoryFinding } from './history-check.js';

/** Damage found in history since it was opened (GET /health's `history`, `wfx daemon status`). */
export interface HistoryDamageReport {
  /** Records found damaged or cut short (HISTORY_FRAME_DAMAGED, HISTORY_TRUNCATED). */
  readonly damagedRecords: number;
  /** Where, the first ones found (at most 100), torn writes of a crash included. */
  readonly findings: readonly HistoryFinding[];
}

/** What `prune` gave back. */
export interface PruneReport {
  readonly buckets: number;
  readonly bytes: number;
}

/**
 * Part of a bucket's listing: the ids below `below` (all without it) whose tags are as `tags`
 * says, at most `limit` of them (all without it).
 */
export interface ListRange {
  readonly below?: string;
  readonly limit?: number;
  /**
   * Only ids whose tag at each position is the value given, or that have no tag there (put
   * before that tag was): a narrowing a history may do where it reads, so that what the caller
   * would refuse is not carried to it.
   */
  readonly tags?: readonly TagEquals[];
  /**
   * Only ids whose pairs tag (PAIRS_TAG) holds each `name=value` pair given (values as the tag
   * keeps them): a narrowing a history may do where it reads, by an index where it has one.
   */
  readonly pairs?: ReadonlyArray<readonly [name: string, value: string]>;
  /**
   * The listing is one of a search through many buckets: a history that caches what it read
   * keeps what it holds rather than this bucket (a search would evict what it reads next).
   */
  readonly passing?: boolean;
}

/** A tag's position in an id's tag list and the value it must have. */
export type TagEquals = readonly [position: number, value: string];

/**
 * The tag that may hold `name=value` pairs joined by `&` (an execution's search attributes:
 * engine/execution-tags.ts), no name or value holding `&` or `=`: a history may index its
 * pairs (PostgreSQL's does), and ListRange.pairs narrows by them.
 */
export const PAIRS_TAG = 10;

/** The pairs of a pairs tag (PAIRS_TAG), by name. Pure. */
export function pairsOf(tag: string | undefined): Map<string, string> {
  const pairs = new Map<string, string>();
  if (tag === undefined || tag === '') return pairs;
  for (const pair of tag.split('&')) {
    const eq = pair.indexOf('=');
    if (eq > 0) pairs.set(pair.slice(0, eq), pair.slice(eq + 1));
  }
  return pairs;
}

/** Whether pairs tag `tag` holds every pair of `want`. Pure. */
export function holdsPairs(tag: string | undefined, want: ReadonlyArray<readonly [string, string]>): boolean {
  if (tag === undefined || tag === '') return want.length === 0;
  const padded = `&${tag}&`;
  return want.every(([name, value]) => padded.includes(`&${name}=${value}&`));
}

/** What any history promises, the files (History) or a table (PgHistory). */
export interface HistoryStore {
  /**
   * Keeps `json` under `id` in `bucket` (the YYYY-MM-DD its id names); resolves once it is
   * durable. `tags` (no white space or `|`) are listed without reading the document. Writing a
   * document again is harmless: the later copy wins.
   */
  putJson(bucket: string, id: string, json: string | JsonPieces, tags?: readonly string[]): Promise<void>;
  /** The latest document under `id` in `bucket`, or null. */
  get<T = unknown>(bucket: string, id: string): Promise<T | null>;
  /**
   * The ids in `bucket` with their tags, newest id first: every one, or those below
   * `range.below`, at most `range.limit` (a listing that stops early reads no more).
   */
  list(bucket: string, range?: ListRange): Promise<Array<{ id: string; tags: readonly string[] }>>;
  /** The buckets that hold documents, newest first. */
  buckets(): Promise<string[]>;
  /** Deletes every bucket last written before `cutoff`. */
  prune(cutoff: Date): Promise<PruneReport>;
  /** Damage found since it was opened (none in a database). */
  damage(): HistoryDamageReport;
  /** Writes what is waiting and stops. */
  close(): Promise<void>;
}

/** `json` as one string. */
export function jsonText(json: string | JsonPieces): string {
  return typeof json === 'string' ? json : `${json.open}${json.parts.join(',')}${json.close}`;
}

type Listed = { readonly id: string; readonly tags: readonly string[] };

/**
 * The entries of a listing by (pair name, value), in its order, made the first time a listing
 * is narrowed by that name: a search then reads the entries that have a pair, not the whole
 * listing. Held while the listing is (a listing that grows is a new array).
 */
const byPair = new WeakMap<readonly Listed[], Map<string, Map<string, Listed[]>>>();

/** The entries of `newestFirst` whose pairs tag has `name` = `value`, in its order. */
function withPair<T extends Listed>(newestFirst: readonly T[], name: string, value: string): readonly T[] {
  let names = byPair.get(newestFirst);
  if (names === undefined) byPair.set(newestFirst, (names = new Map()));
  let values = names.get(name);
  if (values === undefined) {
    names.set(name, (values = new Map()));
    for (const entry of newestFirst) {
      const v = pairsOf(entry.tags[PAIRS_TAG]).get(name);
      if (v === undefined) continue;
      let list = values.get(v);
      if (list === undefined) values.set(v, (list = []));
      list.push(entry);
    }
  }
  return (values.get(value) ?? []) as unknown as readonly T[];
}

/** The part of `newestFirst` (ids descending) that `range` asks for. Pure (what it memoizes aside). */
export function listRange<T extends Listed>(newestFirst: readonly T[], range: ListRange): T[] {
  const pairs = range.pairs ?? [];
  // Narrowed by pairs: from the entries that have the first pair (an index of the listing), not the whole listing.
  if (pairs.length > 0) newestFirst = withPair(newestFirst, pairs[0]![0], pairs[0]![1]);
  let from = 0;
  if (range.below !== undefined) {
    // The first id below `below`: a binary search over the descending ids.
    const below = range.below;
    let hi = newestFirst.length;
    while (from < hi) {
      const mid = (from + hi) >>> 1;
      if (newestFirst[mid]!.id >= below) from = mid + 1;
      else hi = mid;
    }
  }
  const limit = range.limit ?? Infinity;
  const want = range.tags ?? [];
  if (want.length === 0 && pairs.length === 0)
    return newestFirst.slice(from, from + Math.min(limit, newestFirst.length));
  const part: T[] = [];
  for (let i = from; i < newestFirst.length && part.length < limit; i++) {
    const { tags } = newestFirst[i]!;
    if (
      want.every(([at, value]) => at >= tags.length || tags[at] === value) &&
      (pairs.length === 0 || holdsPairs(tags[PAIRS_TAG], pairs))
    )
      part.push(newestFirst[i]!);
  }
  return part;
}
