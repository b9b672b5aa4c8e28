/*
 * The fields of a flow's `inputs:` as form controls (shared/flow/input-fields.ts says how each
 * is asked): a label with the required mark in words, the description as a hint, the field's
 * problem under it (from the page's check or the daemon's answer), tied to the control with
 * aria-describedby and aria-invalid.
 */
import type { FormInput } from '../../shared/flow/input-fields.js';

/** Props of InputFields. */
type Props = {
  readonly fields: readonly FormInput[];
  /** The text of each field, by name. */
  readonly texts: Readonly<Record<string, string>>;
  /** Each field's problem, by name, as a sentence (`quantity must be >= 1`). */
  readonly problems: Readonly<Record<string, string>>;
  readonly onChange: (name: string, text: string) => void;
};

/** The DOM id of a field's control (names are any text: encoded). */
export const inputId = (name: string): string => `input-${encodeURIComponent(name).replace(/%/g, '_')}`;

/** The fields, each with its label, hint and problem. */
export function InputFields({ fields, texts, problems, onChange }: Props) {
  return (
    <>
      {fields.map((f) => {
        const id = inputId(f.name);
        const problem = problems[f.name];
        const described = [f.description && `${id}-hint`, problem && `${id}-problem`].filter(Boolean).join(' ');
        const common = {
          id,
          name: f.name,
          'aria-invalid': problem ? ('true' as const) : undefined,
          'aria-describedby': described || undefined,
          'aria-required': f.required ? ('true' as const) : undefined,
        };
        const text = texts[f.name] ?? '';
        const set = (e: { currentTarget: { value: string } }) => onChange(f.name, e.currentTarget.value);
        const title = typeof f.schema.title === 'string' ? f.schema.title : f.name;
        return (
          <div key={f.name} class={`input-field${problem ? ' invalid' : ''}`}>
            <label for={id}>
              {title}
              {f.required && <span class="required"> (required)</span>}
              {f.kind !== 'text' && f.kind !== 'select' && f.kind !== 'boolean' && (
                <span class="muted">{` ${f.kind === 'json' ? `JSON${f.type !== 'any' ? `: ${f.type}` : ''}` : f.kind}`}</span>
              )}
            </label>
            {f.kind === 'select' ? (
              <select {...common} value={text} onChange={set}>
                <option value="">{f.required ? 'Choose…' : '(not set)'}</option>
                {(f.enum ?? []).map((v) => (
                  <option key={JSON.stringify(v)} value={JSON.stringify(v)}>
                    {typeof v === 'string' ? v : JSON.stringify(v)}
                  </option>
                ))}
              </select>
            ) : f.kind === 'boolean' ? (
              <select {...common} value={text} onChange={set}>
                <option value="">(not set)</option>
                <option value="true">true</option>
                <option value="false">false</option>
              </select>
            ) : f.kind === 'json' ? (
              <textarea {...common} rows={4} spellcheck={false} value={text} onInput={set} />
            ) : (
              <input
                {...common}
                type="text"
                inputMode={f.kind === 'integer' ? 'numeric' : f.kind === 'number' ? 'decimal' : undefined}
                value={text}
                onInput={set}
              />
            )}
            {f.description && (
              <p id={`${id}-hint`} class="hint muted">
                {f.description}
              </p>
            )}
            {problem && (
              <p id={`${id}-problem`} class="field-problem error-text">
                {problem}
              </p>
            )}
          </div>
        );
      })}
    </>
  );
}
