/**
 * How many executions an organization may start a second (the org-starts-per-second limit):
 * every start counts, whoever makes it (the API, a trigger, a node starting a child or calling a
 * flow), so that no organization's flows take the daemon's whole pace of starts from the others.
 * A token bucket per organization that holds a second of starts: a burst up to the rate goes at
 * once, then starts go at the rate. Kept in memory only: a restart refills every bucket, which
 * lets at most one more second's burst through. One bucket per organization that started
 * anything: organizations are few, made only by a system admin.
 */

/** One organization's bucket: the starts it may make now, as of `atMs`. */
interface Bucket {
  tokens: number;
  atMs: number;
}

/** The org-starts-per-second limit's buckets (see the top of this file). */
export class StartRate {
  private readonly buckets = new Map<string, Bucket>();

  /** `perSecond`: the starts a second each organization may make, and the most it may make at once. */
  constructor(private readonly perSecond: number) {}

  /**
   * Takes `n` starts of `organization` at `nowMs` and answers 0, or answers the ms until they
   * could go and takes nothing. More starts at once than a second's (a batch larger than the
   * rate) go when the bucket is full, and the bucket owes them: the next starts wait longer.
   */
  take(organization: string, n: number, nowMs: number): number {
    const rate = this.perSecond;
    let b = this.buckets.get(organization);
    if (b === undefined) this.buckets.set(organization, (b = { tokens: rate, atMs: nowMs }));
    else if (nowMs > b.atMs) {
      b.tokens = Math.min(rate, b.tokens + ((nowMs - b.atMs) * rate) / 1000);
      b.atMs = nowMs;
    }
    const need = Math.min(n, rate);
    if (b.tokens >= need) {
      b.tokens -= n;
      return 0;
    }
    return Math.max(1, Math.ceil(((need - b.tokens) * 1000) / rate));
  }
}
