/*
 * A flow's `inputs:` read as fields, pure and without Ajv: the CLI and the TUI list them, and
 * the browser console builds its run form from them and checks each typed value before it
 * starts the flow. The console cannot run Ajv (it compiles schemas with `new Function`, which
 * the console's Content-Security-Policy forbids), so a field's own keywords are checked here
 * the way Ajv checks them (a test holds both to the same verdicts), and the daemon's
 * checkInputs (inputs.ts) stays the one that decides: its answer names the field it refused.
 */

/** One parameter of a flow, as a form or a listing shows it. */
export interface InputField {
  readonly name: string;
  /** The schema's `type` (`string`, `integer`, ...; several joined by `|`), or `any`. */
  readonly type: string;
  readonly required: boolean;
  readonly description?: string;
  readonly default?: unknown;
  /** The allowed values (`enum`), when the schema lists them. */
  readonly enum?: readonly unknown[];
}

/** How a form asks for a field: a text box, a number box, a checkbox, a choice, or JSON text. */
export type InputKind = 'text' | 'number' | 'integer' | 'boolean' | 'select' | 'json';

/** A field of a run form: the listing's field, how it is asked, and its own schema. */
export interface FormInput extends InputField {
  readonly kind: InputKind;
  /** The property's schema (its keywords are checked by checkFormValue). */
  readonly schema: Readonly<Record<string, unknown>>;
}

const asSchema = (raw: unknown): Record<string, unknown> =>
  typeof raw === 'object' && raw !== null && !Array.isArray(raw) ? (raw as Record<string, unknown>) : {};

/** The top-level properties of `inputs` as fields, in the schema's order. Pure. */
export function inputFields(inputs: Readonly<Record<string, unknown>> | undefined): InputField[] {
  return formInputs(inputs).map(({ kind: _kind, schema: _schema, ...field }) => field);
}

/** The top-level properties of `inputs` as a form's fields, in the schema's order. Pure. */
export function formInputs(inputs: Readonly<Record<string, unknown>> | undefined): FormInput[] {
  if (inputs === undefined) return [];
  const properties = inputs.properties;
  if (typeof properties !== 'object' || properties === null) return [];
  const required = new Set(Array.isArray(inputs.required) ? inputs.required.map(String) : []);
  return Object.entries(properties as Record<string, unknown>).map(([name, raw]) => {
    const s = asSchema(raw);
    const type = Array.isArray(s.type) ? s.type.join('|') : typeof s.type === 'string' ? s.type : 'any';
    return {
      name,
      type,
      required: required.has(name),
      ...(typeof s.description === 'string' && { description: s.description }),
      ...(Object.hasOwn(s, 'default') && { default: s.default }),
      ...(Array.isArray(s.enum) && { enum: s.enum }),
      kind: kindOf(type, s),
      schema: s,
    };
  });
}

function kindOf(type: string, s: Record<string, unknown>): InputKind {
  if (Array.isArray(s.enum) && s.enum.length > 0 && s.enum.every((v) => v === null || typeof v !== 'object'))
    return 'select';
  if (type === 'string') return 'text';
  if (type === 'number' || type === 'integer' || type === 'boolean') return type;
  return 'json';
}

/** What a typed text makes: the value (undefined: left empty, so absent), or why it cannot be one. */
export type FormValue =
  { readonly ok: true; readonly value: unknown } | { readonly ok: false; readonly message: string };

/**
 * The value `text` gives field `f`, as the form sends it: a number for number and integer
 * fields, `true`/`false` for booleans, the enum's own value for a choice (by its JSON text),
 * parsed JSON for the rest; empty text is no value. Pure.
 */
export function formValue(f: FormInput, text: string): FormValue {
  const t = f.kind === 'text' ? text : text.trim();
  if (t === '') return { ok: true, value: undefined };
  switch (f.kind) {
    case 'text':
      return { ok: true, value: text };
    case 'number':
    case 'integer': {
      const n = Number(t);
      return Number.isFinite(n) ? { ok: true, value: n } : { ok: false, message: 'must be a number' };
    }
    case 'boolean':
      return t === 'true' || t === 'false'
        ? { ok: true, value: t === 'true' }
        : { ok: false, message: 'must be true or false' };
    case 'select': {
      const i = (f.enum ?? []).findIndex((e) => JSON.stringify(e) === t);
      return i < 0 ? { ok: false, message: 'must be one of the choices' } : { ok: true, value: f.enum![i] };
    }
    case 'json':
      try {
        return { ok: true, value: JSON.parse(t) as unknown };
      } catch {
        return { ok: false, message: 'must be JSON (an object is written {"key": "value"})' };
      }
  }
}

/** The text a form shows for `value` in field `f` (its default, say): the inverse of formValue. Pure. */
export function formText(f: FormInput, value: unknown): string {
  if (value === undefined) return '';
  if (f.kind === 'text' && typeof value === 'string') return value;
  if (f.kind === 'json') return JSON.stringify(value, null, 2);
  return f.kind === 'select' ? JSON.stringify(value) : String(value);
}

