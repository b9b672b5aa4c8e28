import type { RateCount, RateWindow } from '../store/pg/pg-rate-limits.js';

/** The outcome of counting one request against a key's limits. */
export interface RateDecision {
  readonly allowed: boolean;
  /** The tightest limit (the one with the fewest requests left), for the RateLimit-* headers. */
  readonly limit: number;
  readonly remaining: number;
  /** Seconds until that window frees a slot. */
  readonly resetSeconds: number;
  /** When refused: seconds until a request would be allowed. */
  readonly retryAfterSeconds: number;
}

/**
 * Exact sliding windows: the times of the last `limit` allowed requests, in a ring. A request
 * is allowed when fewer than `limit` allowed requests fall in the last `windowMs`, that is, when
 * the ring is not full or its oldest entry has left the window. Memory is one number per unit of
 * the limit; refused requests are not recorded, so a client that backs off recovers on time.
 */
class SlidingWindow {
  private readonly times: Float64Array;
  private count = 0;
  private head = 0; // index of the oldest entry

  constructor(
    readonly limit: number,
    readonly windowMs: number,
  ) {
    this.times = new Float64Array(limit);
  }

  /** How many allowed requests fall in the window ending at `now`. */
  used(now: number): number {
    while (this.count > 0 && this.times[this.head]! <= now - this.windowMs) {
      this.head = (this.head + 1) % this.limit;
      this.count--;
    }
    return this.count;
  }

  /** Seconds until the oldest request in the window leaves it (0 when empty). */
  secondsUntilSlot(now: number): number {
    if (this.count === 0) return 0;
    return Math.max(1, Math.ceil((this.times[this.head]! + this.windowMs - now) / 1000));
  }

  record(now: number): void {
    this.times[(this.head + this.count) % this.limit] = now;
    this.count++;
  }
}

/** Per-key limits: requests per minute and per hour; null means unlimited. */
export interface KeyLimits {
  readonly perMinute: number | null;
  readonly perHour: number | null;
}

/** Counts requests per API key (auth.ts): in memory (RateLimiter), or in the database (SharedRateLimiter). */
export interface KeyRateLimiter {
  /** Counts a request of `keyId` if allowed. Null when the key has no limits. */
  hit(keyId: string, limits: KeyLimits): RateDecision | null | Promise<RateDecision | null>;
  /** Forgets a key (revoked or deleted). */
  forget(keyId: string): void;
}

/** A key's windows: the minute's, then the hour's. */
function windowsOf(limits: KeyLimits): RateWindow[] {
  const windows: RateWindow[] = [];
  if (limits.perMinute !== null) windows.push({ limit: limits.perMinute, windowMs: 60_000 });
  if (limits.perHour !== null) windows.push({ limit: limits.perHour, windowMs: 3_600_000 });
  return windows;
}

/**
 * Rate limiting per API key with two sliding windows (minute and hour). In memory: a restart
 * forgets the windows, which only ever errs toward allowing. Windows are rebuilt when a key's
 * limits change.
 */
export class RateLimiter implements KeyRateLimiter {
  private readonly keys = new Map<string, { limits: string; windows: SlidingWindow[] }>();

  constructor(private readonly now: () => number = Date.now) {}

  /** Counts a request of `keyId` if allowed. Returns null when the key has no limits. */
  hit(keyId: string, limits: KeyLimits): RateDecision | null {
    if (limits.perMinute === null && limits.perHour === null) {
      this.keys.delete(keyId);
      return null;
    }
    const signature = `${limits.perMinute}/${limits.perHour}`;
    let entry = this.keys.get(keyId);
    if (!entry || entry.limits !== signature) {
      const windows = windowsOf(limits).map((w) => new SlidingWindow(w.limit, w.windowMs));
      entry = { limits: signature, windows };
      this.keys.set(keyId, entry);
    }
    const now = this.now();
    const refused = entry.windows.filter((w) => w.limit === 0 || w.used(now) >= w.limit);
    if (refused.length > 0) {
      const retry = Math.max(
        ...refused.map((w) => (w.limit === 0 ? Math.ceil(w.windowMs / 1000) : w.secondsUntilSlot(now))),
      );
      const tight = refused[0]!;
      return { allowed: false, limit: tight.limit, remaining: 0, resetSeconds: retry, retryAfterSeconds: retry };
    }
    for (const w of entry.windows) w.record(now);
    let tight = entry.windows[0]!;
    for (const w of entry.windows) if (w.limit - w.used(now) < tight.limit - tight.used(now)) tight = w;
    return {
      allowed: true,
      limit: tight.limit,
      remaining: tight.limit - tight.used(now),
      resetSeconds: tight.secondsUntilSlot(now),
      retryAfterSeconds: 0,
    };
  }

