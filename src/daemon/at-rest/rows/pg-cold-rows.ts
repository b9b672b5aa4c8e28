/**
 * The lazy load of a partition's execution rows (decision 077): their summary columns go into
 * an ExecutionIndex, no document is read, and an execution's document is read back when a
 * journal entry being replayed changes it (`readDocs`, a page's worth in one query) or when the
 * engine's cache asks (pg-evictable.ts). What a start, a standby and a takeover hold of an
 * execution nothing touches is then its summary only, as the JSON store's lazy open does.
 */
import type pg from 'pg';
import { WfxError } from '../../../shared/errors.js';
import { ELSEWHERE, ExecutionIndex } from '../../state/execution-index/execution-index.js';
import {
  FLAG_CHILD,
  withSlot,
  FLAG_SLOT,
  FLAG_TRIGGERED,
  type ExecutionSummary,
  type WaitSummary,
} from '../../state/execution-summary.js';
import { partitionOfExecution, type PartitionLayout } from '../../store/pg/partition-state.js';
import type { LazyRowsOptions, LazyRows as LazyRowsPort } from '../../store/pg/rows-at-rest-port.js';

/** Summary rows read per query. */
const PAGE_ROWS = 10_000;

interface SummaryRow {
  readonly id: string;
  readonly organization: string | null;
  readonly process_id: string | null;
  readonly process_version: string | null;
  readonly environment: string | null;
  readonly state_cd: number | null;
  readonly root: string | null;
  readonly parent: string | null;
  readonly start_ms: string | null;
  readonly correlation_key: string | null;
  readonly due_ms: string | null;
  readonly active: number | null;
  readonly waits: WaitSummary[] | null;
  readonly flags: number | null;
  readonly search: Readonly<Record<string, string>> | null;
  /** Only for a row whose summary is incomplete (written without one, or before `flags`). */
  readonly doc: string | null;
  readonly bytes: number;
}

// A row without a complete summary (the store was given no `summarize`, its flow was not found,
// or it was written before migration 14) comes with its document: it is loaded whole.
const SUMMARIES = `
  SELECT id, organization, process_id, process_version, environment, state_cd, root, parent, start_ms,
         correlation_key, due_ms, active, waits, flags, search,
         CASE WHEN organization IS NULL OR flags IS NULL OR state_cd IS NULL THEN doc END AS doc,
         octet_length(doc) AS bytes
    FROM wfx_executions
   WHERE partition = $1 AND id > $2
   ORDER BY id
   LIMIT $3`;

/**
 * What a lazy follower (store/pg/journal-follower.ts) keeps of the executions it has not read: their
 * summaries, and of those it read back, the last entry that changed each.
 */
export class LazyRows<S, R> implements LazyRowsPort<R> {
  /** The executions not in the state, their summaries: what a store built on it hands its engine's cache. */
  readonly unread = new ExecutionIndex();
  /** The resident executions the journal changed, and its last entry that did: what `settle` may let go of. */
  private readonly touchedAt = new Map<string, number>();

  constructor(
    private readonly options: LazyRowsOptions<S, R>,
    private readonly state: S,
  ) {}

  /** Whether `settle` can let executions go (it can summarize them and take them out). */
  get settles(): boolean {
    return this.options.summarize !== undefined && this.options.collection?.evict !== undefined;
  }

  /**
   * Loads partition `partition`'s rows as summaries (readSummaries, `into` the snapshot's own
   * entries); `again`: the partition was loaded before, and its executions leave the state
   * with it (their rows are current), so none of theirs is kept here either.
   */
  load(client: pg.ClientBase, partition: number, into: Record<string, unknown>, again: boolean) {
    if (again) {
      forgetPartitions(this.unread, this.options, [partition]);
      for (const id of this.touchedAt.keys())
        if (partitionOfExecution(this.options, id) === partition) this.touchedAt.delete(id);
    }
    return readSummaries(client, partition, this.unread, into);
  }

