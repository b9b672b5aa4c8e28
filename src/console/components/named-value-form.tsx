/*
 * The form that sets a named value of an environment: a flow secret (its value typed unseen) or
 * an environment value (`{env.NAME}`). The page owns the fields' state, so that a row's Change
 * fills them and a sent secret's value is emptied.
 */
import type { Environment } from '../../shared/api/index.js';

/** The fields' values and their setters. */
export interface NamedValue {
  readonly name: string;
  readonly environment: Environment;
  readonly value: string;
  readonly setName: (name: string) => void;
  readonly setEnvironment: (environment: Environment) => void;
  readonly setValue: (value: string) => void;
}

/** Props of NamedValueForm. */
type Props = {
  /** Prefix of the fields' ids (`secret`: secret-name, secret-environment, secret-value). */
  readonly idBase: string;
  /** Its heading, and the form's accessible name. */
  readonly title: string;
  /** The submit button's words. */
  readonly submit: string;
  /** `password`: typed unseen, never offered to a password manager's memory. */
  readonly valueType: 'text' | 'password';
  /** Whether it may be sent as it is. */
  readonly ready: boolean;
  readonly fields: NamedValue;
  readonly onSubmit: () => void;
};

/** The form (see the top of this file). */
export function NamedValueForm({ idBase, title, submit, valueType, ready, fields, onSubmit }: Props) {
  const id = (part: string) => `${idBase}-${part}`;
  return (
    <form
      class={`${idBase}-form`}
      aria-labelledby={id('title')}
      onSubmit={(e) => {
        e.preventDefault();
        onSubmit();
      }}
    >
      <h2 id={id('title')}>{title}</h2>
      <p id={id('name-help')} class="muted">
        A name is letters, digits and _, not starting with a digit. Setting one again replaces its value.
      </p>
      <div class="form-grid">
        <label for={id('name')}>Name</label>
        <input
          id={id('name')}
          value={fields.name}
          autocomplete="off"
          spellcheck={false}
          aria-describedby={id('name-help')}
          onInput={(e) => fields.setName(e.currentTarget.value)}
        />
        <label for={id('environment')}>Environment</label>
        <select
          id={id('environment')}
          value={fields.environment}
          onChange={(e) => fields.setEnvironment(e.currentTarget.value as Environment)}
        >
          <option value="PRODUCTION">production</option>
          <option value="DEVELOPMENT">development</option>
        </select>
        <label for={id('value')}>Value</label>
        <input
          id={id('value')}
          value={fields.value}
          {...(valueType === 'password'
            ? { type: 'password', autocomplete: 'new-password' }
            : { autocomplete: 'off', spellcheck: false })}
          onInput={(e) => fields.setValue(e.currentTarget.value)}
        />
      </div>
      <button type="submit" class="primary" disabled={!ready}>
        {submit}
      </button>
    </form>
  );
}