const typeOf = (v: unknown): string =>
  v === null ? 'null' : Array.isArray(v) ? 'array' : Number.isInteger(v) ? 'integer' : typeof v;

function hasType(v: unknown, type: string): boolean {
  const t = typeOf(v);
  return t === type || (type === 'number' && t === 'integer');
}

/** Code points, as JSON Schema counts a string's length. */
const length = (s: string) => [...s].length;

/**
 * Why `value` does not fit field `f`'s own keywords (null when it does): `type`, `enum`,
 * `const`, `minimum`, `maximum`, their exclusive forms, `multipleOf`, `minLength`,
 * `maxLength`, `pattern` (a unicode regular expression), `minItems`, `maxItems`. Messages are
 * Ajv's. What lies deeper (an object's own properties, `$ref`, combinators) is left to the
 * daemon. Pure.
 */
export function checkFormValue(f: FormInput, value: unknown): string | null {
  const s = f.schema;
  const types = Array.isArray(s.type) ? s.type.map(String) : typeof s.type === 'string' ? [s.type] : null;
  if (types && !types.some((t) => hasType(value, t))) return `must be ${types.join(',')}`;
  if (Array.isArray(s.enum) && !s.enum.some((e) => JSON.stringify(e) === JSON.stringify(value)))
    return 'must be equal to one of the allowed values';
  if (Object.hasOwn(s, 'const') && JSON.stringify(s.const) !== JSON.stringify(value))
    return 'must be equal to constant';
  if (typeof value === 'number') {
    const n = (k: string) => (typeof s[k] === 'number' ? (s[k] as number) : undefined);
    const min = n('minimum');
    const max = n('maximum');
    const xmin = n('exclusiveMinimum');
    const xmax = n('exclusiveMaximum');
    const step = n('multipleOf');
    if (min !== undefined && value < min) return `must be >= ${min}`;
    if (max !== undefined && value > max) return `must be <= ${max}`;
    if (xmin !== undefined && value <= xmin) return `must be > ${xmin}`;
    if (xmax !== undefined && value >= xmax) return `must be < ${xmax}`;
    if (step !== undefined && step > 0 && !Number.isInteger(value / step)) return `must be multiple of ${step}`;
  }
  if (typeof value === 'string') {
    if (typeof s.minLength === 'number' && length(value) < s.minLength)
      return `must NOT have fewer than ${s.minLength} characters`;
    if (typeof s.maxLength === 'number' && length(value) > s.maxLength)
      return `must NOT have more than ${s.maxLength} characters`;
    if (typeof s.pattern === 'string' && !matches(s.pattern, value)) return `must match pattern "${s.pattern}"`;
  }
  if (Array.isArray(value)) {
    if (typeof s.minItems === 'number' && value.length < s.minItems)
      return `must NOT have fewer than ${s.minItems} items`;
    if (typeof s.maxItems === 'number' && value.length > s.maxItems)
      return `must NOT have more than ${s.maxItems} items`;
  }
  return null;
}

function matches(pattern: string, value: string): boolean {
  try {
    return new RegExp(pattern, 'u').test(value);
  } catch {
    return true; // published schemas compiled; the daemon decides
  }
}

/** A whole form checked: the start data (defaults of empty fields left to the daemon), and each field's problem. */
export interface FormCheck {
  readonly data: Record<string, unknown>;
  /** By field name; empty when the form may be sent. */
  readonly problems: Readonly<Record<string, string>>;
}

/** Reads and checks every field of a form from its texts (by field name). Pure. */
export function checkForm(fields: readonly FormInput[], texts: Readonly<Record<string, string>>): FormCheck {
  const data: Record<string, unknown> = {};
  const problems: Record<string, string> = {};
  for (const f of fields) {
    const read = formValue(f, texts[f.name] ?? '');
    if (!read.ok) {
      problems[f.name] = read.message;
      continue;
    }
    if (read.value === undefined) {
      if (f.required && !Object.hasOwn(f, 'default')) problems[f.name] = 'is required';
      continue;
    }
    const problem = checkFormValue(f, read.value);
    if (problem !== null) problems[f.name] = problem;
    else data[f.name] = read.value;
  }
  return { data, problems };
}

/**
 * Which of `names` a daemon's violation path names (`data.items[2].sku` -> `items`; the longest
 * that fits, as a name may hold a dot), or null: the data as a whole, or no field of the form. Pure.
 */
export function fieldOfPath(path: string, names: readonly string[]): string | null {
  let found: string | null = null;
  for (const n of names) {
    const at = `data.${n}`;
    const fits = path === at || path.startsWith(`${at}.`) || path.startsWith(`${at}[`);
    if (fits && (found === null || n.length > found.length)) found = n;
  }
  return found;
}
