/*
 * /manage/secrets — the values flows name as `{secret.NAME}` (GET, PUT and DELETE
 * /admin/secrets/values: permission ADMIN): their names, environments and when each was set,
 * never a value. A value is typed into a password field, sent once, sealed by the daemon, and
 * the field emptied: no read gives it back, here or anywhere.
 */
import { useState } from 'preact/hooks';
import type { Environment, FlowSecretView } from '../../../shared/api/index.js';
import { calls } from '../../../shared/api/calls/index.js';
import { SECRET_NAME } from '../../../shared/flow/secret-refs.js';
import { send } from '../../api/http.js';
import { adminPage } from '../../components/admin-shell.js';
import { ConfirmDialog } from '../../components/confirm-dialog.js';
import { NamedValueForm } from '../../components/named-value-form.js';
import { ReadTable } from '../../components/read-table.js';
import { SaidNote } from '../../components/said-note.js';
import { useApi } from '../../hooks/use-api.js';
import { useSaid } from '../../hooks/use-said.js';
import { formatTime } from '../../model/format.js';

function Secrets() {
  const secrets = useApi(calls.secrets.list());
  const { said, attempt } = useSaid();
  const [name, setName] = useState('');
  const [environment, setEnvironment] = useState<Environment>('PRODUCTION');
  const [value, setValue] = useState('');
  const [deleting, setDeleting] = useState<FlowSecretView | null>(null);
  const items = secrets.data?.items ?? [];
  const nameOk = SECRET_NAME.test(name);

  const submit = async () => {
    const set = () => send(calls.secrets.set(name, { value, environment }));
    // The value leaves the page whatever the answer: it is typed again rather than kept.
    setValue('');
    if (await attempt(set, `Secret ${name} set in ${environment}.`, `Secret ${name} was not set`)) setName('');
    secrets.reload();
  };
  const remove = async (s: FlowSecretView) => {
    const gone = () => send(calls.secrets.delete(s.name, { environment: s.environment, organization: s.organization }));
    await attempt(gone, `Secret ${s.name} removed from ${s.environment}.`, `Secret ${s.name} was not removed`);
    secrets.reload();
  };

  return (
    <>
      <p>
        A serviceTask names one as <code>{'{secret.NAME}'}</code> in its url, headers, query or body; the daemon fills
        it in as the call goes out. Values are sealed as they arrive and never shown again, here or anywhere.
      </p>
      <SaidNote said={said} />
      <ReadTable
        read={secrets}
        items={items}
        what="The secrets"
        class="secrets"
        caption="Flow secrets"
        columns={['Name', 'Environment', 'Organization', 'Set', { hidden: 'Actions' }]}
        row={(s) => (
          <tr key={`${s.organization}/${s.environment}/${s.name}`}>
            <th scope="row">
              <code>{s.name}</code>
            </th>
            <td>{s.environment.toLowerCase()}</td>
            <td>{s.organization}</td>
            <td>{formatTime(s.updatedAt)}</td>
            <td>
              <button
                type="button"
                onClick={() => setDeleting(s)}
                aria-label={`Remove secret ${s.name} from ${s.environment.toLowerCase()}`}
              >
                Remove
              </button>
            </td>
          </tr>
        )}
      />
      <NamedValueForm
        idBase="secret"
        title="Set a secret"
        submit="Set secret"
        valueType="password"
        ready={nameOk && value !== ''}
        fields={{ name, environment, value, setName, setEnvironment, setValue }}
        onSubmit={() => void submit()}
      />
      <ConfirmDialog
        open={deleting !== null}
        titleId="remove-secret-title"
        title={deleting ? `Remove secret ${deleting.name}?` : 'Remove secret?'}
        message="A call that names it then fails with SECRET_NOT_FOUND, until it is set again."
        confirm="Remove"
        dismiss="Keep it"
        onAnswer={(yes) => {
          const s = deleting;
          setDeleting(null);
          if (yes && s) void remove(s);
        }}
      />
    </>
  );
}

/** The flow secrets page. */
export default adminPage('Flow secrets', 'ADMIN', () => <Secrets />);
