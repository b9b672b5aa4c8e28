import { errorMessage } from '../shared/errors.js';
/** How a handler fails a job on purpose, and how any thrown value becomes a job failure. */

/** A worker's error code: what the daemon accepts (an error boundary event's `errorCode`). */
const CODE = /^[A-Z][A-Z0-9_]{0,99}$/;

/**
 * A handler's failure with a code of its own: `CARD_DECLINED` (the node fails with it once no
 * attempt is left, so an error boundary event can catch it). `retry: false` fails the node at
 * once (a business error no retry cures); `backoffMs` sets the wait before the next attempt.
 */
export class JobError extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly options: { readonly retry?: boolean; readonly backoffMs?: number } = {},
  ) {
    super(message);
    this.name = 'JobError';
    if (!CODE.test(code)) throw new TypeError(`a job error code is A-Z, 0-9 and _, starting with a letter: ${code}`);
  }
}

/** What a thrown value fails the job with: a JobError as it says, else WORKER_ERROR with its message. Pure. */
export function failureOf(err: unknown): {
  readonly code: string;
  readonly message: string;
  readonly retry: boolean;
  readonly backoffMs?: number;
} {
  if (err instanceof JobError)
    return {
      code: err.code,
      message: err.message,
      retry: err.options.retry !== false,
      ...(err.options.backoffMs !== undefined && { backoffMs: err.options.backoffMs }),
    };
  const code = (err as { code?: unknown } | null)?.code;
  const message = errorMessage(err).slice(0, 10_000);
  return { code: typeof code === 'string' && CODE.test(code) ? code : 'WORKER_ERROR', message, retry: true };
}
