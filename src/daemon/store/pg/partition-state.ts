/**
 * How the live state is cut into partitions (decision 035) and put back together. With one
 * partition, partition 0 is the whole state. With more, the executions (the state's partitioned
 * collection, by id) are spread over partitions 1..n-1 by their id (partitionOf), and partition
 * 0 holds the directory (organizations, keys, flows, settings) and the triggers' progress, and
 * the shared partition (COMMONS_PARTITION) what executions share (memory, files, messages),
 * which any daemon may write (decision 039). Every record changes one partition: an execution's
 * records name it, and its children are given ids in its partition.
 */
import { partitionOf } from '../../state/ids.js';

/** The number of partitions of a database first used without saying (wfx_cluster). */
export const DEFAULT_PARTITIONS = 16;

/**
 * The shared partition's number in the journal and the snapshots: not a lease's (no daemon
 * owns it), and apart from 0..count-1. It exists when the state is split.
 */
export const COMMONS_PARTITION = -1;

/** The state's collection spread over partitions, and the ids each record changes in it. */
export interface PartitionedCollection<R> {
  /** The top-level key of the collection (a dictionary by id). */
  readonly key: string;
  /** Calls `visit` with the id of each entry of the collection `record` changes. */
  readonly touched: (record: R, visit: (id: string) => void) => void;
  /** Lists the collection's keys as Object.keys would, from a list its owner keeps. */
  readonly keys?: (collection: Record<string, unknown>, state: object) => string[];
  /** Puts an entry read back (a lazy load's, pg-cold-rows.ts) into the state, as its owner keeps them. */
  readonly adopt?: (state: object, entry: unknown) => void;
  /** Takes entry `id` out of the state, as its owner keeps them (a lazy follower's copy, once a checkpoint wrote it). */
  readonly evict?: (state: object, id: string) => void;
}

/** The state's part that every daemon writes (state/commons.ts): its keys, and the entries each record sets. */
export interface SharedPart<R> {
  /** Top-level keys of the state held by the shared partition. */
  readonly keys: readonly string[];
  /** The keys of the entries `record` sets or removes there; null for a record of another partition. */
  readonly touched: (record: R) => readonly string[] | null;
}

export interface PartitionLayout<S, R> {
  /** How many partitions the database has (wfx_cluster). */
  readonly count: number;
  /** Absent: every record is partition 0's. */
  readonly collection?: PartitionedCollection<R>;
  /** With `collection` and more than one partition: what goes to the shared partition. */
  readonly shared?: SharedPart<R>;
  readonly initialState: () => S;
  /** Top-level keys derived by the state's owner: never in a snapshot. */
  readonly derived?: readonly string[];
  /**
   * Those of `derived` a partition taken or given up while running leaves as they are (what
   * its owner made once, such as the hooks of an engine's cache), the rest being made again.
   */
  readonly keptOnMoves?: readonly string[];
}

/** The partition of execution `id`: its own when executions are spread, partition 0 when not. */
export function partitionOfExecution<S, R>(layout: PartitionLayout<S, R>, id: string): number {
  return layout.count > 1 && layout.collection ? partitionOf(id, layout.count) : 0;
}

/** Whether the state is cut at all: executions spread, and with them the shared partition (if any). */
export function isSplit<S, R>(layout: PartitionLayout<S, R>): boolean {
  return layout.count > 1 && layout.collection !== undefined;
}

/** Whether the layout has a shared partition. */
export function hasShared<S, R>(layout: PartitionLayout<S, R>): boolean {
  return isSplit(layout) && layout.shared !== undefined;
}

/** The partition a record changes; throws when it changes entries of two (an id drawn wrong). */
export function partitionOfRecord<S, R>(layout: PartitionLayout<S, R>, record: R): number {
  if (!isSplit(layout)) return 0;
  if (layout.shared?.touched(record)) return COMMONS_PARTITION;
  let partition = 0;
  layout.collection!.touched(record, (id) => {
    const p = partitionOf(id, layout.count);
    if (partition !== 0 && p !== partition)
      throw new Error(`a record changes executions of partitions ${partition} and ${p}`);
    partition = p;
  });
  return partition;
}

/** A commit's records (and their JSON) as one journal entry, a JSON array, per partition they change. */
export function cutCommit<S, R>(
  layout: PartitionLayout<S, R>,
  serialized: readonly string[],
  records: readonly R[],
): Array<{ readonly partition: number; readonly entry: string }> {
  if (!isSplit(layout)) return [{ partition: 0, entry: `[${serialized.join(',')}]` }];
  const parts = new Map<number, string[]>();
  for (let i = 0; i < records.length; i++) {
    const p = partitionOfRecord(layout, records[i]!);
    const part = parts.get(p);
    if (part) part.push(serialized[i]!);
    else parts.set(p, [serialized[i]!]);
  }
  return [...parts].map(([partition, part]) => ({ partition, entry: `[${part.join(',')}]` }));
}

/**
 * Each partition's snapshot as JSON, of the state as it is now: partition 0's without the
 * derived keys and the collection (null when unsplit; and without the shared keys when there
 * are several partitions), the shared partition's its keys, another's `{}`. The collection's entries are
 * rows of their own (pg-execution-rows.ts), written beside the snapshot.
 */
