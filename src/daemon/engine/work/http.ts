/**
 * The HTTP call of a serviceTask: one request with Node's built-in fetch, a timeout per attempt,
 * retries with exponential backoff (honouring Retry-After on 429/503), cancellation by an
 * AbortSignal. It never throws: every outcome is a WorkResult with a stable code.
 *
 * Every connection, redirects included, goes through a NetworkPolicy (outbound/network-policy.ts).
 *
 * Codes: HTTP_<status> (status not accepted), HTTP_TIMEOUT, HTTP_NETWORK, HTTP_BAD_REQUEST
 * (invalid spec, no attempt made), HTTP_RESPONSE_TOO_LARGE, HTTP_FORBIDDEN_ADDRESS (the policy
 * refused an address; not retried), CANCELLED.
 */
import type { NodeFailureCode } from '../../../shared/flow/failure-codes.js';
import { errorMessage } from '../../../shared/errors.js';
import { prepare, type HttpCall, type Prepared } from '../../outbound/http-request.js';
import { FORBIDDEN_ADDRESS, forbiddenIn, NetworkPolicy } from '../../outbound/network-policy.js';
import type { WorkResult } from '../../outbound/result.js';
import { formatMs, parseRetryAfter, retryDelayMs, sleep } from '../../outbound/retry.js';

export type { HttpCall } from '../../outbound/http-request.js';

export interface HttpCallOptions {
  /** Cancellation of the node: aborts the request and any backoff wait; the result code is CANCELLED. */
  readonly signal?: AbortSignal;
  /** Called before each retry wait (the engine writes it to the execution log). */
  readonly onRetry?: (info: { attempt: number; reason: string; delayMs: number }) => void;
  /** Where the call may connect; default the built-in rules alone (no --http-deny/--http-allow, no own listener). */
  readonly network?: NetworkPolicy;
  /** A W3C `traceparent` sent with each attempt (tracing on: the call's client span); it replaces one the flow set. */
  readonly traceparent?: string;
  /**
   * Answers each attempt instead of the network (a flow test's mock, flow-tests/): `attempt`
   * counts from 1. The answer goes through what a real response does: accepted statuses,
   * retries, failure codes and messages.
   */
  readonly reply?: (attempt: number) => HttpReply | Promise<HttpReply>;
  /** Waits before a retry (default: the time itself); resolves false when cancelled meanwhile. A flow test's clock waits no time. */
  readonly wait?: (ms: number, signal: AbortSignal | undefined) => Promise<boolean>;
}

/** What `HttpCallOptions.reply` answers an attempt with: a response, no answer in time, or a failed connection. */
export type HttpReply =
  | {
      readonly status: number;
      readonly headers?: Readonly<Record<string, string | readonly string[]>>;
      readonly body?: unknown;
    }
  | { readonly timeout: true }
  | { readonly network: string };

let builtInPolicy: NetworkPolicy | null = null;

export interface HttpResponseValue {
  readonly status: number;
  /** Lower-case names; set-cookie is a string[] (as in node:http), every other value a string. */
  readonly headers: Record<string, string | string[]>;
  /** Parsed JSON when the content-type is JSON and it parses, else the text. */
  readonly body: unknown;
}

/** Largest response body read on an accepted status. */
export const MAX_RESPONSE_BYTES = 10 * 1024 * 1024;
/** Bytes of a non-accepted response read for the error excerpt. */
const EXCERPT_READ_BYTES = 64 * 1024;
const EXCERPT_CHARS = 200;

type Outcome =
  | { readonly kind: 'ok'; readonly value: HttpResponseValue }
  | {
      readonly kind: 'status';
      readonly status: number;
      readonly statusText: string;
      readonly excerpt: string;
      readonly retryAfterMs?: number;
    }
  | { readonly kind: 'timeout' }
  | { readonly kind: 'network'; readonly detail: string }
  | { readonly kind: 'cancelled' }
  | { readonly kind: 'fatal'; readonly code: NodeFailureCode; readonly message: string };

