/*
 * A task's form as data: what each control holds while a person types (text, chosen option
 * indexes, a boolean's yes/no, an uploaded file), the answer those make (`{inputValue}` or the
 * fields object, as the daemon takes it), and the problems of that answer by field, found by
 * the daemon's own check (src/shared/input-data.ts). Pure.
 */
import type { FormField, InputOption } from '../../shared/flow/types.js';
import { taskDataProblems, type InputSpec } from '../../shared/input-data.js';

/** The key of a simple input's one control (and of its problem): the daemon's name for it. */
export const SIMPLE_KEY = 'inputValue';

/** A file uploaded for a file control: what the store answered. */
export interface UploadedFile {
  readonly fileId: string;
  readonly name: string;
  readonly bytes: number;
}

/**
 * What one control holds: text (textbox, textarea, number, date, text, an array's lines), the
 * index of the chosen option (select, radio; '' none), the indexes of the ticked options
 * (checkbox), 'yes' / 'no' / '' (boolean), an uploaded file or null (file).
 */
export type ControlValue = string | readonly number[] | UploadedFile | null;

/** Every control's value, by field name (SIMPLE_KEY for a simple input). */
export type FormValues = Readonly<Record<string, ControlValue>>;

/** One control of the form: its key, label, kind, options and whether it must be given. */
export interface Control {
  readonly key: string;
  readonly label: string;
  readonly kind:
    'text' | 'textarea' | 'number' | 'date' | 'select' | 'radio' | 'checkbox' | 'file' | 'boolean' | 'lines';
  /** The options as shown (labels) with their values, for select, radio and checkbox. */
  readonly options: ReadonlyArray<{ readonly label: string; readonly value: unknown }>;
  readonly required: boolean;
  /** The field's `default`, as the form starts with it (FormValues' shape); undefined: none. */
  readonly initial?: ControlValue;
}

function optionsOf(options: readonly unknown[] | null | undefined): Control['options'] {
  return (options ?? []).map((o) => {
    if (typeof o === 'object' && o !== null) {
      const { value, label } = o as Exclude<InputOption, string | number>;
      return { label: label ?? String(value), value };
    }
    return { label: String(o), value: o };
  });
}

const FIELD_KIND: Record<FormField['type'], Control['kind']> = {
  text: 'text',
  number: 'number',
  boolean: 'boolean',
  date: 'date',
  select: 'select',
  array: 'lines',
};

/** The controls of a form for `spec`, in order: one per field of a form, else one. Pure. */
export function controlsOf(spec: InputSpec): Control[] {
  if (spec.inputType === 'form')
    return (spec.fields ?? []).map((f) => ({
      key: f.name,
      label: f.label ?? f.name,
      kind: FIELD_KIND[f.type],
      options: optionsOf(f.options),
      required: f.required === true,
      ...(f.default !== undefined && { initial: initialOf(FIELD_KIND[f.type], optionsOf(f.options), f.default) }),
    }));
  const kind: Control['kind'] = spec.inputType === 'textbox' ? 'text' : spec.inputType;
  return [{ key: SIMPLE_KEY, label: 'Answer', kind, options: optionsOf(spec.options), required: true }];
}

/** A field's default as its control holds it; undefined when it does not fit the control. */
function initialOf(kind: Control['kind'], options: Control['options'], value: unknown): ControlValue | undefined {
  switch (kind) {
    case 'boolean':
      return value === true ? 'yes' : value === false ? 'no' : undefined;
    case 'select': {
      const i = options.findIndex((o) => o.value === value);
      return i < 0 ? undefined : String(i);
    }
    case 'lines':
      return Array.isArray(value) ? value.map(String).join('\n') : undefined;
    case 'number':
      return typeof value === 'number' ? String(value) : undefined;
    default:
      return typeof value === 'string' ? value : undefined;
  }
}

/** The values a new form starts with: each field's default, else nothing given, nothing ticked. Pure. */
export function initialValues(controls: readonly Control[]): FormValues {
  return Object.fromEntries(
    controls.map((c) => [c.key, c.initial ?? (c.kind === 'checkbox' ? [] : c.kind === 'file' ? null : '')]),
  );
}

/** What a control's value submits; undefined: nothing (the key is left out). */
function submitted(c: Control, v: ControlValue | undefined): unknown {
  switch (c.kind) {
    case 'checkbox':
      return (Array.isArray(v) ? v : []).map((i: number) => c.options[i]?.value);
    case 'file':
      return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as UploadedFile).fileId : undefined;
    case 'select':
    case 'radio':
      return typeof v === 'string' && v !== '' ? c.options[Number(v)]?.value : undefined;
    case 'boolean':
      return v === 'yes' ? true : v === 'no' ? false : undefined;
    case 'number': {
      const text = typeof v === 'string' ? v.trim() : '';
      // Typed text that is no number is sent as typed: the check says what is wrong with it.
      return text === '' ? undefined : Number.isFinite(Number(text)) ? Number(text) : text;
    }
    case 'lines': {
      const text = typeof v === 'string' ? v : '';
      return text.trim() === ''
        ? undefined
        : text
            .split('\n')
            .map((l) => l.trim())
            .filter((l) => l !== '');
    }
    default:
      return typeof v === 'string' ? (v === '' && c.key !== SIMPLE_KEY ? undefined : v) : undefined;
  }
}

/** The answer's `data` the values make: `{inputValue}` for a simple input, the fields object for a form. Pure. */
export function answerData(spec: InputSpec, controls: readonly Control[], values: FormValues): Record<string, unknown> {
  const data: Record<string, unknown> = {};
  for (const c of controls) {
    const v = submitted(c, values[c.key]);
    if (v !== undefined) data[c.key] = v;
  }
  // A simple input's empty text is no answer at all (required), a number's too.
  if (
    spec.inputType !== 'form' &&
    data[SIMPLE_KEY] === '' &&
    spec.inputType !== 'textbox' &&
    spec.inputType !== 'textarea'
  )
    delete data[SIMPLE_KEY];
  return data;
}

/** The problems of `data` by control key, as the daemon would refuse it; {} when it fits. Pure. */
export function problemsByField(spec: InputSpec, data: Record<string, unknown>): Record<string, string> {
  return Object.fromEntries(taskDataProblems(spec, data).map((p) => [p.field, p.message]));
}

/**
 * The daemon's refusal by control key, from a 422's `details`: its `fields`, else its
 * `problems` strings (`name: message`) parsed. Pure.
 */
export function refusalByField(details: Readonly<Record<string, unknown>> | undefined): Record<string, string> {
  const fields = details?.fields;
  if (typeof fields === 'object' && fields !== null) {
    const out: Record<string, string> = {};
    for (const [k, v] of Object.entries(fields)) if (typeof v === 'string') out[k] = v;
    return out;
  }
  const out: Record<string, string> = {};
  for (const p of Array.isArray(details?.problems) ? details.problems : []) {
    if (typeof p !== 'string') continue;
    const at = p.indexOf(': ');
    if (at > 0) out[p.slice(0, at)] = p.slice(at + 2);
  }
  return out;
}

/** How long until `dueAt` (or since, when past), in words: `in 4 min 3 s`, `2 s overdue`. Pure. */
export function dueWords(dueAt: string, now: number, format: (ms: number) => string): string {
  const ms = Date.parse(dueAt) - now;
  return ms >= 0 ? `in ${format(ms)}` : `${format(-ms)} overdue`;
}
