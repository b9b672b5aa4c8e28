/**
 * The retry policy of work that calls out (a serviceTask's HTTP call, an aiTask's model call):
 * exponential backoff capped by maxIntervalMs, a Retry-After header honoured, and a wait that a
 * cancellation cuts short. Shared so both kinds of work retry the same way.
 */
import { MAX_TIMER_MS } from './http-request.js';

/** A Retry-After header is honoured up to this delay. */
const MAX_RETRY_AFTER_MS = 10 * 60 * 1000;
/** A computed backoff without maxIntervalMs is capped here too (and setTimeout needs < 2^31). */
const MAX_DELAY_MS = 10 * 60 * 1000;

/** A retry policy as a serviceTask or an aiTask states it (defaults: DEFAULT_RETRY). */
export interface RetryPolicy {
  readonly maxAttempts: number;
  readonly initialIntervalMs: number;
  readonly backoff: number;
  readonly maxIntervalMs?: number | undefined;
}

/**
 * The wait before the attempt after `attempt` (1-based): initialIntervalMs * backoff^(attempt-1),
 * capped by maxIntervalMs and 10 minutes; a Retry-After the server sent wins. Whole ms. Pure.
 */
export function retryDelayMs(policy: RetryPolicy, attempt: number, retryAfterMs?: number): number {
  if (retryAfterMs !== undefined) return Math.round(retryAfterMs);
  let delayMs = Math.min(
    policy.initialIntervalMs * policy.backoff ** (attempt - 1),
    policy.maxIntervalMs ?? MAX_DELAY_MS,
    MAX_DELAY_MS,
  );
  if (!Number.isFinite(delayMs) || delayMs < 0) delayMs = policy.maxIntervalMs ?? MAX_DELAY_MS;
  return Math.round(delayMs);
}

/**
 * A Retry-After header's wait: delta seconds or an HTTP date (relative to `now`); undefined when
 * absent or unreadable. At least 0, at most 10 minutes. Pure.
 */
export function parseRetryAfter(value: string | null | undefined, now = Date.now()): number | undefined {
  if (value === null || value === undefined) return undefined;
  const text = value.trim();
  let ms: number;
  if (/^\d+$/.test(text)) ms = Number(text) * 1000;
  else {
    const at = Date.parse(text);
    if (Number.isNaN(at)) return undefined;
    ms = at - now;
  }
  return Math.min(Math.max(0, ms), MAX_RETRY_AFTER_MS);
}

/** A duration for a message: `250ms`, `1.5s`. Pure. */
export function formatMs(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)}ms`;
  return `${Number((ms / 1000).toFixed(3))}s`;
}

/** Resolves true after `ms`, false as soon as the signal aborts; leaves no timer or listener behind. */
export function sleep(ms: number, signal: AbortSignal | undefined): Promise<boolean> {
  if (signal?.aborted) return Promise.resolve(false);
  return new Promise((resolve) => {
    const onAbort = (): void => {
      clearTimeout(timer);
      resolve(false);
    };
    const timer = setTimeout(
      () => {
        signal?.removeEventListener('abort', onAbort);
        resolve(true);
      },
      Math.min(ms, MAX_TIMER_MS),
    );
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
