/**
 * A partition's executions as rows of `wfx_executions` (decision 068 step 9): one row an
 * execution, its document and its summary, as of the partition's snapshot in `wfx_snapshots`,
 * which no longer holds them. A checkpoint writes only the executions changed since the last
 * (DirtyExecutions: the ids the records name, through the collection's `touched`), in the
 * transaction of the snapshot; a load reads the partition's rows back into the collection. A
 * snapshot written before the rows existed still holds its executions: they are loaded from
 * there and marked changed, so the next checkpoint moves them into rows.
 */
import type pg from 'pg';
import { summaryFlags, type ExecutionSummary } from '../../state/execution-summary.js';
import { isSplit, partitionOfExecution, COMMONS_PARTITION, type PartitionLayout } from './partition-state.js';

/** Rows read per query while loading a partition. */
const PAGE_ROWS = 5_000;
/** Rows sent per statement while writing. */
const WRITE_ROWS = 1_000;

/** Whether partition `partition` of `layout` keeps executions (as rows): the execution partitions, or partition 0 unsplit. */
export function holdsExecutions<S, R>(layout: PartitionLayout<S, R>, partition: number): boolean {
  if (!layout.collection || partition === COMMONS_PARTITION) return false;
  return partition > 0 || !isSplit(layout);
}

/** The ids of the executions changed since their rows were last written, whatever their partition. */
export class DirtyExecutions {
  private ids = new Set<string>();

  /** Marks the executions `record` changes (the layout's collection `touched`). */
  touch<S, R>(layout: PartitionLayout<S, R>, record: R): void {
    layout.collection?.touched(record, (id) => this.ids.add(id));
  }

  /** Execution `id` is no longer changed: it is gone, and no row of it was ever written (unjournaled.ts). */
  forgetGone(id: string): void {
    this.ids.delete(id);
  }

  /** Those of partition `partition` are no longer changed (it was loaded afresh from its rows). */
  forget<S, R>(layout: PartitionLayout<S, R>, partition: number): void {
    for (const id of this.ids) if (partitionOfExecution(layout, id) === partition) this.ids.delete(id);
  }

  /** The partitions some of them are in. */
  partitions<S, R>(layout: PartitionLayout<S, R>): Set<number> {
    const out = new Set<number>();
    for (const id of this.ids) out.add(partitionOfExecution(layout, id));
    return out;
  }

  /** The ids in `partitions`, no longer marked (`mark` them again if they are not written). */
  take<S, R>(layout: PartitionLayout<S, R>, partitions: readonly number[]): string[] {
    const out: string[] = [];
    for (const id of this.ids)
      if (partitions.includes(partitionOfExecution(layout, id))) {
        out.push(id);
        this.ids.delete(id);
      }
    return out;
  }

  /** Whether execution `id` is marked changed. */
  has(id: string): boolean {
    return this.ids.has(id);
  }

  /** `ids` are no longer changed (their rows were written as they are). */
  unmark(ids: Iterable<string>): void {
    for (const id of ids) this.ids.delete(id);
  }

  /** Marks `ids` changed. */
  mark(ids: Iterable<string>): void {
    for (const id of ids) this.ids.add(id);
  }

  get size(): number {
    return this.ids.size;
  }
}

/** An execution to write: its document as JSON and its summary (null: the store was given no `summarize`). */
export interface ExecutionRow {
  readonly partition: number;
  readonly id: string;
  readonly doc: string;
  readonly summary: ExecutionSummary | null;
}

/** A checkpoint's changes to the rows: executions written, and ids whose executions left the state. */
export interface RowChanges {
  readonly upserts: readonly ExecutionRow[];
  readonly deletes: ReadonlyArray<{ readonly partition: number; readonly id: string }>;
  /** The ids taken from DirtyExecutions, to mark again if the checkpoint fails. */
  readonly ids: readonly string[];
  /** The JSON's length summed over `upserts`. */
  readonly bytes: number;
}

/**
 * The rows of executions `ids` as the state has them now (one absent: a delete): serialized at
 * once, since records keep being applied while the checkpoint waits for the journal.
 */
export function serializeRows<S, R>(
  state: S,
  layout: PartitionLayout<S, R>,
  ids: readonly string[],
  summarize: ((execution: unknown, state: S) => ExecutionSummary) | undefined,
): RowChanges {
  if (ids.length === 0 || !layout.collection) return { upserts: [], deletes: [], ids, bytes: 0 };
  const collection = (state as Record<string, Record<string, unknown> | undefined>)[layout.collection.key] ?? {};
  const upserts: ExecutionRow[] = [];
  const deletes: Array<{ partition: number; id: string }> = [];
  let bytes = 0;
  for (const id of ids) {
    const partition = partitionOfExecution(layout, id);
    const entry = collection[id];
    if (entry === undefined) deletes.push({ partition, id });
    else {
      const doc = JSON.stringify(entry);
      bytes += doc.length;
      upserts.push({ partition, id, doc, summary: summarize ? summaryOf(summarize, entry, state) : null });
    }
  }
  return { upserts, deletes, ids, bytes };
}

