/*
 * A request of the daemon's HTTP API as data: its method, its path (parameters encoded, query
 * joined) and body, typed by the answer it gets. The calls (calls/index.ts) make these, one
 * function per route, and are the one place a path meets its type; a transport sends them (the
 * CLI's ApiClient over Node's fetch with an API key, the console's over the page's session).
 */

/** The HTTP methods the API's routes take. */
export type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/** One request of the API; `T` is the answer of a 2xx. Plain data: made by the calls, sent by a transport. */
export interface Call<T> {
  readonly method: Method;
  /** The path and its query, each parameter encoded. */
  readonly path: string;
  /** Sent as JSON; undefined: no body. */
  readonly body?: unknown;
  /** Never set: it carries the answer's type to the transport. */
  readonly answer?: T;
}

/**
 * A request path with each `${value}` put in as one path segment (`encodeURIComponent`): an id
 * holding `/`, `?` or `#` reaches the daemon as itself. Every path with a parameter is made
 * here. Pure.
 */
export function path(strings: TemplateStringsArray, ...values: ReadonlyArray<string | number>): string {
  let out = strings[0]!;
  for (let i = 0; i < values.length; i++) out += encodeURIComponent(String(values[i])) + strings[i + 1]!;
  return out;
}

/** `path` plus its querystring: the entries whose value is not undefined (none: no `?`). Pure. */
export function withQuery(
  base: string,
  query: Readonly<Record<string, string | number | boolean | readonly string[] | undefined>> = {},
): string {
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) {
    // A list is the parameter repeated (`where=a=1&where=b=2`).
    if (Array.isArray(v)) for (const each of v as readonly string[]) params.append(k, each);
    else if (v !== undefined) params.set(k, String(v));
  }
  return params.size ? `${base}?${params}` : base;
}

/** GET `path`. Pure. */
export const get = <T>(path: string): Call<T> => ({ method: 'GET', path });

/** POST `body` (default `{}`: the routes without a body still parse one) to `path`. Pure. */
export const post = <T>(path: string, body: unknown = {}): Call<T> => ({ method: 'POST', path, body });

/** Any other method (`body` undefined: none sent). Pure. */
export const call = <T>(method: Method, path: string, body?: unknown): Call<T> =>
  body === undefined ? { method, path } : { method, path, body };

/** What a transport gives: sends a call, resolves with its answer (and rejects as the transport does). */
export type Send = <T>(call: Call<T>) => Promise<T>;

/** A group of calls, each made into a method that sends its call and resolves with the answer. */
export type Sent<G> = {
  readonly [K in keyof G]: G[K] extends (...args: infer A) => Call<infer T> ? (...args: A) => Promise<T> : never;
};

/** `group` with each call sent through `send` (read at each call, so it may be set after this is made). */
export function sent<G extends Readonly<Record<string, (...args: never[]) => Call<unknown>>>>(
  group: G,
  send: Send,
): Sent<G> {
  const out: Record<string, (...args: never[]) => Promise<unknown>> = {};
  for (const [name, make] of Object.entries(group)) out[name] = (...args) => send(make(...args));
  return out as Sent<G>;
}
