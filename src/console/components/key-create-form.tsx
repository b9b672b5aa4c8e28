/*
 * Creating an API key (POST /admin/api-keys): name, role, organization (a system admin's choice;
 * or a system key), rate limits and expiry. The answer's secret is shown once, here, with a copy
 * button: the daemon keeps only its hash, and no later read gives it again.
 */
import { useState } from 'preact/hooks';
import { calls } from '../../shared/api/calls/index.js';
import { ROLES, type CreatedKey, type CreateKeyBody, type Role } from '../../shared/api/keys.js';
import { errorMessage } from '../../shared/errors.js';
import { send } from '../api/http.js';

/** Props of KeyCreateForm. */
type Props = {
  /** The session is a system admin: it names the organization, or makes a system key. */
  readonly system: boolean;
  /** Called with the key once created (the list reads again). */
  readonly onCreated: (key: CreatedKey) => void;
};

/** A whole number from a field, or undefined when it is empty. */
const whole = (text: string): number | undefined => (text.trim() === '' ? undefined : Number(text));

/** The secret of a key just made, and its one chance to be copied. */
export function SecretOnce({ created, onDone }: { readonly created: CreatedKey; readonly onDone: () => void }) {
  const [copied, setCopied] = useState<'no' | 'yes' | 'failed'>('no');
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(created.apiKey);
      setCopied('yes');
    } catch {
      setCopied('failed');
    }
  };
  return (
    <section class="panel secret-once" aria-labelledby="secret-title">
      <h2 id="secret-title" tabIndex={-1}>{`Key ${created.name} created`}</h2>
      <p>
        <strong>Copy its secret now: you will not see it again.</strong> The daemon keeps only its hash.
      </p>
      <label for="new-secret">Secret of the new key</label>
      <div class="secret-row">
        <input id="new-secret" readOnly value={created.apiKey} onFocus={(e) => e.currentTarget.select()} />
        <button type="button" onClick={() => void copy()}>
          Copy
        </button>
      </div>
      <p aria-live="polite" class="muted">
        {copied === 'yes' ? 'Copied.' : copied === 'failed' ? 'The browser did not copy it: select it and copy.' : ''}
      </p>
      <button type="button" onClick={onDone}>
        Done, I have copied it
      </button>
    </section>
  );
}

/** Props of RateLimitField. */
type RateLimitProps = {
  /** The limit's period: its label and its input's id name it. */
  readonly per: 'minute' | 'hour';
  /** The field's text: a whole number, or empty for no limit. */
  readonly value: string;
  readonly onInput: (text: string) => void;
};

/** One of the key's rate limits: its label and number input, two cells of the form's grid. */
function RateLimitField({ per, value, onInput }: RateLimitProps) {
  const id = `key-per-${per}`;
  return (
    <>
      <label for={id}>{`Requests per ${per}`}</label>
      <input
        id={id}
        type="number"
        min={0}
        placeholder="no limit"
        value={value}
        onInput={(e) => onInput(e.currentTarget.value)}
      />
    </>
  );
}

/** The form that makes a key. */
export function KeyCreateForm({ system, onCreated }: Props) {
  const [name, setName] = useState('');
  const [role, setRole] = useState<Role>('operator');
  const [organization, setOrganization] = useState('');
  const [systemKey, setSystemKey] = useState(false);
  const [perMinute, setPerMinute] = useState('');
  const [perHour, setPerHour] = useState('');
  const [expiresIn, setExpiresIn] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    const body: CreateKeyBody = {
      name: name.trim(),
      role,
      ...(system && systemKey && { system: true }),
      ...(system && !systemKey && organization.trim() !== '' && { organization: organization.trim() }),
      ...(whole(perMinute) !== undefined && { rateLimitPerMinute: whole(perMinute)! }),
      ...(whole(perHour) !== undefined && { rateLimitPerHour: whole(perHour)! }),
      ...(expiresIn.trim() !== '' && { expiresIn: expiresIn.trim() }),
    };
    try {
      const created = await send(calls.keys.create(body));
      setName('');
      onCreated(created);
    } catch (err) {
      setError(errorMessage(err));
    } finally {
      setBusy(false);
    }
  };
  return (
    <form class="key-form" aria-labelledby="create-key-title" onSubmit={(e) => void submit(e)}>
      <h2 id="create-key-title">Create a key</h2>
      <div class="form-grid">
        <label for="key-name">Name</label>
        <input id="key-name" required maxLength={200} value={name} onInput={(e) => setName(e.currentTarget.value)} />
        <label for="key-role">Role</label>
        <select id="key-role" value={role} onChange={(e) => setRole(e.currentTarget.value as Role)}>
          {ROLES.map((r) => (
            <option key={r} value={r}>
              {r}
            </option>
          ))}
        </select>
        {system && (
          <>
            <label for="key-org">Organization</label>
            <input
              id="key-org"
              placeholder="default"
              value={organization}
              disabled={systemKey}
              onInput={(e) => setOrganization(e.currentTarget.value)}
            />
            <span />
            <label class="check">
              <input type="checkbox" checked={systemKey} onChange={(e) => setSystemKey(e.currentTarget.checked)} />A
              system key (no organization)
            </label>
          </>
        )}
        <RateLimitField per="minute" value={perMinute} onInput={setPerMinute} />
        <RateLimitField per="hour" value={perHour} onInput={setPerHour} />
        <label for="key-expires">Expires in</label>
        <input
          id="key-expires"
          placeholder="never (e.g. 30d)"
          value={expiresIn}
          onInput={(e) => setExpiresIn(e.currentTarget.value)}
        />
      </div>
      {error && (
        <p role="alert" class="error-text">
          {`The key was not created: ${error}`}
        </p>
      )}
      <button type="submit" class="primary" disabled={busy || name.trim() === ''}>
        Create key
      </button>
    </form>
  );
}
