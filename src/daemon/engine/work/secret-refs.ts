/**
 * A serviceTask's `{secret.NAME}` references. When the step decides the call, each resolves to
 * a stand-in made for this call alone (random: no variable's value can forge one, so a value a
 * caller sent cannot pull a secret into a request); the call holds the stand-ins, never a value.
 * As the call goes out (work-runner.ts) each stand-in is replaced by the secret's value, opened
 * then; the values are hidden in what the call logs, and taken out of what comes back (a server
 * that echoes a token): `[secret NAME]` stands where one was. A value is never kept.
 */
import { randomBytes } from 'node:crypto';
import type { HttpCall } from '../../outbound/http-request.js';
import type { WorkResult } from '../../outbound/result.js';

/** The stand-ins of one call: made as `{secret.NAME}` references resolve. */
export class SecretRefs {
  /** Stand-in -> the secret's name. */
  readonly byToken: Record<string, string> = {};

  /** The stand-in for secret `name` in this call (one per name). */
  readonly token = (name: string): string => {
    for (const [t, n] of Object.entries(this.byToken)) if (n === name) return t;
    const t = `wfxsecret${randomBytes(12).toString('hex')}`;
    this.byToken[t] = name;
    return t;
  };

  /** Whether any reference resolved. */
  get used(): boolean {
    return Object.keys(this.byToken).length > 0;
  }
}

/** `value` with every string's `from` texts replaced as `replace` says (deeply; objects and arrays copied). */
function replaceDeep(value: unknown, replace: (text: string) => string): unknown {
  if (typeof value === 'string') return replace(value);
  if (Array.isArray(value)) return value.map((v) => replaceDeep(v, replace));
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[replace(k)] = replaceDeep(v, replace);
    return out;
  }
  return value;
}

/** A text with each of `pairs`' first members replaced by its second. */
function replacer(pairs: ReadonlyArray<readonly [string, string]>): (text: string) => string {
  return (text) => {
    for (const [from, to] of pairs) if (from !== '' && text.includes(from)) text = text.replaceAll(from, to);
    return text;
  };
}

/**
 * `call` with its stand-ins replaced by the values (`values`: stand-in -> value), and the values
 * added to what its log hides.
 */
export function withSecretValues(call: HttpCall, values: ReadonlyMap<string, string>): HttpCall {
  const fill = replacer([...values]);
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(call.headers ?? {})) headers[k] = fill(v);
  return {
    ...call,
    url: fill(call.url),
    headers,
    ...(call.query !== undefined && { query: replaceDeep(call.query, fill) as Record<string, unknown> }),
    ...(call.body !== undefined && { body: replaceDeep(call.body, fill) }),
    redact: [...(call.redact ?? []), ...[...values.values()].filter((v) => v !== '')],
  };
}

/** `call` with each stand-in written `[secret NAME]`: what a trace shows of it. */
export function withSecretNames(call: HttpCall): HttpCall {
  if (call.secrets === undefined) return call;
  const name = replacer(Object.entries(call.secrets).map(([token, n]) => [token, `[secret ${n}]`] as const));
  return { ...call, url: name(call.url) };
}

/** What writes each secret value in `named` (value -> name) as `[secret NAME]` in a text. */
export function secretNamer(named: ReadonlyMap<string, string>): (text: string) => string {
  const pairs = [...named].map(([value, name]) => [value, `[secret ${name}]`] as const);
  // Longest first: a value that holds another is replaced whole.
  pairs.sort((a, b) => b[0].length - a[0].length);
  return replacer(pairs);
}

/** `result` with every secret value in `named` (value -> name) written `[secret NAME]`: its value, message and logs. */
export function withoutSecretValues(result: WorkResult, named: ReadonlyMap<string, string>): WorkResult {
  const scrub = secretNamer(named);
  const logs = result.logs?.map(scrub);
  if (result.ok) return { ...result, value: replaceDeep(result.value, scrub), ...(logs && { logs }) };
  return { ...result, message: scrub(result.message), ...(logs && { logs }) };
}

/** `value` (a job's input) with each stand-in replaced by its secret's value (`values`: stand-in -> value). */
export function withValuesIn(value: unknown, values: ReadonlyMap<string, string>): unknown {
  return replaceDeep(value, replacer([...values]));
}

/** `value` (what a worker sends back) with each secret value in `named` (value -> name) written `[secret NAME]`. */
export function withNamesIn(value: unknown, named: ReadonlyMap<string, string>): unknown {
  return replaceDeep(value, secretNamer(named));
}