  /** Forgets a key (revoked or deleted). */
  forget(keyId: string): void {
    this.keys.delete(keyId);
  }
}

/**
 * Rate limiting per API key across the daemons sharing a database (decision 042): the same
 * sliding windows, counted in the database (store/pg/pg-rate-limits.ts), so a key's limit holds
 * whichever daemon its requests reach. A request of a key without limits costs nothing more.
 * While the database cannot be reached, requests are counted in this daemon's memory: that errs
 * toward allowing (up to the limit per daemon), as a restart does.
 */
export class SharedRateLimiter implements KeyRateLimiter {
  private unreachable = false;

  constructor(
    private readonly database: {
      hit(keyId: string, windows: readonly RateWindow[]): Promise<RateCount>;
      forget?(keyId: string): Promise<void>;
    },
    private readonly local: RateLimiter,
    private readonly warn: (message: string) => void,
  ) {}

  hit(keyId: string, limits: KeyLimits): RateDecision | null | Promise<RateDecision | null> {
    // Most keys have none: nothing to count, nothing allocated.
    if (limits.perMinute === null && limits.perHour === null) return this.local.hit(keyId, limits);
    const windows = windowsOf(limits);
    return this.database.hit(keyId, windows).then(
      (count) => {
        if (this.unreachable) this.warn('rate limits: counted in the database again');
        this.unreachable = false;
        return decisionOf(windows, count);
      },
      (err: unknown) => {
        if (!this.unreachable)
          this.warn(`rate limits: counted by this daemon alone until the database answers (${(err as Error).message})`);
        this.unreachable = true;
        return this.local.hit(keyId, limits);
      },
    );
  }

  forget(keyId: string): void {
    this.local.forget(keyId);
    // Its rows would otherwise stay until the key's next request, which may never come.
    void this.database.forget?.(keyId).catch(() => undefined);
  }
}

/** The decision (and RateLimit-* figures) of a count made in the database, as RateLimiter.hit makes it. */
export function decisionOf(windows: readonly RateWindow[], count: RateCount): RateDecision {
  const seconds = (i: number) => Math.max(1, Math.ceil(count.freesInMs[i]! / 1000));
  if (!count.allowed) {
    const refused = windows.flatMap((w, i) => (w.limit === 0 || count.used[i]! >= w.limit ? [i] : []));
    const retry = Math.max(
      ...refused.map((i) => (windows[i]!.limit === 0 ? Math.ceil(windows[i]!.windowMs / 1000) : seconds(i))),
    );
    const limit = windows[refused[0] ?? 0]!.limit;
    return { allowed: false, limit, remaining: 0, resetSeconds: retry, retryAfterSeconds: retry };
  }
  // This request is now in every window; in one that had none, it is the oldest.
  let tight = 0;
  const remaining = windows.map((w, i) => w.limit - count.used[i]! - 1);
  for (let i = 1; i < windows.length; i++) if (remaining[i]! < remaining[tight]!) tight = i;
  const reset = count.used[tight] === 0 ? Math.ceil(windows[tight]!.windowMs / 1000) : seconds(tight);
  return {
    allowed: true,
    limit: windows[tight]!.limit,
    remaining: remaining[tight]!,
    resetSeconds: reset,
    retryAfterSeconds: 0,
  };
}