/** Makes the call, retrying as its policy says. Never throws: every outcome is a WorkResult. */
export async function callHttp(call: HttpCall, options: HttpCallOptions = {}): Promise<WorkResult> {
  const logs: string[] = [];
  try {
    let prepared: Prepared;
    try {
      prepared = prepare(call);
    } catch (err) {
      return { ok: false, code: 'HTTP_BAD_REQUEST', message: `invalid HTTP call: ${errorMessage(err)}` };
    }
    const p = prepared;
    if (options.traceparent !== undefined) p.headers.set('traceparent', options.traceparent);
    const signal = options.signal;
    const dispatcher = (options.network ?? (builtInPolicy ??= new NetworkPolicy())).dispatcher();
    const cancelled = (): WorkResult => ({
      ok: false,
      code: 'CANCELLED',
      message: `${p.method} ${p.shownUrl} cancelled${reasonSuffix(signal)}`,
      ...(logs.length > 0 && { logs }),
    });

    for (let attempt = 1; ; attempt++) {
      if (signal?.aborted) return cancelled();
      const began = performance.now();
      const outcome = options.reply
        ? replied(await options.reply(attempt), p)
        : await attemptOnce(p, signal, dispatcher);
      if (outcome.kind === 'ok') {
        const ms = Math.round(performance.now() - began);
        const nth = attempt > 1 ? ` (attempt ${attempt})` : '';
        logs.push(`${p.method} ${p.loggedUrl} → ${outcome.value.status} in ${ms} ms${nth}`);
        return { ok: true, value: outcome.value, logs };
      }
      if (outcome.kind === 'cancelled') return cancelled();
      if (outcome.kind === 'fatal') {
        logs.push(`attempt ${attempt}: ${outcome.message}`);
        return { ok: false, code: outcome.code, message: outcome.message, logs, attempts: attempt };
      }

      const reason = describe(outcome, p);
      const retryable = outcome.kind !== 'status' || outcome.status === 429 || outcome.status >= 500;
      if (!retryable || attempt >= p.maxAttempts) {
        logs.push(`attempt ${attempt}: ${reason}${retryable ? ', giving up' : ''}`);
        return { ok: false, ...failure(outcome, p, attempt), logs, attempts: attempt };
      }

      const delayMs = retryDelayMs(p, attempt, outcome.kind === 'status' ? outcome.retryAfterMs : undefined);
      logs.push(`attempt ${attempt}: ${reason}, retrying in ${formatMs(delayMs)}`);
      try {
        options.onRetry?.({ attempt, reason, delayMs });
      } catch {
        // a failing observer must not fail the call
      }
      if (!(await (options.wait ?? sleep)(delayMs, signal))) return cancelled();
    }
  } catch (err) {
    // Defensive: nothing above is expected to throw.
    return {
      ok: false,
      code: 'HTTP_NETWORK',
      message: `unexpected error: ${errorMessage(err)}`,
      ...(logs.length > 0 && { logs }),
    };
  }
}

