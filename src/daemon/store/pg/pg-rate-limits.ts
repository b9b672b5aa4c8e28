/**
 * Rate limits counted in the database, for the daemons sharing it (decision 042): each request
 * of a rate-limited key is counted by one call of `wfx_rate_hit` (migration 9), which keeps the
 * key's allowed requests as rows and counts them within each window, one call per key at a time.
 */
import type pg from 'pg';

/** One sliding window: at most `limit` requests within `windowMs`. */
export interface RateWindow {
  readonly limit: number;
  readonly windowMs: number;
}

/** What the database decided, and each window as it stood before this request. */
export interface RateCount {
  readonly allowed: boolean;
  /** Per window: the requests allowed within it before this one (up to its limit). */
  readonly used: readonly number[];
  /** Per window: milliseconds until its oldest request leaves it (0 when it has none). */
  readonly freesInMs: readonly number[];
}

export class PgRateLimits {
  constructor(private readonly pool: pg.Pool) {}

  /** Counts a request of `keyId` against `windows` if they allow it. */
  async hit(keyId: string, windows: readonly RateWindow[]): Promise<RateCount> {
    const { rows } = await this.pool.query<{ allowed: boolean; used: number[]; frees_in_ms: number[] }>(
      'SELECT allowed, used, frees_in_ms FROM wfx_rate_hit($1, $2::integer[], $3::integer[])',
      [keyId, windows.map((w) => w.limit), windows.map((w) => w.windowMs)],
    );
    const row = rows[0]!;
    return { allowed: row.allowed, used: row.used, freesInMs: row.frees_in_ms.map(Number) };
  }

  /** Forgets a key's requests (the key revoked or deleted, or its limits removed). */
  async forget(keyId: string): Promise<void> {
    await this.pool.query('DELETE FROM wfx_rate_hits WHERE key_id = $1', [keyId]);
  }
}
