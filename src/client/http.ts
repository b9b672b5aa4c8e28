import { setTimeout as sleep } from 'node:timers/promises';
import { WfxError, type ErrorCode, ERROR_CODES } from '../shared/errors.js';
import type { Call } from '../shared/api/calls/call.js';
import { parseSse, type SseEvent } from '../shared/sse.js';

/** Where the daemon is and who is asking. */
export interface Connection {
  readonly url: string;
  readonly apiKey: string | null;
  /** Which credential source won, for messages ("--api-key", "WFX_API_KEY", ...). */
  readonly credentialSource: string;
}

export { path, withQuery } from '../shared/api/calls/call.js';

/**
 * The transport of the daemon's HTTP API (WfxClient in client.ts builds its typed methods on
 * it). Every failure is a WfxError: the daemon's own error code when it answered,
 * DAEMON_UNREACHABLE when it did not, UNAUTHORIZED with a hint naming the credential that was
 * tried.
 */
export class ApiClient {
  constructor(readonly connection: Connection) {}

  /**
   * Sends a JSON request; resolves with the parsed answer of a 2xx. `signal` gives up waiting
   * (the promise rejects with the AbortError) until the answer begins; an answer already begun
   * is read to its end, because what it says may already have happened on the daemon (the jobs
   * a long poll locked are the caller's to give back, not to drop).
   */
  async request<T = Record<string, unknown>>(
    method: string,
    path: string,
    body?: unknown,
    signal?: AbortSignal,
  ): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      const waiting = new AbortController();
      const giveUp = (): void => waiting.abort(signal?.reason);
      if (signal?.aborted) giveUp();
      else signal?.addEventListener('abort', giveUp, { once: true });
      let res: Response;
      try {
        res = await this.fetch(path, {
          method,
          headers: { ...(body !== undefined && { 'content-type': 'application/json' }) },
          ...(body !== undefined && { body: JSON.stringify(body) }),
          ...(signal && { signal: waiting.signal }),
        });
      } finally {
        signal?.removeEventListener('abort', giveUp);
      }
      const text = await res.text();
      let parsed: unknown = null;
      try {
        parsed = text === '' ? null : JSON.parse(text);
      } catch {
        parsed = null;
      }
      if (res.ok) return parsed as T;
      // An event is asked of every daemon of a database: one answered 503 may have reached some
      // already, so whether to send it again is its sender's (a message id makes that safe).
      const again = attempt < RETRIES && !(method === 'POST' && path.startsWith('/process/event'));
      const pause = again ? retryPause(res, parsed) : null;
      if (pause === null) throw this.errorOf(res.status, parsed);
      await sleep(pause, undefined, signal ? { signal } : undefined);
    }
  }

  /** Sends `call` (shared/api/calls); throws like `request`. */
  send<T>(call: Call<T>, signal?: AbortSignal): Promise<T> {
    return this.request<T>(call.method, call.path, call.body, signal);
  }

  /** GET `path`; throws like `request`. */
  get<T = Record<string, unknown>>(path: string): Promise<T> {
    return this.request<T>('GET', path);
  }

  /** POST `body` (default `{}`) to `path`; throws like `request`. */
  post<T = Record<string, unknown>>(path: string, body: unknown = {}): Promise<T> {
    return this.request<T>('POST', path, body);
  }

  /** POSTs `content` as the raw request body with its content type; resolves with the JSON answer of a 2xx. */
  async upload<T>(path: string, content: Uint8Array | ReadableStream<Uint8Array>, contentType: string): Promise<T> {
    const res = await this.fetch(path, {
      method: 'POST',
      headers: { 'content-type': contentType },
      body: content,
      ...(!(content instanceof Uint8Array) && { duplex: 'half' }),
    } as RequestInit);
    const parsed = await jsonOrNull(res);
    if (res.ok) return parsed as T;
    throw this.errorOf(res.status, parsed);
  }

  /** GETs `path` as bytes: the response of a 2xx, to read its body (a download); throws like `request`. */
  async download(path: string, signal?: AbortSignal): Promise<Response> {
    const res = await this.fetch(path, { ...(signal && { signal }) });
    if (res.ok) return res;
    throw this.errorOf(res.status, await jsonOrNull(res));
  }

  /**
   * Reads a Server-Sent Events stream; yields events until it ends. `lastEventId` resumes.
   * Throws like `request` when the stream cannot be opened.
   */
  async *stream(path: string, lastEventId?: string, signal?: AbortSignal): AsyncGenerator<SseEvent> {
    const res = await this.fetch(path, {
      headers: { accept: 'text/event-stream', ...(lastEventId !== undefined && { 'last-event-id': lastEventId }) },
      signal,
    });
    if (!res.ok) {
      const text = await res.text();
      let parsed: unknown = null;
      try {
        parsed = JSON.parse(text);
      } catch {
        parsed = null;
      }
      throw this.errorOf(res.status, parsed);
    }
    for await (const ev of parseSse(res.body!)) if (ev.data !== undefined || ev.event !== undefined) yield ev;
  }

  private async fetch(path: string, init: RequestInit): Promise<Response> {
    const headers = new Headers(init.headers);
    if (this.connection.apiKey) headers.set('x-api-key', this.connection.apiKey);
    try {
      return await fetch(`${this.connection.url}${path}`, { ...init, headers });
    } catch (err) {
      if ((err as Error).name === 'AbortError') throw err;
      const cause = (err as { cause?: { code?: string } }).cause?.code ?? (err as Error).message;
      throw new WfxError('DAEMON_UNREACHABLE', `cannot reach a wfx daemon at ${this.connection.url} (${cause})`);
    }
  }

  private errorOf(status: number, body: unknown): WfxError {
    const b = (body ?? {}) as { error?: string; message?: string; details?: unknown };
    const code = (
      b.error && b.error in ERROR_CODES
        ? b.error
        : status === 401
          ? 'UNAUTHORIZED'
          : status >= 500
            ? 'INTERNAL_ERROR'
            : 'VALIDATION_ERROR'
    ) as ErrorCode;
    const message = b.message ?? `HTTP ${status}`;
    if (code === 'UNAUTHORIZED') {
      const tried = this.connection.apiKey
        ? `the API key from ${this.connection.credentialSource}`
        : 'no credential (none was found)';
      return new WfxError('UNAUTHORIZED', `${message} (tried ${tried})`, { details: b.details, status });
    }
    return new WfxError(code, message, { details: b.details, status });
  }
}

