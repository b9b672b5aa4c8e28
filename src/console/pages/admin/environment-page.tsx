/*
 * /manage/environment — the values flows read as `{env.NAME}`, per environment (GET, PUT and
 * DELETE /admin/environments/{env}/variables: permission ADMIN): each one's name, environment
 * and value, set and removed here. A serviceTask naming one that is unset fails with
 * ENV_NOT_SET; `?name=NAME&environment=ENV` (the execution page's link from such a failure)
 * opens the form filled in for it, so the value is set and the run retried from where it shows.
 */
import { useState } from 'preact/hooks';
import { useLocation } from 'preact-iso/router';
import type { Environment } from '../../../shared/api/index.js';
import { calls } from '../../../shared/api/calls/index.js';
import { send } from '../../api/http.js';
import { adminPage } from '../../components/admin-shell.js';
import { ConfirmDialog } from '../../components/confirm-dialog.js';
import { NamedValueForm } from '../../components/named-value-form.js';
import { ReadTable } from '../../components/read-table.js';
import { SaidNote } from '../../components/said-note.js';
import { useApi } from '../../hooks/use-api.js';
import { useSaid } from '../../hooks/use-said.js';

/** An env value's name: what `{env.NAME}` can name. */
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

interface Row {
  readonly environment: Environment;
  readonly name: string;
  readonly value: string;
}

function Values() {
  const { query } = useLocation();
  const production = useApi(calls.environments.variables('PRODUCTION'));
  const development = useApi(calls.environments.variables('DEVELOPMENT'));
  const { said, attempt } = useSaid();
  const [name, setName] = useState(ENV_NAME.test(query.name ?? '') ? query.name! : '');
  const [environment, setEnvironment] = useState<Environment>(
    query.environment === 'DEVELOPMENT' ? 'DEVELOPMENT' : 'PRODUCTION',
  );
  const [value, setValue] = useState('');
  const [removing, setRemoving] = useState<Row | null>(null);
  const reload = () => {
    production.reload();
    development.reload();
  };
  const rows: Row[] = [production, development].flatMap((read) =>
    read.data
      ? Object.entries(read.data.variables)
          .sort(([a], [b]) => a.localeCompare(b))
          .map(([n, v]) => ({ environment: read.data!.environment, name: n, value: v }))
      : [],
  );
  const submit = async () => {
    const set = () => send(calls.environments.set(environment, name, value));
    if (await attempt(set, `${name} set in ${environment}.`, `${name} was not set`)) {
      setName('');
      setValue('');
    }
    reload();
  };
  const remove = async (r: Row) => {
    const gone = () => send(calls.environments.unset(r.environment, r.name));
    await attempt(gone, `${r.name} removed from ${r.environment}.`, `${r.name} was not removed`);
    reload();
  };
  // Both reads fail alike (no ADMIN, the daemon away): one says why.
  const read = production.error ? production : development;

  return (
    <>
      <p>
        A flow reads a value as <code>{'{env.NAME}'}</code>, in the environment its execution runs in: a serviceTask's
        url, say. A serviceTask that names one with no value there fails with <code>ENV_NOT_SET</code>; set it here and
        retry the run. A credential belongs in <a href="/manage/secrets">Flow secrets</a>, sealed and never shown.
      </p>
      <SaidNote said={said} />
      <ReadTable
        read={read}
        items={rows}
        what="The environment values"
        empty="No values in either environment."
        class="env-values"
        caption="Environment values"
        columns={['Name', 'Environment', 'Value', { hidden: 'Actions' }]}
        row={(r) => (
          <tr key={`${r.environment}/${r.name}`}>
            <th scope="row">
              <code>{r.name}</code>
            </th>
            <td>{r.environment.toLowerCase()}</td>
            <td>
              <code class="env-value">{r.value}</code>
            </td>
            <td class="row-actions">
              <button
                type="button"
                onClick={() => {
                  setName(r.name);
                  setEnvironment(r.environment);
                  setValue(r.value);
                  document.getElementById('env-value')?.focus();
                }}
                aria-label={`Change ${r.name} in ${r.environment.toLowerCase()}`}
              >
                Change
              </button>
              <button
                type="button"
                onClick={() => setRemoving(r)}
                aria-label={`Remove ${r.name} from ${r.environment.toLowerCase()}`}
              >
                Remove
              </button>
            </td>
          </tr>
        )}
      />
      <NamedValueForm
        idBase="env"
        title="Set a value"
        submit="Set value"
        valueType="text"
        ready={ENV_NAME.test(name)}
        fields={{ name, environment, value, setName, setEnvironment, setValue }}
        onSubmit={() => void submit()}
      />
      <ConfirmDialog
        open={removing !== null}
        titleId="remove-env-title"
        title={removing ? `Remove ${removing.name} from ${removing.environment.toLowerCase()}?` : 'Remove the value?'}
        message="A serviceTask that names it then fails with ENV_NOT_SET, until it is set again."
        confirm="Remove"
        dismiss="Keep it"
        onAnswer={(yes) => {
          const r = removing;
          setRemoving(null);
          if (yes && r) void remove(r);
        }}
      />
    </>
  );
}

/** The environment values page. */
export default adminPage('Environment values', 'ADMIN', () => <Values />);
