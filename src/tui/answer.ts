/*
 * The answer to a waiting task while it is typed: one draft per field, how keys change it, and
 * the data it becomes (the shape POST /process/task wants: `{inputValue}` for the simple input
 * types, the fields object for a form). Pure: the TUI's hook holds the state, components draw it.
 */
import { fileIdOf } from '../shared/file-ref.js';
import type { Key } from 'ink';
import { errorMessage, WfxError } from '../shared/errors.js';
import type { FormField } from '../shared/flow/types.js';
import { validateTaskData, type InputSpec } from '../shared/input-data.js';

/** One option of a choice: the value sent, the label shown. */
export interface Choice {
  readonly value: unknown;
  readonly label: string;
}

/** How a text field's text is read: as it is, a number, an ISO date, a file path, or a comma-separated list. */
export type TextKind = 'text' | 'number' | 'date' | 'file' | 'list';

interface DraftBase {
  /** The data key (`inputValue` for the simple types). */
  readonly name: string;
  readonly label: string;
  readonly required: boolean;
}

/** A field typed as text (textbox, textarea, number, date, file; form text, number, date, array). */
export interface TextDraft extends DraftBase {
  readonly kind: 'text';
  readonly read: TextKind;
  /** Several lines (textarea): enter adds a line. */
  readonly multiline: boolean;
  readonly value: string;
}

/** A field answered by choosing (select, radio, checkbox; form boolean, select, array with options). */
export interface ChoiceDraft extends DraftBase {
  readonly kind: 'choice';
  /** Several may be chosen (checkbox). */
  readonly multiple: boolean;
  readonly options: readonly Choice[];
  /** The option under the cursor. */
  readonly cursor: number;
  /** Indexes of the chosen options, in option order. */
  readonly chosen: readonly number[];
}

export type FieldDraft = TextDraft | ChoiceDraft;

/** The answer being typed: its fields and which one has the keys. */
export interface Draft {
  readonly fields: readonly FieldDraft[];
  readonly focus: number;
}

/** A hint shown next to a text field: what its text must be. */
export const TEXT_HINT: Record<TextKind, string> = {
  text: '',
  number: 'a number',
  date: 'YYYY-MM-DD or an ISO date-time',
  file: 'a file path (uploaded to the file store when sent), or a fileId',
  list: 'values separated by commas',
};

function choices(options: readonly unknown[] | null | undefined): Choice[] {
  return (options ?? []).map((o) => {
    if (typeof o === 'object' && o !== null && 'value' in o) {
      const { value, label } = o as { value: unknown; label?: unknown };
      return { value, label: typeof label === 'string' ? label : String(value) };
    }
    return { value: o, label: String(o) };
  });
}

const text = (name: string, label: string, required: boolean, read: TextKind, multiline = false): TextDraft => ({
  kind: 'text',
  name,
  label,
  required,
  read,
  multiline,
  value: '',
});
const choice = (name: string, label: string, required: boolean, options: Choice[], multiple: boolean): ChoiceDraft => ({
  kind: 'choice',
  name,
  label,
  required,
  multiple,
  options,
  cursor: 0,
  chosen: [],
});

function formField(f: FormField): FieldDraft {
  const label = f.label ?? f.name;
  const required = f.required === true;
  switch (f.type) {
    case 'text':
      return text(f.name, label, required, 'text');
    case 'number':
      return text(f.name, label, required, 'number');
    case 'date':
      return text(f.name, label, required, 'date');
    case 'boolean':
      return choice(
        f.name,
        label,
        required,
        [
          { value: true, label: 'yes' },
          { value: false, label: 'no' },
        ],
        false,
      );
    case 'select':
      return choice(f.name, label, required, choices(f.options), false);
    case 'array':
      return f.options && f.options.length > 0
        ? choice(f.name, label, required, choices(f.options), true)
        : text(f.name, label, required, 'list');
  }
}

