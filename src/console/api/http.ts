/*
 * The console's one way to the daemon's HTTP API: same origin, the session cookie sent by the
 * browser (the page never sees a credential), JSON both ways. A 401 sends the page to sign in
 * and back.
 */
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

/** Options of `api`. */
export interface ApiOptions {
  readonly method?: 'GET' | 'POST' | 'PUT' | 'DELETE';
  /** Sent as JSON. */
  readonly body?: unknown;
  readonly signal?: AbortSignal;
  /** Answer a 401 with an ApiError instead of leaving for the sign-in page (the sign-in page's own calls). */
  readonly keep401?: boolean;
}

/**
 * Calls the API at `path` (with its query) and resolves with the parsed JSON answer. Rejects
 * with ApiError for an answer that is not 2xx (its error body's code, or `HTTP_<status>`); on a
 * 401 it also leaves for the sign-in page unless `keep401`. A network failure rejects as fetch's.
 */
export async function api<T>(path: string, options: ApiOptions = {}): Promise<T> {
  const res = await fetch(path, {
    method: options.method ?? 'GET',
    credentials: 'same-origin',
    headers: {
      accept: 'application/json',
      ...(options.body !== undefined && { 'content-type': 'application/json' }),
    },
    ...(options.body !== undefined && { body: JSON.stringify(options.body) }),
    ...(options.signal && { signal: options.signal }),
  });
  const text = await res.text();
  let json: unknown = undefined;
  try {
    json = text === '' ? undefined : JSON.parse(text);
  } catch {
    // Not JSON (a proxy's page): the status speaks for it.
  }
  if (!res.ok) {
    if (res.status === 401 && !options.keep401) toSignIn();
    const body = json as Partial<ErrorBody> | undefined;
    throw new ApiError(
      res.status,
      body?.error ?? `HTTP_${res.status}`,
      body?.message ?? res.statusText,
      body?.details as Readonly<Record<string, unknown>> | undefined,
    );
  }
  return json as T;
}

/** `/a/{id}` with each id encoded as one path segment. */
export function path(strings: TemplateStringsArray, ...ids: readonly string[]): string {
  return strings.reduce((out, s, i) => out + s + (i < ids.length ? encodeURIComponent(ids[i]!) : ''), '');
}

/** Whether the daemon still takes the session: a stream that closed may have lost it (a 401 leaves for sign-in). */
export async function checkSession(): Promise<void> {
  await api('/auth/whoami').catch(() => undefined);
}