async function attemptOnce(p: Prepared, signal: AbortSignal | undefined, dispatcher: object): Promise<Outcome> {
  const controller = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort(new Error('timeout'));
  }, p.timeoutMs);
  const onAbort = (): void => controller.abort(signal?.reason);
  signal?.addEventListener('abort', onAbort, { once: true });
  const interrupted = (): Outcome | undefined =>
    signal?.aborted ? { kind: 'cancelled' } : timedOut ? { kind: 'timeout' } : undefined;
  try {
    let res: Response;
    try {
      res = await fetch(p.url, {
        method: p.method,
        headers: p.headers,
        ...(p.body !== undefined && { body: p.body }),
        redirect: p.redirect,
        signal: controller.signal,
        dispatcher,
      } as RequestInit);
    } catch (err) {
      const forbidden = forbiddenIn(err);
      if (forbidden)
        return {
          kind: 'fatal',
          code: FORBIDDEN_ADDRESS,
          message: `${p.method} ${p.shownUrl} refused by the network policy: ${forbidden.message}`,
        };
      return interrupted() ?? { kind: 'network', detail: networkDetail(err) };
    }

    if (!p.accept(res.status)) {
      let excerpt = '';
      try {
        const { bytes } = await readBody(res, EXCERPT_READ_BYTES, true);
        excerpt = shorten(decode(bytes, res.headers.get('content-type')));
      } catch {
        // the excerpt is best effort; a cancellation still wins below
      }
      if (signal?.aborted) return { kind: 'cancelled' };
      const retryAfterMs =
        res.status === 429 || res.status === 503 ? parseRetryAfter(res.headers.get('retry-after')) : undefined;
      return {
        kind: 'status',
        status: res.status,
        statusText: res.statusText,
        excerpt,
        ...(retryAfterMs !== undefined && { retryAfterMs }),
      };
    }

    const declared = Number(res.headers.get('content-length') ?? NaN);
    if (Number.isFinite(declared) && declared > MAX_RESPONSE_BYTES) {
      void res.body?.cancel().catch(() => undefined);
      return tooLarge(p, res.status);
    }
    let bytes: Uint8Array;
    try {
      const read = await readBody(res, MAX_RESPONSE_BYTES, false);
      if (read.truncated) return tooLarge(p, res.status);
      bytes = read.bytes;
    } catch (err) {
      return interrupted() ?? { kind: 'network', detail: networkDetail(err) };
    }
    const contentType = res.headers.get('content-type');
    const text = decode(bytes, contentType);
    let body: unknown = text;
    if (isJson(contentType)) {
      try {
        body = JSON.parse(text);
      } catch {
        body = text;
      }
    }
    return { kind: 'ok', value: { status: res.status, headers: plainHeaders(res.headers), body } };
  } finally {
    clearTimeout(timer);
    signal?.removeEventListener('abort', onAbort);
  }
}

/** The outcome of an attempt answered by `reply` (HttpCallOptions.reply), as attemptOnce would make it of the same response. */
function replied(reply: HttpReply, p: Prepared): Outcome {
  if ('timeout' in reply) return { kind: 'timeout' };
  if ('network' in reply) return { kind: 'network', detail: reply.network };
  const headers: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(reply.headers ?? {}))
    headers[name.toLowerCase()] = typeof value === 'string' ? value : [...value];
  const body = reply.body ?? '';
  if (!p.accept(reply.status)) {
    const header = (name: string) => {
      const v = headers[name];
      return typeof v === 'string' ? v : null;
    };
    const retryAfterMs =
      reply.status === 429 || reply.status === 503 ? parseRetryAfter(header('retry-after')) : undefined;
    return {
      kind: 'status',
      status: reply.status,
      statusText: '',
      excerpt: shorten(typeof body === 'string' ? body : JSON.stringify(body)),
      ...(retryAfterMs !== undefined && { retryAfterMs }),
    };
  }
  if (typeof body !== 'string' && headers['content-type'] === undefined) headers['content-type'] = 'application/json';
  return { kind: 'ok', value: { status: reply.status, headers, body } };
}

function tooLarge(p: Prepared, status: number): Outcome {
  return {
    kind: 'fatal',
    code: 'HTTP_RESPONSE_TOO_LARGE',
    message: `${p.method} ${p.shownUrl} answered ${status} with a body larger than ${MAX_RESPONSE_BYTES / 1024 / 1024} MiB`,
  };
}

/**
 * Reads at most `limit` bytes. Beyond it: `truncated` is set, the rest is cancelled. With
 * `lenient`, the bytes read so far are returned rather than an error when the stream fails.
 */
