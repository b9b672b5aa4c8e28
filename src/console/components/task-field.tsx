/*
 * One control of a task's form, by its kind: a text field, a text area, a number, a date, a
 * select, radio buttons, checkboxes, yes/no, lines of an array, or a file (uploaded when chosen,
 * with its progress). Its label says whether it is required; its problem is shown under it and
 * named by aria-describedby.
 */
import type { ComponentChildren } from 'preact';
import { formatBytes } from '../../shared/bytes.js';
import type { Control, ControlValue, UploadedFile } from '../model/task-form.js';

/** Where a file control's upload is. */
export type UploadState =
  | { readonly kind: 'sending'; readonly sent: number; readonly total: number }
  | { readonly kind: 'failed'; readonly message: string };

/** Props of TaskField. */
type Props = {
  readonly control: Control;
  readonly value: ControlValue | undefined;
  /** Prefix of the ids of its elements (unique on the page). */
  readonly idBase: string;
  /** What is wrong with its value (the page's check, or the daemon's answer); null: nothing. */
  readonly problem: string | null;
  readonly disabled: boolean;
  readonly onChange: (value: ControlValue) => void;
  /** A file control: the file chosen (null: cleared). */
  readonly onFile?: (file: File | null) => void;
  /** A file control: its upload under way or failed. */
  readonly upload?: UploadState | null;
};

/** The label's words: the control's name and, when it must be given, "(required)". */
function LabelText({ control }: { control: Control }) {
  return (
    <>
      {control.label}
      {control.required && <span class="required"> (required)</span>}
    </>
  );
}

/** A group of radio buttons or checkboxes under a legend. */
function Group({
  legend,
  children,
  describedBy,
}: {
  legend: ComponentChildren;
  children: ComponentChildren;
  describedBy?: string;
}) {
  return (
    <fieldset class="field-group" aria-describedby={describedBy}>
      <legend>{legend}</legend>
      {children}
    </fieldset>
  );
}

/** The control (see the top of this file). */
export function TaskField({ control: c, value, idBase, problem, disabled, onChange, onFile, upload }: Props) {
  const id = `${idBase}-${c.key}`;
  const errorId = `${id}-error`;
  const described = problem ? errorId : undefined;
  const text = typeof value === 'string' ? value : '';
  const invalid = problem ? true : undefined;
  const common = { id, disabled, 'aria-invalid': invalid, 'aria-describedby': described, required: c.required };
  let input: ComponentChildren;
  switch (c.kind) {
    case 'text':
    case 'number':
      input = (
        <input
          {...common}
          type="text"
          inputMode={c.kind === 'number' ? 'decimal' : undefined}
          value={text}
          onInput={(e) => onChange(e.currentTarget.value)}
        />
      );
      break;
    case 'date':
      input = <input {...common} type="date" value={text} onInput={(e) => onChange(e.currentTarget.value)} />;
      break;
    case 'textarea':
    case 'lines':
      input = <textarea {...common} rows={4} value={text} onInput={(e) => onChange(e.currentTarget.value)} />;
      break;
    case 'select':
      input = (
        <select {...common} value={text} onChange={(e) => onChange(e.currentTarget.value)}>
          <option value="">Choose…</option>
          {c.options.map((o, i) => (
            <option key={i} value={String(i)}>
              {o.label}
            </option>
          ))}
        </select>
      );
      break;
    case 'radio':
    case 'boolean': {
      const choices =
        c.kind === 'boolean'
          ? [
              { v: 'yes', l: 'Yes' },
              { v: 'no', l: 'No' },
            ]
          : c.options.map((o, i) => ({ v: String(i), l: o.label }));
      return (
        <div class="task-field">
          <Group legend={<LabelText control={c} />} describedBy={described}>
            {choices.map((ch) => (
              <label key={ch.v} class="choice">
                <input
                  type="radio"
                  name={id}
                  value={ch.v}
                  checked={text === ch.v}
                  disabled={disabled}
                  onChange={() => onChange(ch.v)}
                />{' '}
                {ch.l}
              </label>
            ))}
          </Group>
          {problem && <p id={errorId} class="field-error">{`✕ ${problem}`}</p>}
        </div>
      );
    }
    case 'checkbox': {
      const ticked = Array.isArray(value) ? (value as readonly number[]) : [];
      return (
        <div class="task-field">
          <Group legend={<LabelText control={c} />} describedBy={described}>
            {c.options.map((o, i) => (
              <label key={i} class="choice">
                <input
                  type="checkbox"
                  checked={ticked.includes(i)}
                  disabled={disabled}
                  onChange={(e) =>
                    onChange(
                      e.currentTarget.checked ? [...ticked, i].sort((a, b) => a - b) : ticked.filter((x) => x !== i),
                    )
                  }
                />{' '}
                {o.label}
              </label>
            ))}
          </Group>
          {problem && <p id={errorId} class="field-error">{`✕ ${problem}`}</p>}
        </div>
      );
    }
    case 'file': {
      const file =
        value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as UploadedFile) : null;
      input = (
        <>
          <input {...common} type="file" onChange={(e) => onFile?.(e.currentTarget.files?.[0] ?? null)} />
          {upload?.kind === 'sending' && (
            <span class="upload-progress">
              <progress max={upload.total} value={upload.sent} aria-label={`Uploading ${c.label}`} />{' '}
              <span role="status">{`${formatBytes(upload.sent)} of ${formatBytes(upload.total)}`}</span>
            </span>
          )}
          {file && upload == null && (
            <span role="status" class="uploaded">{`✓ uploaded ${file.name} (${formatBytes(file.bytes)})`}</span>
          )}
        </>
      );
      break;
    }
  }
  return (
    <div class="task-field">
      <label for={id}>
        <LabelText control={c} />
      </label>
      {c.kind === 'lines' && <span class="muted hint">{' one item a line'}</span>}
      {input}
      {problem && <p id={errorId} class="field-error">{`✕ ${problem}`}</p>}
    </div>
  );
}