  /**
   * Reads back, in one query on the catch-up's transaction, the executions not in the state
   * that `entries` change: each is as the rows have it, which is as of the snapshot loaded,
   * since no entry applied since changed it (one that did read it back).
   */
  async readBack(
    client: pg.ClientBase,
    partition: number,
    entries: ReadonlyArray<{ readonly records: readonly R[] }>,
  ): Promise<void> {
    const { collection } = this.options;
    const cold = new Set<string>();
    for (const { records } of entries)
      for (const record of records) collection!.touched(record, (id) => this.unread.has(id) && cold.add(id));
    if (cold.size === 0) return;
    const docs = await readDocs(client, partition, [...cold]).catch((err: unknown) => {
      // A row that does not parse will not parse later either: the copy is broken, not behind.
      if (err instanceof SyntaxError) throw new WfxError('SNAPSHOT_CORRUPT', `partition ${partition}: ${err.message}`);
      throw err;
    });
    for (const [id, doc] of docs) {
      collection!.adopt!(this.state as object, doc);
      this.unread.remove(id);
    }
  }

  /** `record`, of entry `seq`, was applied. */
  touched(record: R, seq: number): void {
    if (this.settles) this.options.collection!.touched(record, (id) => this.touchedAt.set(id, seq));
  }

  /**
   * Partition `partition`'s rows are now as of its entry `seq`, which the copy has applied (its
   * owner checkpointed): an execution no later entry changed is as its row holds it, so it
   * leaves the state for its summary. A standby's copy then holds what the journal changed
   * since the last checkpoint, not all it changed since the standby started. Returns the ids
   * whose rows are current now (gone ones included).
   */
  settle(partition: number, seq: number): string[] {
    const { collection, summarize } = this.options;
    const entries = (this.state as Record<string, Record<string, unknown> | undefined>)[collection!.key] ?? {};
    const settled: string[] = [];
    for (const [id, at] of this.touchedAt) {
      if (at > seq || partitionOfExecution(this.options, id) !== partition) continue;
      const entry = entries[id];
      if (entry !== undefined) {
        let summary: ExecutionSummary;
        try {
          summary = summarize!(entry, this.state);
        } catch {
          continue; // no summary (its flow not found): it stays
        }
        this.unread.put({ ...summary, id }, ELSEWHERE);
        collection!.evict!(this.state as object, id);
      }
      this.touchedAt.delete(id);
      settled.push(id);
    }
    return settled;
  }
}

/**
 * Reads partition `partition`'s rows on `client` (the load's transaction: as of its snapshot):
 * each complete summary into `directory`, each row without one parsed into `into`, as is every
 * row whose id `into` holds already (a snapshot's own, which the row replaces, as readRows does).
 * Returns how many rows, their bytes, and the ids loaded whole. A document that does not parse
 * throws a SyntaxError naming its execution.
 */
export async function readSummaries(
  client: pg.ClientBase,
  partition: number,
  directory: ExecutionIndex,
  into: Record<string, unknown>,
  pageRows = PAGE_ROWS,
): Promise<{ rows: number; bytes: number; whole: string[] }> {
  let rows = 0;
  let bytes = 0;
  const whole: string[] = [];
  const also: string[] = [];
  let after = '';
  for (;;) {
    const page = await client.query<SummaryRow>(SUMMARIES, [partition, after, pageRows]);
    // Grown by half at least: room for exactly one more page at each would copy every column
    // of the directory per page, a cost that grows with the square of the rows.
    const wanted = directory.size + page.rows.length;
    if (wanted > directory.slotCapacity) directory.reserve(Math.max(wanted, Math.ceil(directory.slotCapacity * 1.5)));
    for (const row of page.rows) {
      bytes += Number(row.bytes);
      if (row.doc !== null) {
        into[row.id] = parseDoc(row.id, row.doc);
        whole.push(row.id);
      } else if (Object.hasOwn(into, row.id)) also.push(row.id);
      else directory.put(summaryOf(row), ELSEWHERE);
    }
    rows += page.rows.length;
    if (page.rows.length < pageRows) break;
    after = page.rows.at(-1)!.id;
  }
  if (also.length > 0) {
    for (const [id, doc] of await readDocs(client, partition, also)) into[id] = doc;
    whole.push(...also);
  }
  return { rows, bytes, whole };
}