async function readBody(
  res: Response,
  limit: number,
  lenient: boolean,
): Promise<{ bytes: Uint8Array; truncated: boolean }> {
  if (res.body === null) return { bytes: new Uint8Array(0), truncated: false };
  const reader = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  let truncated = false;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      if (size + value.byteLength > limit) {
        chunks.push(value.subarray(0, limit - size));
        size = limit;
        truncated = true;
        void reader.cancel().catch(() => undefined);
        break;
      }
      chunks.push(value);
      size += value.byteLength;
    }
  } catch (err) {
    if (!lenient) throw err;
  } finally {
    reader.releaseLock();
  }
  return { bytes: Buffer.concat(chunks, size), truncated };
}

function decode(bytes: Uint8Array, contentType: string | null): string {
  const charset = /;\s*charset\s*=\s*"?([^";\s]+)/i.exec(contentType ?? '')?.[1];
  try {
    return new TextDecoder(charset ?? 'utf-8').decode(bytes);
  } catch {
    return new TextDecoder('utf-8').decode(bytes);
  }
}

function isJson(contentType: string | null): boolean {
  const media = (contentType ?? '').split(';')[0]!.trim().toLowerCase();
  return media === 'application/json' || media.endsWith('+json');
}

function plainHeaders(headers: Headers): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const [name, value] of headers) {
    if (name !== 'set-cookie') out[name] = value;
  }
  const cookies = headers.getSetCookie();
  if (cookies.length > 0) out['set-cookie'] = cookies;
  return out;
}

function describe(outcome: Exclude<Outcome, { kind: 'ok' | 'cancelled' | 'fatal' }>, p: Prepared): string {
  switch (outcome.kind) {
    case 'status':
      return `HTTP ${outcome.status}`;
    case 'timeout':
      return `timeout (no answer within ${formatMs(p.timeoutMs)})`;
    case 'network':
      return `network error (${outcome.detail})`;
  }
}

function failure(
  outcome: Exclude<Outcome, { kind: 'ok' | 'cancelled' | 'fatal' }>,
  p: Prepared,
  attempts: number,
): { code: NodeFailureCode; message: string } {
  const after = attempts > 1 ? ` (after ${attempts} attempts)` : '';
  switch (outcome.kind) {
    case 'status': {
      const text = outcome.statusText ? ` ${outcome.statusText}` : '';
      const excerpt = outcome.excerpt ? `: ${outcome.excerpt}` : '';
      return {
        code: `HTTP_${outcome.status}`,
        message: `${p.method} ${p.shownUrl} answered ${outcome.status}${text}${after}${excerpt}`,
      };
    }
    case 'timeout':
      return {
        code: 'HTTP_TIMEOUT',
        message: `${p.method} ${p.shownUrl}: no answer within ${formatMs(p.timeoutMs)}${after}`,
      };
    case 'network':
      return { code: 'HTTP_NETWORK', message: `${p.method} ${p.shownUrl} failed: ${outcome.detail}${after}` };
  }
}

/** The most telling code/message in an error's cause chain (fetch wraps them in "fetch failed"). */
function networkDetail(err: unknown): string {
  let deepest: unknown = err;
  const seen = new Set<unknown>();
  let current: unknown = err;
  while (current !== null && typeof current === 'object' && !seen.has(current)) {
    seen.add(current);
    deepest = current;
    const next: unknown =
      (current as { cause?: unknown }).cause ??
      (current instanceof AggregateError && current.errors.length > 0 ? current.errors[0] : undefined);
    current = next;
  }
  const code = deepest !== null && typeof deepest === 'object' ? (deepest as { code?: unknown }).code : undefined;
  const message = errorMessage(deepest);
  if (typeof code === 'string' && code !== '') return message.includes(code) ? message : `${code} ${message}`;
  return message;
}

function reasonSuffix(signal: AbortSignal | undefined): string {
  const reason: unknown = signal?.reason;
  if (reason === undefined) return '';
  if (reason instanceof Error && reason.name === 'AbortError') return '';
  const text = errorMessage(reason);
  return text ? ` (${text})` : '';
}

function shorten(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > EXCERPT_CHARS ? `${flat.slice(0, EXCERPT_CHARS - 1)}…` : flat;
}
