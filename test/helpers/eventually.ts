import { setTimeout as delay } from 'node:timers/promises';
import { errorMessage } from '../../src/shared/errors.js';

/** Bounds of one `eventually()`: how often and how long to look again. */
export interface EventuallyOptions {
  /** Most attempts (default 2000). */
  readonly attempts?: number;
  /** Most time in milliseconds from the first attempt (default 30 000: slow CI machines pass). */
  readonly withinMs?: number;
  /** Pause after the first failed attempt; doubles up to `maxPauseMs` (default 5). */
  readonly pauseMs?: number;
  /** Longest pause between two attempts (default 100). */
  readonly maxPauseMs?: number;
}

/** `T` without its falsy values: what `eventually()` resolves to. */
export type Truthy<T> = Exclude<T, false | 0 | '' | null | undefined>;

/**
 * Looks at state seen from outside (a daemon over HTTP, a file, a server) until `probe` returns
 * a truthy value, and resolves to that value. A probe that throws counts as "not yet". Bounded
 * by `attempts` and `withinMs`: past either it rejects with an error naming `what` and the last
 * thing the probe threw. Never use it where an event says when (an SSE entry, a process exit).
 */
export async function eventually<T>(
  what: string,
  probe: () => T | Promise<T>,
  options: EventuallyOptions = {},
): Promise<Truthy<T>> {
  const attempts = options.attempts ?? 2000;
  const deadline = Date.now() + (options.withinMs ?? 30_000);
  const maxPause = options.maxPauseMs ?? 100;
  let pause = options.pauseMs ?? 5;
  let lastError: unknown = null;
  for (let attempt = 1; ; attempt++) {
    try {
      const value = await settledWithin(probe, deadline);
      if (value) return value as Truthy<T>;
      lastError = null;
    } catch (err) {
      lastError = err;
    }
    if (attempt >= attempts || Date.now() >= deadline) {
      const last = lastError === null ? '' : `; last error: ${errorMessage(lastError)}`;
      throw new Error(`eventually: gave up waiting until ${what} after ${attempt} attempts${last}`);
    }
    await delay(pause);
    pause = Math.min(pause * 2, maxPause);
  }
}

/** `probe()`'s value, or a rejection once `deadline` passes first: a probe that hangs is bounded too. */
async function settledWithin<T>(probe: () => T | Promise<T>, deadline: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error('the probe did not settle in time')), Math.max(0, deadline - Date.now()));
  });
  try {
    return await Promise.race([Promise.resolve().then(probe), late]);
  } finally {
    clearTimeout(timer);
  }
}