/** The empty draft for what a task asks for. Pure. */
export function draftFor(input: InputSpec): Draft {
  const v = 'inputValue';
  const one = (field: FieldDraft): Draft => ({ fields: [field], focus: 0 });
  switch (input.inputType) {
    case 'form':
      return { fields: (input.fields ?? []).map(formField), focus: 0 };
    case 'textbox':
      return one(text(v, 'answer', false, 'text'));
    case 'textarea':
      return one(text(v, 'answer', false, 'text', true));
    case 'number':
      return one(text(v, 'number', true, 'number'));
    case 'date':
      return one(text(v, 'date', true, 'date'));
    case 'file':
      return one(text(v, 'file', true, 'file'));
    case 'select':
    case 'radio':
      return one(choice(v, 'choose one', true, choices(input.options), false));
    case 'checkbox':
      return one(choice(v, 'choose any', false, choices(input.options), true));
  }
}

const NUMBER = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;

/** The value a field sends; undefined: none (left out). Text that does not read as its kind is sent as typed, so the validator names the problem. */
export function valueOf(field: FieldDraft): unknown {
  if (field.kind === 'choice') {
    const picked = field.chosen.map((i) => field.options[i]!.value);
    return field.multiple ? picked : picked[0];
  }
  const t = field.value.trim();
  switch (field.read) {
    case 'text':
      return field.value;
    case 'number':
      return t === '' ? undefined : NUMBER.test(t) ? Number(t) : t;
    case 'date':
      return t === '' ? undefined : t;
    case 'file':
      // A path is uploaded when the answer is sent (useAnswer); a fileId goes as it is.
      return t === '' ? undefined : fileIdOf(t) !== null ? t : { path: t };
    case 'list':
      return t === ''
        ? undefined
        : t
            .split(',')
            .map((s) => s.trim())
            .filter((s) => s !== '');
  }
}

/** The `data` of a COMPLETE: `{inputValue}` for a simple type, the fields (empty ones, nothing chosen included, left out: the API calls those missing) for a form. Pure. */
export function dataOf(input: InputSpec, draft: Draft): Record<string, unknown> {
  const data: Record<string, unknown> = {};
  for (const f of draft.fields) {
    const v = valueOf(f);
    if (v === undefined || (input.inputType === 'form' && (v === '' || (Array.isArray(v) && v.length === 0)))) continue;
    data[f.name] = v;
  }
  return data;
}

/** What the API would refuse in `data`, checked with its own validator (`name: problem` each); none: []. Pure. */
export function problemsOf(input: InputSpec, data: Record<string, unknown>): string[] {
  try {
    validateTaskData(input, data);
    return [];
  } catch (err) {
    return problemsOfError(err);
  }
}

/** The problems a VALIDATION_ERROR lists (from the validator or a 422 of the API); else its message. */
export function problemsOfError(err: unknown): string[] {
  const details = err instanceof WfxError ? (err.details as { problems?: unknown } | undefined) : undefined;
  if (Array.isArray(details?.problems)) return details.problems.map(String);
  return [errorMessage(err)];
}

/** Moves the focus to the next (+1) or previous (-1) field, round. Pure. */
export function moveFocus(draft: Draft, by: 1 | -1): Draft {
  const n = draft.fields.length;
  return n === 0 ? draft : { ...draft, focus: (draft.focus + by + n) % n };
}

/** The focused field changed by `change`. Pure. */
export function withFocused(draft: Draft, change: (f: FieldDraft) => FieldDraft): Draft {
  const f = draft.fields[draft.focus];
  return f ? { ...draft, fields: draft.fields.map((x, i) => (i === draft.focus ? change(x) : x)) } : draft;
}

/**
 * A key typed into a field: text appends (a paste too) and backspace deletes the last
 * character; enter adds a line to a multi-line field; on a choice, ← → and ↑↓ (or h l, k j) move,
 * whichever way the options are laid out, and space or enter choose (a checkbox toggles). Other
 * keys change nothing. Pure.
 */
