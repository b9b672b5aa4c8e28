/**
 * `{ref}` templates in node properties (these are not JUEL):
 *
 * - `{name}`, `{customer.address.city}`, `{items.0.id}` read flow variables; `{env.NAME}` reads
 *   the environment (`env` as the first segment always means the environment; `{env}` alone is
 *   not a value and counts as missing). `{secret.NAME}` (`secret` likewise) resolves only where
 *   the context gives `secret`, to what it answers for NAME (a serviceTask's stand-in for the
 *   value, filled in as its call goes out: engine/work/secret-refs.ts); elsewhere it is missing. A name starts with a letter or `_` and continues with
 *   letters, digits or `_`; later segments are names or array indexes (digits).
 * - `${...}` is JUEL and is left as is, up to its matching `}` (quotes and nested braces inside
 *   are respected; an unterminated `${` leaves the rest of the text as is).
 * - A string that is exactly one `{ref}` resolves to the value with its type (a deep copy of
 *   objects and arrays); inside longer text strings go in as they are, numbers and booleans via
 *   String(), null as "", objects and arrays as JSON.
 * - A missing reference (absent name or segment, or indexing into a non-object) becomes "" and
 *   is reported. Only own properties are followed, never the prototype chain; on arrays only
 *   canonical indexes below the length (`{items.length}` is missing).
 * - Braces that do not hold a valid reference (`{"a":1}`, `{ name }`, `{1abc}`, `{}`) are left
 *   literally; `\{` yields a literal `{` (so `\{name}` → `{name}`). A backslash before anything
 *   else is an ordinary character.
 */

import { memoByText } from '../memo.js';

/** What templates can reference: flow variables and environment values, and secrets where given. */
export interface TemplateContext {
  readonly vars: Readonly<Record<string, unknown>>;
  readonly env: Readonly<Record<string, string>>;
  /** What `{secret.NAME}` resolves to; absent: it is missing. */
  readonly secret?: (name: string) => string;
}

/** A template split into literal text and references. */
type Piece = { readonly text: string } | { readonly ref: string; readonly path: readonly string[] };

const REF = /\{([A-Za-z_][A-Za-z0-9_]*(?:\.(?:[A-Za-z_][A-Za-z0-9_]*|[0-9]+))*)\}/y;
const INDEX = /^(?:0|[1-9][0-9]*)$/;

/** Index just past the `}` closing a `${` whose body starts at `start`; text.length if none. */
function juelEnd(text: string, start: number): number {
  let depth = 1;
  let quote = '';
  for (let i = start; i < text.length; i++) {
    const c = text[i];
    if (quote !== '') {
      if (c === '\\') i++;
      else if (c === quote) quote = '';
    } else if (c === "'" || c === '"') {
      quote = c;
    } else if (c === '{') {
      depth++;
    } else if (c === '}' && --depth === 0) {
      return i + 1;
    }
  }
  return text.length;
}

/** A template's pieces: parsed once per distinct text (memoized; the pieces are never changed). */
const split = memoByText(splitText);

function splitText(text: string): readonly Piece[] {
  const pieces: Piece[] = [];
  let literal = '';
  let from = 0; // start of the literal run not yet copied into `literal`
  let i = 0;
  const flush = (upTo: number): void => {
    literal += text.slice(from, upTo);
    if (literal !== '') pieces.push({ text: literal });
    literal = '';
  };
  while (i < text.length) {
    const c = text[i];
    const next = text[i + 1];
    if (c === '\\' && next === '{') {
      literal += text.slice(from, i) + '{';
      i += 2;
      from = i;
    } else if (c === '$' && next === '{') {
      i = juelEnd(text, i + 2);
    } else if (c === '{') {
      REF.lastIndex = i;
      const m = REF.exec(text);
      if (m) {
        flush(i);
        pieces.push({ ref: m[1]!, path: m[1]!.split('.') });
        i = from = REF.lastIndex;
      } else {
        i++;
      }
    } else {
      i++;
    }
  }
  flush(text.length);
  return pieces;
}

