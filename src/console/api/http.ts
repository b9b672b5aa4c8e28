/*
 * The console's transport of the daemon's HTTP API: it sends the typed calls of
 * shared/api/calls (the one place a path meets its answer's type) from the same origin, the
 * session cookie sent by the browser (the page never sees a credential), JSON both ways. A 401
 * sends the page to sign in and back.
 */
import { calls, type Call } from '../../shared/api/calls/index.js';
import type { ErrorBody } from '../../shared/api/common.js';

/** An answer that was not 2xx: its status and the catalogue code of its error body. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    /** The error body's `details`, when it has them (a move's problems). */
    readonly details?: Readonly<Record<string, unknown>>,
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

/** `err` as an Error to show (what a rejected promise holds need not be one). Pure. */
export function asError(err: unknown): Error {
  return err instanceof Error ? err : new Error(String(err));
}

/** The page to sign in at, coming back to `returnTo` (the current page by default). */
export function signInUrl(returnTo = `${location.pathname}${location.search}`): string {
  return returnTo.startsWith('/sign-in') ? '/sign-in' : `/sign-in?returnTo=${encodeURIComponent(returnTo)}`;
}

/** Leaves for the sign-in page, to come back here after (once, however many calls answered 401). */
let leaving = false;
export function toSignIn(): void {
  if (leaving || location.pathname === '/sign-in') return;
  leave(signInUrl());
}

/**
 * Leaves the console for `url` (sign-out's): a read answered 401 meanwhile then leaves for the
 * sign-in page no more, which would start a second navigation that aborts this one.
 */
export function leave(url: string): void {
  leaving = true;
  location.assign(url);
}

/** Options of `send`. */
export interface SendOptions {
  readonly signal?: AbortSignal;
  /** Answer a 401 with an ApiError instead of leaving for the sign-in page (the sign-in page's own calls). */
  readonly keep401?: boolean;
}

/**
 * Sends `call` and resolves with the parsed JSON answer. Rejects with ApiError for an answer that
 * is not 2xx (its error body's code, or `HTTP_<status>`); on a 401 it also leaves for the sign-in
 * page unless `keep401`. A network failure rejects as fetch's.
 */
export async function send<T>(call: Call<T>, options: SendOptions = {}): Promise<T> {
  const res = await fetch(call.path, {
    method: call.method,
    credentials: 'same-origin',
    headers: {
      accept: 'application/json',
      ...(call.body !== undefined && { 'content-type': 'application/json' }),
    },
    ...(call.body !== undefined && { body: JSON.stringify(call.body) }),
    ...(options.signal && { signal: options.signal }),
  });
  const json = jsonOf(await res.text());
  if (!res.ok) throw refusal(res.status, res.statusText, json, options.keep401 ?? false);
  return json as T;
}

/** `text` parsed, or undefined when it is empty or not JSON (a proxy's page: the status speaks for it). Pure. */
export function jsonOf(text: string): unknown {
  try {
    return text === '' ? undefined : JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** The ApiError of an answer that is not 2xx; a 401 also leaves for the sign-in page unless `keep401`. */
export function refusal(status: number, statusText: string, json: unknown, keep401: boolean): ApiError {
  if (status === 401 && !keep401) toSignIn();
  const body = json as Partial<ErrorBody> | undefined;
  return new ApiError(
    status,
    body?.error ?? `HTTP_${status}`,
    body?.message ?? statusText,
    body?.details as Readonly<Record<string, unknown>> | undefined,
  );
}

/** Whether the daemon still takes the session: a stream that closed may have lost it (a 401 leaves for sign-in). */
export async function checkSession(): Promise<void> {
  await send(calls.auth.whoami()).catch(() => undefined);
}