export function serializePartitions<S, R>(
  state: S,
  layout: PartitionLayout<S, R>,
  partitions: readonly number[],
): Map<number, string> {
  const out = new Map<number, string>();
  const skip = new Set(layout.derived ?? []);
  if (layout.collection) skip.add(layout.collection.key);
  if (hasShared(layout)) for (const key of layout.shared!.keys) skip.add(key);
  if (partitions.includes(COMMONS_PARTITION) && hasShared(layout)) {
    const part: Record<string, unknown> = {};
    for (const key of layout.shared!.keys) part[key] = (state as Record<string, unknown>)[key];
    out.set(COMMONS_PARTITION, JSON.stringify(part));
  }
  if (partitions.includes(0)) {
    // Unsplit, the collection is written as null, not left out: a daemon of before the rows
    // (an old standby) reads no empty collection, which it would take for no executions.
    const nulled = isSplit(layout) ? undefined : layout.collection?.key;
    out.set(
      0,
      JSON.stringify(state, function (this: unknown, key, value: unknown) {
        if (this !== state) return value;
        return key === nulled ? null : skip.has(key) ? undefined : value;
      }),
    );
  }
  if (isSplit(layout)) for (const p of partitions) if (p > 0) out.set(p, '{}');
  return out;
}

/**
 * The state with partition `partition` replaced by its snapshot `saved` (parsed), in place (a
 * live store's state is followed into: the engine holds it). Partition 0's keys are replaced
 * (collections added since the snapshot was written start empty; the shared keys are kept
 * unless the snapshot holds them, as one written before the shared partition existed does), the
 * shared partition's keys, or another's entries of the collection. Replacing entries of the
 * collection resets the derived keys: an index kept beside it (ExecutionTable, JobQueues) would
 * not know the entries loaded, and is made again by the state's owner (the engine's recovery
 * walk, engine/recovery.ts) or on first use.
 */
export function replacePartition<S, R>(
  state: S,
  layout: PartitionLayout<S, R>,
  partition: number,
  saved: unknown,
  /** True when the state holds nothing of the partition yet (a first load): its entries are added in place. */
  absent = false,
): void {
  const holder = state as Record<string, unknown>;
  const initial = layout.initialState() as Record<string, unknown>;
  const split = isSplit(layout);
  if (partition === COMMONS_PARTITION) {
    if (!hasShared(layout)) throw new Error('a snapshot of the shared partition in a store without one');
    const part = saved as Record<string, unknown> | null;
    if (typeof part !== 'object' || part === null) throw new Error('the shared snapshot is not an object');
    for (const key of layout.shared!.keys) holder[key] = Object.hasOwn(part, key) ? part[key] : initial[key];
    return;
  }
  if (partition === 0) {
    const fresh = Object.assign(initial, saved) as Record<string, unknown>;
    const kept = new Set<string>(layout.derived ?? []);
    if (split) kept.add(layout.collection!.key);
    if (hasShared(layout))
      for (const key of layout.shared!.keys) if (!Object.hasOwn(saved as object, key)) kept.add(key);
    for (const key of Object.keys(holder)) if (!kept.has(key)) delete holder[key];
    for (const [key, value] of Object.entries(fresh)) if (!kept.has(key)) holder[key] = value;
    if (split) return;
  } else replaceEntries(state, layout, partition, saved, absent);
  for (const key of layout.derived ?? []) holder[key] = initial[key];
}

/** replacePartition's part that loads an execution partition's `saved`. */
function replaceEntries<S, R>(
  state: S,
  layout: PartitionLayout<S, R>,
  partition: number,
  saved: unknown,
  absent: boolean,
): void {
  if (!isSplit(layout)) throw new Error(`a snapshot of partition ${partition} in a store of one partition`);
  const { key } = layout.collection!;
  const holder = state as Record<string, Record<string, unknown>>;
  const entries = (saved as Record<string, Record<string, unknown>> | null)?.[key];
  if (entries === undefined || typeof entries !== 'object' || entries === null)
    throw new Error(`the snapshot of partition ${partition} has no ${key}`);
  if (absent) Object.assign((holder[key] ??= {}), entries);
  else {
    const kept: Record<string, unknown> = {};
    for (const [id, entry] of Object.entries(holder[key] ?? {}))
      if (entry !== undefined && partitionOf(id, layout.count) !== partition) kept[id] = entry;
    holder[key] = Object.assign(kept, entries);
  }
}

/** The derived keys of `state` as the initial state has them: made again by the state's owner or on first use. */
export function resetDerived<S, R>(state: S, layout: PartitionLayout<S, R>): void {
  const holder = state as Record<string, unknown>;
  const initial = layout.initialState() as Record<string, unknown>;
  for (const key of layout.derived ?? []) if (!layout.keptOnMoves?.includes(key)) holder[key] = initial[key];
}

/** `partitions`, checked to be execution partitions of a split state: sorted, once each. Throws a RangeError. */
export function executionPartitions<S, R>(layout: PartitionLayout<S, R>, partitions: readonly number[]): number[] {
  if (!layout.collection || partitions.some((p) => !Number.isInteger(p) || p < 1 || p >= layout.count))
    throw new RangeError(`execution partitions are 1 to ${layout.count - 1}, not [${partitions.join(', ')}]`);
  return [...new Set(partitions)].sort((a, b) => a - b);
}