const MISSING = Symbol('missing');

/** The value at `path`, or MISSING. Own properties only. */
function lookup(segments: readonly string[], ctx: TemplateContext): unknown {
  let root: Readonly<Record<string, unknown>> = ctx.vars;
  let from = 0;
  if (segments[0] === 'secret') return segments.length === 2 && ctx.secret ? ctx.secret(segments[1]!) : MISSING;
  if (segments[0] === 'env') {
    if (segments.length < 2) return MISSING;
    root = ctx.env;
    from = 1;
  }
  const first = segments[from]!;
  if (!Object.hasOwn(root, first)) return MISSING;
  let cur: unknown = root[first];
  for (let k = from + 1; k < segments.length; k++) {
    const seg = segments[k]!;
    if (Array.isArray(cur)) {
      if (!INDEX.test(seg) || Number(seg) >= cur.length) return MISSING;
      cur = cur[Number(seg)];
    } else if (typeof cur === 'object' && cur !== null && Object.hasOwn(cur, seg)) {
      cur = (cur as Record<string, unknown>)[seg];
    } else {
      return MISSING;
    }
  }
  return cur ?? null;
}

function copy(value: unknown): unknown {
  if (typeof value !== 'object' || value === null) return value;
  try {
    return structuredClone(value);
  } catch {
    return value; // not cloneable (holds a function): hand back as is
  }
}

function stringify(value: unknown): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'string') return value;
  if (typeof value !== 'object') return String(value);
  try {
    return JSON.stringify(value);
  } catch {
    return String(value); // a cycle: cannot come from JSON variables
  }
}

/**
 * Resolves the `{ref}` references in one string (see the module comment for the rules). Pure:
 * never mutates `ctx`, and a whole-string reference to an object or array yields a deep copy.
 * Never throws. `missing` lists each missing reference path as written, once per occurrence.
 */
export function resolveTemplate(text: string, ctx: TemplateContext): { value: unknown; missing: string[] } {
  if (!text.includes('{')) return { value: text, missing: [] };
  const pieces = split(text);
  const missing: string[] = [];
  const only = pieces.length === 1 ? pieces[0]! : undefined;
  if (only !== undefined && 'ref' in only) {
    const value = lookup(only.path, ctx);
    if (value !== MISSING) return { value: copy(value), missing };
    return { value: '', missing: [only.ref] };
  }
  let out = '';
  for (const piece of pieces) {
    if ('text' in piece) {
      out += piece.text;
      continue;
    }
    const value = lookup(piece.path, ctx);
    if (value === MISSING) missing.push(piece.ref);
    else out += stringify(value);
  }
  return { value: out, missing };
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null) return false;
  const proto: unknown = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

/**
 * Resolves every string inside `value`, walking arrays and plain objects (own enumerable keys;
 * keys themselves are not resolved). Returns new arrays and objects and never mutates the
 * input; other leaves (numbers, booleans, null, class instances) are returned as they are.
 * Never throws. `missing` collects the missing references of all strings, in document order.
 */
export function resolveDeep(value: unknown, ctx: TemplateContext): { value: unknown; missing: string[] } {
  const missing: string[] = [];
  const walk = (v: unknown): unknown => {
    if (typeof v === 'string') {
      const r = resolveTemplate(v, ctx);
      missing.push(...r.missing);
      return r.value;
    }
    if (Array.isArray(v)) return v.map(walk);
    if (isPlainObject(v)) return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, walk(x)]));
    return v;
  };
  return { value: walk(value), missing };
}

/**
 * The reference paths in `text`, in order and once per occurrence (e.g. `["order.id", "env.URL"]`),
 * ignoring `${...}` regions, escaped braces and braces that hold no valid reference. Pure.
 */
export function findReferences(text: string): string[] {
  if (!text.includes('{')) return [];
  return split(text).flatMap((p) => ('ref' in p ? [p.ref] : []));
}