export function typeInto(field: FieldDraft, input: string, key: Key): FieldDraft {
  if (field.kind === 'choice') {
    const last = Math.max(0, field.options.length - 1);
    if (key.upArrow || key.leftArrow || input === 'k' || input === 'h')
      return { ...field, cursor: Math.max(0, field.cursor - 1) };
    if (key.downArrow || key.rightArrow || input === 'j' || input === 'l')
      return { ...field, cursor: Math.min(last, field.cursor + 1) };
    if ((input === ' ' || key.return) && field.options.length > 0) {
      if (!field.multiple) return { ...field, chosen: [field.cursor] };
      const on = field.chosen.includes(field.cursor);
      return {
        ...field,
        chosen: on
          ? field.chosen.filter((i) => i !== field.cursor)
          : [...field.chosen, field.cursor].sort((a, b) => a - b),
      };
    }
    return field;
  }
  if (key.backspace || key.delete) return { ...field, value: [...field.value].slice(0, -1).join('') };
  if (key.return) return field.multiline ? { ...field, value: `${field.value}\n` } : field;
  if (key.ctrl || key.meta || key.escape || key.tab || key.upArrow || key.downArrow || key.leftArrow || key.rightArrow)
    return field;
  // A paste may carry line breaks: kept in a multi-line field, spaces in a one-line one; other control characters dropped.
  const typed = input
    .replace(/\r\n?/g, '\n')
    .replace(/\n/g, field.multiline ? '\n' : ' ')
    .replace(/[\u0000-\u0009\u000b-\u001f\u007f]/g, '');
  return typed === '' ? field : { ...field, value: field.value + typed };
}

/** A key with no flag set (what Ink reports for plain text). */
export const NO_KEY: Key = {
  upArrow: false,
  downArrow: false,
  leftArrow: false,
  rightArrow: false,
  pageDown: false,
  pageUp: false,
  return: false,
  escape: false,
  ctrl: false,
  shift: false,
  tab: false,
  backspace: false,
  delete: false,
  meta: false,
};

/**
 * The keys in one chunk of input. Ink 5 hands a chunk as one key, but a terminal delivers keys
 * typed fast, sent by a script (tmux send-keys) or pasted in one read: " \t" is space then tab,
 * not text. Enter, tab, backspace, space and ctrl+letter become keys of their own; runs of other
 * characters stay one text input (a paste). A chunk with a line break inside it is a paste of
 * lines, kept whole. A chunk with an escape sequence is left whole (Ink parsed it). Pure.
 */
export function keysOf(input: string, key: Key): Array<readonly [string, Key]> {
  if (input.length <= 1 || input.includes('\u001b')) return [[input, key]];
  // A line break with printable text after it is a paste of several lines, not keys: it must
  // not submit half of it (a one-line field types the breaks as spaces). Text, then Enter or a
  // ctrl key, is keys.
  if (/[\r\n][^]*[^\u0000-\u001f\u007f]/.test(input)) return [[input, NO_KEY]];
  const keys: Array<readonly [string, Key]> = [];
  let text = '';
  const flush = () => {
    if (text !== '') keys.push([text, NO_KEY]);
    text = '';
  };
  for (const ch of input) {
    const code = ch.charCodeAt(0);
    const own: readonly [string, Key] | null =
      ch === '\r'
        ? ['', { ...NO_KEY, return: true }]
        : ch === '\t'
          ? ['', { ...NO_KEY, tab: true }]
          : ch === '\u007f' || ch === '\b'
            ? ['', { ...NO_KEY, backspace: true }]
            : ch === ' '
              ? [' ', NO_KEY]
              : code >= 1 && code <= 26 && ch !== '\n'
                ? [String.fromCharCode(code + 96), { ...NO_KEY, ctrl: true }]
                : null;
    if (own === null) text += ch;
    else {
      flush();
      keys.push(own);
    }
  }
  flush();
  return keys;
}
