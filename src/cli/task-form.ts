/* What a waiting input node or user task wants, as `wfx task list|show` print it (pure). */
import type { FormField, InputOption, InputType } from '../shared/flow/types.js';
import { typedValue } from './api.js';

/** What the CLI needs of a waiting task: from GET /process/tasks or a node's wait in GET /process/instance/{id}. */
export interface TaskForm {
  readonly processInstanceId: string;
  readonly nodeId: string;
  readonly inputType: InputType;
  readonly formTitle: string | null;
  readonly options: readonly unknown[] | null;
  readonly fields: readonly FormField[] | null;
}

/** One thing the answer holds: a form's field, or the `inputValue` of another input type. */
export interface FormEntry {
  readonly name: string;
  readonly type: string;
  readonly required: boolean;
  readonly options: readonly InputOption[] | null;
  readonly default?: unknown;
  readonly label: string | null;
}

/** The value the answer's `inputValue` takes for each input type other than form. */
const VALUE_TYPE: Record<Exclude<InputType, 'form'>, string> = {
  textbox: 'text',
  textarea: 'text',
  number: 'number',
  date: 'date',
  select: 'select',
  radio: 'select',
  checkbox: 'array',
  file: 'file',
};

/** The entries of a task's answer: its form's fields, else the one required `inputValue`. */
export function formEntries(t: TaskForm): FormEntry[] {
  if (t.inputType === 'form')
    return (t.fields ?? []).map((f) => ({
      name: f.name,
      type: f.type,
      required: f.required === true,
      options: f.options ?? null,
      ...(f.default !== undefined && { default: f.default }),
      label: f.label ?? null,
    }));
  return [
    {
      name: 'inputValue',
      type: VALUE_TYPE[t.inputType] ?? t.inputType,
      required: true,
      options: (t.options as InputOption[] | null) ?? null,
      label: null,
    },
  ];
}

const optionValue = (o: InputOption): string | number => (typeof o === 'object' ? o.value : o);

/** Options as `S|M|L` (a label in brackets when one is given). */
export function optionsText(options: readonly InputOption[] | null): string {
  if (options === null || options.length === 0) return '-';
  return options
    .map((o) => (typeof o === 'object' && o.label !== undefined ? `${o.value} (${o.label})` : String(optionValue(o))))
    .join('|');
}

/** A task's answer in brief, for a table cell: `approve:boolean*, size:S|M|L` (`*`: required). */
export function fieldsBrief(t: TaskForm): string {
  return formEntries(t)
    .map((e) => {
      const type = e.options && e.options.length > 0 ? e.options.map(optionValue).join('|') : e.type;
      return `${e.name}:${type}${e.required ? '*' : ''}`;
    })
    .join(', ');
}

/** A value to offer for an entry: its default, its first option, else an example of its type. */
function exampleValue(e: FormEntry, today: string): unknown {
  if (e.default !== undefined) return e.default;
  const first = e.options?.[0];
  if (first !== undefined) return e.type === 'array' ? [optionValue(first)] : optionValue(first);
  switch (e.type) {
    case 'number':
      return 0;
    case 'boolean':
      return true;
    case 'date':
      return today;
    case 'array':
      return [];
    case 'file':
      return 'FILE_ID';
    default:
      return 'TEXT';
  }
}

/** `value` quoted for a POSIX shell when it needs to be. */
function shellWord(value: string): string {
  return /^[\w@%+=:,./-]+$/.test(value) ? value : `'${value.replace(/'/g, `'\\''`)}'`;
}

/**
 * A `wfx task complete` line to paste and edit: each entry with its default, first option or an
 * example of its type, as `--set k=v` where `--set` keeps its type, else in `--data`.
 * `today` (YYYY-MM-DD) is a date's example.
 */
export function completeLine(t: TaskForm, today: string): string {
  const sets: string[] = [];
  const data: Record<string, unknown> = {};
  for (const e of formEntries(t)) {
    const v = exampleValue(e, today);
    const text = typeof v === 'string' ? v : typeof v === 'number' || typeof v === 'boolean' ? String(v) : null;
    if (text !== null && typedValue(text) === v) sets.push(`--set ${shellWord(`${e.name}=${text}`)}`);
    else data[e.name] = v;
  }
  const dataArg = Object.keys(data).length > 0 ? [`--data ${shellWord(JSON.stringify(data))}`] : [];
  return ['wfx task complete', t.processInstanceId, t.nodeId, ...dataArg, ...sets].join(' ');
}
