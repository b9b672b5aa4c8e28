/* What a COMPLETE of an input node must carry. Pure and daemon-free: the API validates with it, and the TUI and the console check a form with the same code before they send. */
import { fileIdOf } from './file-ref.js';
import { WfxError } from './errors.js';
import type { FormField, InputOption, InputType } from './flow/types.js';

/** What a waiting input node accepts (from its wait). */
export interface InputSpec {
  readonly inputType: InputType;
  readonly options: readonly unknown[] | null;
  readonly fields: readonly FormField[] | null;
}

const ISO_DATE = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})?)?$/;

function optionValue(o: unknown): unknown {
  return typeof o === 'object' && o !== null ? (o as { value: unknown }).value : o;
}

/** True when `v` is an ISO 8601 date or date-time that names a real instant. */
export function isIsoDate(v: unknown): v is string {
  return typeof v === 'string' && ISO_DATE.test(v) && !Number.isNaN(Date.parse(v));
}

/** One problem of a COMPLETE's data: the field it is about (`inputValue` for a simple input) and what is wrong. */
export interface TaskDataProblem {
  readonly field: string;
  readonly message: string;
}

/**
 * The problems of the `data` of a COMPLETE against what the node asked for (SPEC.md: simple
 * types submit `{inputValue}`, form submits the fields object), at most one per field; [] when
 * it fits. Pure: the daemon refuses with these, and the console checks a form with them first.
 */
export function taskDataProblems(spec: InputSpec, data: Record<string, unknown>): TaskDataProblem[] {
  const problems: TaskDataProblem[] = [];
  const options = spec.options?.map(optionValue) ?? null;
  if (spec.inputType === 'form') {
    const fields = spec.fields ?? [];
    for (const f of fields) {
      const v = data[f.name];
      if (v === undefined || v === null || v === '') {
        if (f.required) problems.push({ field: f.name, message: 'required' });
        continue;
      }
      const p = checkField(f, v);
      if (p) problems.push({ field: f.name, message: p });
    }
    // Keys that are no field of the form are taken as they are: every key of the submitted data
    // becomes a variable (the service interface), only the declared fields are checked.
  } else {
    const v = data.inputValue;
    if (v === undefined) problems.push({ field: 'inputValue', message: 'required' });
    else {
      const p = checkSimple(spec.inputType, v, options);
      if (p) problems.push({ field: 'inputValue', message: p });
    }
  }
  return problems;
}

/**
 * Checks the `data` of a COMPLETE (taskDataProblems). Pure. Throws WfxError VALIDATION_ERROR
 * (HTTP 422) with every problem in `details.problems` (`field: message` strings) and
 * `details.fields` (field name -> message).
 */
export function validateTaskData(spec: InputSpec, data: Record<string, unknown>): void {
  const found = taskDataProblems(spec, data);
  if (found.length === 0) return;
  const problems = found.map((p) => `${p.field}: ${p.message}`);
  const fields: Record<string, string> = Object.create(null) as Record<string, string>;
  for (const p of found) fields[p.field] = p.message;
  throw new WfxError('VALIDATION_ERROR', `the data does not fit the ${spec.inputType} input: ${problems.join('; ')}`, {
    details: { problems, fields },
    status: 422,
  });
}

function checkSimple(type: Exclude<InputType, 'form'>, v: unknown, options: unknown[] | null): string | null {
  switch (type) {
    case 'textbox':
    case 'textarea':
      return typeof v === 'string' ? null : 'must be a string';
    case 'number':
      return typeof v === 'number' && Number.isFinite(v) ? null : 'must be a number';
    case 'date':
      return isIsoDate(v) ? null : 'must be an ISO 8601 date (YYYY-MM-DD) or date-time';
    case 'select':
    case 'radio':
      return options?.some((o) => o === v) ? null : `must be one of: ${(options ?? []).join(', ')}`;
    case 'checkbox':
      if (!Array.isArray(v)) return 'must be an array of options';
      return v.every((x) => options?.some((o) => o === x))
        ? null
        : `every item must be one of: ${(options ?? []).join(', ')}`;
    case 'file':
      // That the file exists in the execution's organization is checked by the engine.
      return fileIdOf(v) !== null
        ? null
        : 'must be a file of the file store: its fileId (upload it with POST /files or `wfx files put`), or {fileId}';
  }
}

function checkField(f: FormField, v: unknown): string | null {
  const options = (f.options as InputOption[] | undefined)?.map(optionValue) ?? null;
  switch (f.type) {
    case 'text':
      return typeof v === 'string' ? null : 'must be a string';
    case 'number':
      return typeof v === 'number' && Number.isFinite(v) ? null : 'must be a number';
    case 'boolean':
      return typeof v === 'boolean' ? null : 'must be true or false';
    case 'date':
      return isIsoDate(v) ? null : 'must be an ISO 8601 date';
    case 'select':
      return options?.some((o) => o === v) ? null : `must be one of: ${(options ?? []).join(', ')}`;
    case 'array':
      return Array.isArray(v) ? null : 'must be an array';
  }
}
