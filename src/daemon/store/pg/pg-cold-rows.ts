/**
 * The lazy load of a partition's execution rows (decision 077): their summary columns go into
 * an ExecutionDirectory, no document is read, and an execution's document is read back when a
 * journal entry being replayed changes it (`readDocs`, a page's worth in one query) or when the
 * engine's cache asks (pg-evictable.ts). What a start, a standby and a takeover hold of an
 * execution nothing touches is then its summary only, as the JSON store's lazy open does.
 */
import type pg from 'pg';
import { WfxError } from '../../../shared/errors.js';
import type { ExecutionDirectory } from '../../state/directory/directory.js';
import { FLAG_CHILD, FLAG_TRIGGERED, type ExecutionSummary, type WaitSummary } from '../../state/execution-summary.js';
import { partitionOfExecution, type PartitionLayout } from './partition-state.js';

/** Summary rows read per query. */
const PAGE_ROWS = 10_000;

/** No place kept: the row is found by its key, (partition, id). */
const ELSEWHERE = { segment: 0, offset: 0, length: 0 };

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
  /** Only for a row whose summary is incomplete (written without one, or before `flags`). */
  readonly doc: string | null;
  readonly bytes: number;
}

// A row without a complete summary (the store was given no `summarize`, its flow was not found,
// or it was written before migration 14) comes with its document: it is loaded whole.
const SUMMARIES = `
  SELECT id, organization, process_id, process_version, environment, state_cd, root, parent, start_ms,
         correlation_key, due_ms, active, waits, flags,
         CASE WHEN organization IS NULL OR flags IS NULL OR state_cd IS NULL THEN doc END AS doc,
         octet_length(doc) AS bytes
    FROM wfx_executions
   WHERE partition = $1 AND id > $2
   ORDER BY id
   LIMIT $3`;

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
  directory: ExecutionDirectory,
  into: Record<string, unknown>,
): Promise<{ rows: number; bytes: number; whole: string[] }> {
  let rows = 0;
  let bytes = 0;
  const whole: string[] = [];
  const also: string[] = [];
  let after = '';
  for (;;) {
    const page = await client.query<SummaryRow>(SUMMARIES, [partition, after, PAGE_ROWS]);
    directory.reserve(directory.size + page.rows.length);
    for (const row of page.rows) {
      bytes += Number(row.bytes);
      if (row.doc !== null) {
        into[row.id] = parseDoc(row.id, row.doc);
        whole.push(row.id);
      } else if (Object.hasOwn(into, row.id)) also.push(row.id);
      else directory.put(summaryOf(row), ELSEWHERE);
    }
    rows += page.rows.length;
    if (page.rows.length < PAGE_ROWS) break;
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
  const { rows } = await client.query<{ id: string; doc: string }>(
    'SELECT id, doc FROM wfx_executions WHERE partition = $1 AND id = ANY($2::text[])',
    [partition, ids],
  );
  const out = new Map<string, unknown>();
  for (const row of rows) out.set(row.id, parseDoc(row.id, row.doc));
  const missing = ids.filter((id) => !out.has(id));
  if (missing.length > 0)
    throw new WfxError(
      'SNAPSHOT_CORRUPT',
      `partition ${partition} has no row for execution${missing.length === 1 ? '' : 's'} ${missing.slice(0, 5).join(', ')}`,
    );
  return out;
}

/** Takes every execution of partition `partition` out of `directory` (its rows are loaded again). */
export function forgetPartition<S, R>(
  directory: ExecutionDirectory,
  layout: PartitionLayout<S, R>,
  partition: number,
): void {
  for (const id of directory.list({ limit: Infinity }))
    if (partitionOfExecution(layout, id) === partition) directory.remove(id);
}

function parseDoc(id: string, doc: string): unknown {
  try {
    return JSON.parse(doc);
  } catch (err) {
    throw new SyntaxError(`execution ${id}'s row does not parse`, { cause: err });
  }
}

/** The summary the columns of `row` hold (complete: `doc` is null). */
function summaryOf(row: SummaryRow): ExecutionSummary {
  const flags = row.flags ?? 0;
  return {
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
}
