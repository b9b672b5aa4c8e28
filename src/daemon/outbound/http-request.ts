/**
 * A serviceTask's HTTP call as the flow describes it, and its checked, ready-to-send form:
 * method, URL with query, headers, body, timeout, retry policy and accepted statuses. A call
 * that cannot be sent is refused here, before any attempt (HTTP_BAD_REQUEST in http.ts).
 */
import { errorMessage } from '../../shared/errors.js';

/** Characters allowed in an HTTP method (RFC 9110's token). */
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

/** The retry policy of a serviceTask that names none. */
export const DEFAULT_RETRY = { maxAttempts: 3, initialIntervalMs: 1000, backoff: 2, maxIntervalMs: 60000 } as const;

/** The longest delay setTimeout takes. */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/** A serviceTask's HTTP call, its expressions already evaluated. */
export interface HttpCall {
  readonly method: string;
  readonly url: string;
  readonly headers?: Readonly<Record<string, string>>;
  /** Appended to the URL's search params (arrays: repeated keys; objects: JSON; null/undefined: skipped). */
  readonly query?: Readonly<Record<string, unknown>>;
  /** A string is sent as is; anything else as JSON (content-type application/json unless given); absent/null: no body. */
  readonly body?: unknown;
  /** Per attempt, covering the reading of the response body too. */
  readonly timeoutMs: number;
  readonly retry: {
    readonly maxAttempts: number;
    readonly initialIntervalMs: number;
    readonly backoff: number;
    readonly maxIntervalMs?: number;
  };
  /** Values (credentials) shown as `***` wherever the log would show them. */
  readonly redact?: readonly string[];
  /**
   * The `{secret.NAME}` stand-ins the call holds, stand-in -> NAME (engine/work/secret-refs.ts):
   * the work runner puts the values in place as the call goes out.
   */
  readonly secrets?: Readonly<Record<string, string>>;
  /** e.g. [200, 404, "2xx", "3xx"]; default ["2xx"]. When a 3xx is accepted, redirects are not followed. */
  readonly acceptStatus?: readonly (number | string)[];
}

/** A call checked and ready to send. */
export interface Prepared {
  readonly method: string;
  readonly url: string;
  /** origin + path: what messages show (no credentials, no query; `redact` values hidden). */
  readonly shownUrl: string;
  /** shownUrl with its query, credential-looking values as `***`: what the execution log shows. */
  readonly loggedUrl: string;
  readonly headers: Headers;
  readonly body: string | undefined;
  readonly redirect: 'manual' | 'follow';
  readonly timeoutMs: number;
  readonly maxAttempts: number;
  readonly initialIntervalMs: number;
  readonly backoff: number;
  readonly maxIntervalMs: number | undefined;
  readonly accept: (status: number) => boolean;
}

/** A call that cannot be sent: its message says why. */
export class BadRequest extends Error {}

