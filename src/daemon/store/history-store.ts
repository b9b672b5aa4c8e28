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

export interface HistoryStore {
  /**
   * Keeps `json` under `id` in `bucket` (the YYYY-MM-DD its id names); resolves once it is
   * durable. `tags` (no spaces or `|`) are listed without reading the document. Writing a
   * document again is harmless: the later copy wins.
   */
  putJson(bucket: string, id: string, json: string | JsonPieces, tags?: readonly string[]): Promise<void>;
  /** The latest document under `id` in `bucket`, or null. */
  get<T = unknown>(bucket: string, id: string): Promise<T | null>;
  /** Every id in `bucket` with its tags, newest id first. */
  list(bucket: string): Promise<Array<{ id: string; tags: readonly string[] }>>;
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