/**
 * The documents of executions `ids` of partition `partition`, parsed, by id: every one must
 * have a row (a summary in the directory says it has), else SNAPSHOT_CORRUPT.
 */
export async function readDocs(
  client: pg.ClientBase | pg.Pool,
  partition: number,
  ids: readonly string[],
): Promise<Map<string, unknown>> {
  const texts = await readDocTexts(client, partition, ids);
  const missing = ids.filter((id) => !texts.has(id));
  if (missing.length > 0) throw noRow(partition, missing);
  const out = new Map<string, unknown>();
  for (const [id, doc] of texts) out.set(id, parseDoc(id, doc));
  return out;
}

/** The documents of those of executions `ids` of partition `partition` that have a row, as text, by id. */
export async function readDocTexts(
  client: pg.ClientBase | pg.Pool,
  partition: number,
  ids: readonly string[],
): Promise<Map<string, string>> {
  const { rows } = await client.query<{ id: string; doc: string }>(
    'SELECT id, doc FROM wfx_executions WHERE partition = $1 AND id = ANY($2::text[])',
    [partition, ids],
  );
  return new Map(rows.map((r) => [r.id, r.doc]));
}

/** SNAPSHOT_CORRUPT: the directory lists executions `missing` of `partition`, which have no row. */
export function noRow(partition: number, missing: readonly string[]): WfxError {
  return new WfxError(
    'SNAPSHOT_CORRUPT',
    `partition ${partition} has no row for execution${missing.length === 1 ? '' : 's'} ${missing.slice(0, 5).join(', ')}`,
  );
}

/** Takes every execution of partitions `partitions` out of `directory` (their rows are loaded again, or another daemon's now). */
export function forgetPartitions<S, R>(
  directory: ExecutionIndex | null | undefined,
  layout: PartitionLayout<S, R>,
  partitions: readonly number[],
): void {
  if (!directory || partitions.length === 0) return;
  for (const id of directory.list({ limit: Infinity }))
    if (partitions.includes(partitionOfExecution(layout, id))) directory.remove(id);
}

/** Execution `id`'s document parsed; a SyntaxError naming it when it does not parse. */
export function parseDoc(id: string, doc: string): unknown {
  try {
    return JSON.parse(doc);
  } catch (err) {
    throw new SyntaxError(`execution ${id}'s row does not parse`, { cause: err });
  }
}

/** The summary the columns of `row` hold (complete: `doc` is null). */
function summaryOf(row: SummaryRow): ExecutionSummary {
  const flags = row.flags ?? 0;
  const summary: ExecutionSummary = {
    id: row.id,
    organization: row.organization!,
    processId: row.process_id ?? '',
    processVersion: row.process_version ?? '',
    environment: row.environment ?? '',
    stateCd: row.state_cd!,
    root: row.root,
    parent: row.parent,
    startMs: row.start_ms === null ? Number.NaN : Number(row.start_ms),
    triggered: (flags & FLAG_TRIGGERED) !== 0,
    child: (flags & FLAG_CHILD) !== 0,
    correlationKey: row.correlation_key,
    dueMs: row.due_ms === null ? null : Number(row.due_ms),
    active: row.active ?? 0,
    waits: row.waits ?? [],
  };
  if (row.search !== null) (summary as { search?: typeof row.search }).search = row.search;
  return withSlot(summary, (flags & FLAG_SLOT) !== 0);
}