/** Checks `call` and builds what each attempt sends. Throws BadRequest. */
export function prepare(call: HttpCall): Prepared {
  if (call === null || typeof call !== 'object') throw new BadRequest('the call is not an object');
  const method = String(call.method ?? '')
    .trim()
    .toUpperCase();
  if (!TOKEN.test(method)) throw new BadRequest(`invalid method ${JSON.stringify(call.method)}`);

  let url: URL;
  try {
    url = new URL(String(call.url));
  } catch {
    throw new BadRequest(`invalid URL ${JSON.stringify(call.url)}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new BadRequest(`unsupported URL scheme ${JSON.stringify(url.protocol.slice(0, -1))} (only http and https)`);
  }

  const headers = new Headers();
  for (const [name, value] of Object.entries(call.headers ?? {})) {
    if (value === undefined || value === null) continue;
    try {
      headers.append(name, String(value));
    } catch {
      throw new BadRequest(`invalid header ${JSON.stringify(name)}`);
    }
  }
  // fetch refuses URLs with credentials: turn them into basic auth unless authorization is given.
  if (url.username !== '' || url.password !== '') {
    if (!headers.has('authorization')) {
      const user = decodeURIComponent(url.username);
      const password = decodeURIComponent(url.password);
      headers.set('authorization', `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`);
    }
    url.username = '';
    url.password = '';
  }

  for (const [key, value] of Object.entries(call.query ?? {})) {
    for (const item of Array.isArray(value) ? value : [value]) {
      const text = queryValue(item);
      if (text !== undefined) url.searchParams.append(key, text);
    }
  }

  let body: string | undefined;
  if (call.body !== undefined && call.body !== null) {
    if (typeof call.body === 'string') body = call.body;
    else {
      try {
        body = JSON.stringify(call.body);
      } catch (err) {
        throw new BadRequest(`the body cannot be sent as JSON: ${errorMessage(err)}`);
      }
      if (body !== undefined && !headers.has('content-type')) headers.set('content-type', 'application/json');
    }
  }
  if (body !== undefined && (method === 'GET' || method === 'HEAD'))
    throw new BadRequest(`a ${method} request cannot have a body`);

  const timeoutMs = Number(call.timeoutMs);
  if (!Number.isFinite(timeoutMs) || timeoutMs <= 0)
    throw new BadRequest(`invalid timeoutMs ${JSON.stringify(call.timeoutMs)}`);
  const retry = call.retry ?? DEFAULT_RETRY;
  const maxAttempts = Math.floor(Number(retry.maxAttempts));
  const initialIntervalMs = Number(retry.initialIntervalMs);
  const backoff = Number(retry.backoff);
  const maxIntervalMs =
    retry.maxIntervalMs === undefined || retry.maxIntervalMs === null ? undefined : Number(retry.maxIntervalMs);
  if (!Number.isFinite(maxAttempts) || maxAttempts < 1)
    throw new BadRequest(`invalid retry.maxAttempts ${JSON.stringify(retry.maxAttempts)}`);
  if (!Number.isFinite(initialIntervalMs) || initialIntervalMs < 0)
    throw new BadRequest(`invalid retry.initialIntervalMs ${JSON.stringify(retry.initialIntervalMs)}`);
  if (!Number.isFinite(backoff) || backoff <= 0)
    throw new BadRequest(`invalid retry.backoff ${JSON.stringify(retry.backoff)}`);
  if (maxIntervalMs !== undefined && (!Number.isFinite(maxIntervalMs) || maxIntervalMs < 0)) {
    throw new BadRequest(`invalid retry.maxIntervalMs ${JSON.stringify(retry.maxIntervalMs)}`);
  }

  const { accept, acceptsRedirect } = acceptance(call.acceptStatus ?? ['2xx']);

  const shownUrl = hidden(`${url.origin}${url.pathname}`, call.redact);
  const loggedUrl = hidden(shownUrl + redactedQuery(url.searchParams), call.redact);
  const href = url.href;
  // Let fetch itself validate the rest (header values, method/body combinations) before any attempt.
  try {
    new Request(href, { method, headers, ...(body !== undefined && { body }) });
  } catch (err) {
    throw new BadRequest(errorMessage(err));
  }
  return {
    method,
    url: href,
    shownUrl,
    loggedUrl,
    headers,
    body,
    redirect: acceptsRedirect ? 'manual' : 'follow',
    timeoutMs: Math.min(timeoutMs, MAX_TIMER_MS),
    maxAttempts,
    initialIntervalMs,
    backoff,
    maxIntervalMs,
    accept,
  };
}

/** `text` with each of `values` (as given or URL-encoded) shown as `***`. */
function hidden(text: string, values: readonly string[] = []): string {
  for (const value of values) text = text.replaceAll(value, '***').replaceAll(encodeURIComponent(value), '***');
  return text;
}

/** Query parameter names whose values are credentials (api_key, access_token, sig, password...). */
const CREDENTIAL_PARAM = /key|token|secret|pass|pwd|auth|sig|credential|session|cookie|otp/i;

/** `?a=1&token=***`: the query as the log shows it, a credential-looking parameter's value hidden. */
export function redactedQuery(params: URLSearchParams): string {
  const shown = new URLSearchParams();
  for (const [name, value] of params) shown.append(name, CREDENTIAL_PARAM.test(name) ? '***' : value);
  const text = shown.toString().replaceAll('%2A%2A%2A', '***');
  return text === '' ? '' : `?${text}`;
}

function queryValue(value: unknown): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') return String(value);
  if (value instanceof Date) return Number.isNaN(value.getTime()) ? undefined : value.toISOString();
  try {
    return JSON.stringify(value);
  } catch (err) {
    throw new BadRequest(`a query value cannot be encoded: ${errorMessage(err)}`);
  }
}

function acceptance(patterns: readonly (number | string)[]): {
  accept: (status: number) => boolean;
  acceptsRedirect: boolean;
} {
  if (!Array.isArray(patterns)) throw new BadRequest('acceptStatus is not a list');
  const exact = new Set<number>();
  const classes = new Set<number>();
  for (const pattern of patterns) {
    const text = String(pattern).trim().toLowerCase();
    let m: RegExpExecArray | null;
    if ((m = /^([1-5])xx$/.exec(text))) classes.add(Number(m[1]));
    else if (/^[1-5]\d\d$/.test(text)) exact.add(Number(text));
    else throw new BadRequest(`invalid acceptStatus entry ${JSON.stringify(pattern)}`);
  }
  return {
    accept: (status) => exact.has(status) || classes.has(Math.floor(status / 100)),
    acceptsRedirect: classes.has(3) || [...exact].some((s) => s >= 300 && s < 400),
  };
}
