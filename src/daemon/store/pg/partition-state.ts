/**
 * How the live state is cut into partitions (decision 035) and put back together. With one
 * partition, partition 0 is the whole state. With more, the executions (the state's partitioned
 * collection, by id) are spread over partitions 1..n-1 by their id (partitionOf), and partition
 * 0 holds everything else: the directory (organizations, keys, flows, settings), the triggers'
 * progress and what executions share (memory, files, messages). Every record changes one
 * partition: an execution's records name it, and its children are given ids in its partition.
 */
import { partitionOf } from '../../engine/ids.js';

/** The number of partitions of a database first used without saying (wfx_cluster). */
export const DEFAULT_PARTITIONS = 16;

/** The state's collection spread over partitions, and the ids each record changes in it. */
export interface PartitionedCollection<R> {
  /** The top-level key of the collection (a dictionary by id). */
  readonly key: string;
  /** Calls `visit` with the id of each entry of the collection `record` changes. */
  readonly touched: (record: R, visit: (id: string) => void) => void;
  /** Lists the collection's keys as Object.keys would, from a list its owner keeps. */
  readonly keys?: (collection: Record<string, unknown>, state: object) => string[];
}

export interface PartitionLayout<S, R> {
  /** How many partitions the database has (wfx_cluster). */
  readonly count: number;
  /** Absent: every record is partition 0's. */
  readonly collection?: PartitionedCollection<R>;
  readonly initialState: () => S;
  /** Top-level keys derived by the state's owner: never in a snapshot. */
  readonly derived?: readonly string[];
}

/** The partition of execution `id`: its own when executions are spread, partition 0 when not. */
export function partitionOfExecution<S, R>(layout: PartitionLayout<S, R>, id: string): number {
  return layout.count > 1 && layout.collection ? partitionOf(id, layout.count) : 0;
}

/** The partition a record changes; throws when it changes entries of two (an id drawn wrong). */
export function partitionOfRecord<S, R>(layout: PartitionLayout<S, R>, record: R): number {
  if (layout.count <= 1 || !layout.collection) return 0;
  let partition = 0;
  layout.collection.touched(record, (id) => {
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
  if (layout.count === 1 || !layout.collection) return [{ partition: 0, entry: `[${serialized.join(',')}]` }];
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
 * derived keys (and without the collection when there are several partitions), another's the
 * collection's entries in it, as `{ [key]: { id: entry } }`.
 */
export function serializePartitions<S, R>(
  state: S,
  layout: PartitionLayout<S, R>,
  partitions: readonly number[],
): Map<number, string> {
  const out = new Map<number, string>();
  const split = layout.count > 1 && layout.collection !== undefined;
  const skip = new Set(layout.derived ?? []);
  if (split) skip.add(layout.collection!.key);
  if (partitions.includes(0)) {
    out.set(
      0,
      JSON.stringify(state, function (this: unknown, key, value: unknown) {
        return this === state && skip.has(key) ? undefined : value;
      }),
    );
  }
  if (!split) return out;
  const { key, keys } = layout.collection!;
  const collection = (state as Record<string, Record<string, unknown>>)[key]!;
  const parts = new Map<number, Record<string, unknown>>();
  for (const p of partitions) if (p !== 0) parts.set(p, {});
  for (const id of keys ? keys(collection, state as object) : Object.keys(collection)) {
    const entry = collection[id];
    if (entry === undefined) continue;
    const part = parts.get(partitionOf(id, layout.count));
    if (part) part[id] = entry;
  }
  for (const [p, entries] of parts) out.set(p, JSON.stringify({ [key]: entries }));
  return out;
}

/**
 * The state with partition `partition` replaced by its snapshot `saved` (parsed): partition 0's
 * keys replaced (collections added since the snapshot was written start empty; derived ones as
 * the owner makes them), another's entries of the collection replaced. Returns the state to use
 * (a new object when partition 0 is replaced). The derived keys are reset either way: an index
 * kept beside the collection (InstanceTable, JobQueues) would not know the entries loaded.
 */
export function replacePartition<S, R>(
  state: S,
  layout: PartitionLayout<S, R>,
  partition: number,
  saved: unknown,
  /** True when the state holds nothing of the partition yet (a first load): its entries are added in place. */
  absent = false,
): S {
  const replaced = replaceEntries(state, layout, partition, saved, absent) as Record<string, unknown>;
  // What is derived (an index of the collection's keys, the jobs waiting) was made without what
  // was loaded, and may be kept beside the same collection: made again on first use.
  const initial = layout.initialState() as Record<string, unknown>;
  for (const key of layout.derived ?? []) replaced[key] = initial[key];
  return replaced as S;
}

/** replacePartition's part that loads `saved`, leaving the derived keys as they were. */
function replaceEntries<S, R>(
  state: S,
  layout: PartitionLayout<S, R>,
  partition: number,
  saved: unknown,
  absent: boolean,
): S {
  const split = layout.count > 1 && layout.collection !== undefined;
  if (partition === 0) {
    const fresh = Object.assign(layout.initialState() as object, saved) as Record<string, unknown>;
    if (split) fresh[layout.collection!.key] = (state as Record<string, unknown>)[layout.collection!.key];
    return fresh as S;
  }
  if (!split) throw new Error(`a snapshot of partition ${partition} in a store of one partition`);
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
  return state;
}