/** Tries of a request the daemon asked to be sent again (retryPause). */
export const RETRIES = 5;

/**
 * Errors a daemon of a database answers before it has done anything (but to an event: see
 * request), with Retry-After: an execution's partition moving between daemons, a daemon
 * restarting to take partition 0, a daemon serving its most connections. The
 * request is sent again after the pause asked (at most 5 s), as Temporal's clients retry
 * "unavailable": a move lasts a load.
 */
const RETRIED = new Set<string>(['PARTITION_MOVING', 'DAEMON_REJOINING', 'TOO_MANY_CONNECTIONS']);

/** Milliseconds to wait before sending the request again, or null if it is not to be. */
export function retryPause(res: Response, body: unknown): number | null {
  const code = (body as { error?: unknown } | null)?.error;
  if (res.status !== 503 || typeof code !== 'string' || !RETRIED.has(code)) return null;
  const header = res.headers.get('retry-after');
  const seconds = header === null ? 1 : Number(header);
  return Math.min(5, Number.isFinite(seconds) && seconds >= 0 ? seconds : 1) * 1000;
}

/** The response's body as JSON, or null when it is empty or not JSON. */
async function jsonOrNull(res: Response): Promise<unknown> {
  const text = await res.text();
  try {
    return text === '' ? null : JSON.parse(text);
  } catch {
    return null;
  }
}