/** The summary of `entry`, or null when it cannot be made (its flow not found): the row is written all the same. */
function summaryOf<S>(
  summarize: (execution: unknown, state: S) => ExecutionSummary,
  entry: unknown,
  state: S,
): ExecutionSummary | null {
  try {
    return summarize(entry, state);
  } catch {
    return null;
  }
}

const UPSERT = `
  INSERT INTO wfx_executions (partition, id, doc, organization, process_id, process_version, environment,
                              state_cd, root, parent, start_ms, correlation_key, due_ms, active, waits, flags,
                              search)
  SELECT * FROM unnest($1::int[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[],
                       $8::smallint[], $9::text[], $10::text[], $11::bigint[], $12::text[], $13::bigint[],
                       $14::int[], $15::jsonb[], $16::smallint[], $17::jsonb[])
  ON CONFLICT (partition, id) DO UPDATE
     SET doc = excluded.doc, organization = excluded.organization, process_id = excluded.process_id,
         process_version = excluded.process_version, environment = excluded.environment,
         state_cd = excluded.state_cd, root = excluded.root, parent = excluded.parent,
         start_ms = excluded.start_ms, correlation_key = excluded.correlation_key,
         due_ms = excluded.due_ms, active = excluded.active, waits = excluded.waits, flags = excluded.flags,
         search = excluded.search
  RETURNING partition, xmax = 0 AS inserted`;
const DELETE = `
  DELETE FROM wfx_executions e USING unnest($1::int[], $2::text[]) AS d(partition, id)
   WHERE e.partition = d.partition AND e.id = d.id
  RETURNING e.partition`;

/**
 * Writes `changes` on `client` (inside the checkpoint's transaction); returns, per partition,
 * how many rows it has more than before (inserted less deleted).
 */
export async function writeRows(client: pg.ClientBase, changes: RowChanges): Promise<Map<number, number>> {
  const grown = new Map<number, number>();
  const count = (partition: number, by: number): void => {
    grown.set(partition, (grown.get(partition) ?? 0) + by);
  };
  for (let i = 0; i < changes.upserts.length; i += WRITE_ROWS) {
    const batch = changes.upserts.slice(i, i + WRITE_ROWS);
    const s = (pick: (x: ExecutionSummary) => unknown) => batch.map((r) => (r.summary ? pick(r.summary) : null));
    const { rows } = await client.query<{ partition: number; inserted: boolean }>(UPSERT, [
      batch.map((r) => r.partition),
      batch.map((r) => r.id),
      batch.map((r) => r.doc),
      s((x) => x.organization),
      s((x) => x.processId),
      s((x) => x.processVersion),
      s((x) => x.environment),
      s((x) => x.stateCd),
      s((x) => x.root),
      s((x) => x.parent),
      s((x) => (Number.isFinite(x.startMs) ? x.startMs : null)),
      s((x) => x.correlationKey),
      s((x) => x.dueMs),
      s((x) => x.active),
      s((x) => JSON.stringify(x.waits)),
      s((x) => summaryFlags(x)),
      s((x) => (x.search === undefined ? null : JSON.stringify(x.search))),
    ]);
    for (const row of rows) if (row.inserted) count(row.partition, 1);
  }
  for (let i = 0; i < changes.deletes.length; i += WRITE_ROWS) {
    const batch = changes.deletes.slice(i, i + WRITE_ROWS);
    const { rows } = await client.query<{ partition: number }>(DELETE, [
      batch.map((d) => d.partition),
      batch.map((d) => d.id),
    ]);
    for (const row of rows) count(row.partition, -1);
  }
  return grown;
}

/**
 * Reads partition `partition`'s rows into `into` (id to parsed document), a page at a time on
 * `client` (the load's transaction: as of its snapshot). Returns how many and their bytes. A
 * document that does not parse throws a SyntaxError naming its execution.
 */
export async function readRows(
  client: pg.ClientBase,
  partition: number,
  into: Record<string, unknown>,
): Promise<{ rows: number; bytes: number }> {
  let rows = 0;
  let bytes = 0;
  let after = '';
  for (;;) {
    const page = await client.query<{ id: string; doc: string }>(
      'SELECT id, doc FROM wfx_executions WHERE partition = $1 AND id > $2 ORDER BY id LIMIT $3',
      [partition, after, PAGE_ROWS],
    );
    for (const { id, doc } of page.rows) {
      try {
        into[id] = JSON.parse(doc);
      } catch (err) {
        throw new SyntaxError(`execution ${id}'s row does not parse`, { cause: err });
      }
      bytes += doc.length;
    }
    rows += page.rows.length;
    if (page.rows.length < PAGE_ROWS) return { rows, bytes };
    after = page.rows.at(-1)!.id;
  }
}
