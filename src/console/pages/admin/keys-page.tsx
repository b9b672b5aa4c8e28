/*
 * /manage/keys — API keys (permission ADMIN; an organization's admin sees its own, a system admin
 * every key): each with its role, organization, limits, dates and status; create one (its secret
 * shown once), suspend and resume, revoke (asked first: for good).
 */
import { useEffect, useState } from 'preact/hooks';
import { calls } from '../../../shared/api/calls/index.js';
import type { ApiKeyStatus, CreatedKey, KeyView } from '../../../shared/api/keys.js';
import { send } from '../../api/http.js';
import { adminPage } from '../../components/admin-shell.js';
import { ConfirmDialog } from '../../components/confirm-dialog.js';
import { KeyCreateForm, SecretOnce } from '../../components/key-create-form.js';
import { ReadTable } from '../../components/read-table.js';
import { SaidNote } from '../../components/said-note.js';
import { useApi } from '../../hooks/use-api.js';
import { useSaid } from '../../hooks/use-said.js';
import { formatTime } from '../../model/format.js';

const STATUS: Readonly<Record<ApiKeyStatus, { readonly word: string; readonly cls: string }>> = {
  ACTIVE: { word: 'active', cls: 'state-completed' },
  SUSPENDED: { word: 'suspended', cls: 'state-waiting' },
  REVOKED: { word: 'revoked', cls: 'state-cancelled' },
};

/** A rate limit as words. */
const limitWords = (k: KeyView) =>
  k.rateLimitPerMinute === null && k.rateLimitPerHour === null
    ? 'none'
    : [
        k.rateLimitPerMinute !== null && `${k.rateLimitPerMinute}/min`,
        k.rateLimitPerHour !== null && `${k.rateLimitPerHour}/h`,
      ]
        .filter(Boolean)
        .join(', ');

/** What can be done to a key, by its status (a revoke is asked first). */
const ACTIONS: readonly {
  readonly word: string;
  readonly action: 'suspend' | 'activate' | 'revoke';
  readonly when: (status: ApiKeyStatus) => boolean;
}[] = [
  { word: 'Suspend', action: 'suspend', when: (s) => s === 'ACTIVE' },
  { word: 'Resume', action: 'activate', when: (s) => s === 'SUSPENDED' },
  { word: 'Revoke', action: 'revoke', when: (s) => s !== 'REVOKED' },
];

function KeyRow(props: {
  readonly k: KeyView;
  /** The key this session signed in with: suspending or revoking it signs the session out. */
  readonly mine: boolean;
  readonly busy: boolean;
  readonly act: (k: KeyView, action: 'suspend' | 'activate') => void;
  readonly revoke: (k: KeyView) => void;
}) {
  const { k } = props;
  return (
    <tr data-key-id={k.keyId}>
      <th scope="row">
        {k.name} <span class="muted">{k.keyId}</span>
        {props.mine && <span class="tag">this session's key</span>}
      </th>
      <td>{k.role}</td>
      <td>{k.system ? <span class="muted">system</span> : k.organization}</td>
      <td>{limitWords(k)}</td>
      <td>{formatTime(k.createdAt)}</td>
      <td>{k.expiresAt ? formatTime(k.expiresAt) : <span class="muted">never</span>}</td>
      <td>
        <span class={`badge ${STATUS[k.status].cls}`}>{STATUS[k.status].word}</span>
      </td>
      <td class="row-actions">
        {ACTIONS.filter((a) => a.when(k.status)).map((a) => (
          <button
            key={a.word}
            type="button"
            disabled={props.busy}
            onClick={() => (a.action === 'revoke' ? props.revoke(k) : props.act(k, a.action))}
            aria-label={`${a.word} ${k.name}`}
          >
            {a.word}
          </button>
        ))}
      </td>
    </tr>
  );
}

function Keys({ system, myKey }: { readonly system: boolean; readonly myKey: string | undefined }) {
  const keys = useApi(calls.keys.list());
  const [created, setCreated] = useState<CreatedKey | null>(null);
  const [revoking, setRevoking] = useState<KeyView | null>(null);
  const [busy, setBusy] = useState(false);
  const { said, attempt } = useSaid();
  useEffect(() => {
    if (created) document.getElementById('secret-title')?.focus();
  }, [created]);
  const change = async (k: KeyView, action: 'suspend' | 'activate' | 'revoke') => {
    setBusy(true);
    await attempt(
      () => send(calls.keys.setStatus(k.keyId, action)),
      `${k.name} ${action === 'activate' ? 'resumed' : action === 'suspend' ? 'suspended' : 'revoked'}.`,
      `${k.name} was not changed`,
    );
    setBusy(false);
    keys.reload();
  };
  const items = [...(keys.data?.items ?? [])].sort((a, b) => b.createdAt.localeCompare(a.createdAt));
  return (
    <>
      {created ? (
        <SecretOnce created={created} onDone={() => setCreated(null)} />
      ) : (
        <KeyCreateForm
          system={system}
          onCreated={(k) => {
            setCreated(k);
            keys.reload();
          }}
        />
      )}
      <section aria-labelledby="keys-title">
        <h2 id="keys-title">Keys</h2>
        <SaidNote said={said} />
        <ReadTable
          read={keys}
          items={items}
          what="The keys"
          class="keys"
          caption="API keys"
          columns={['Key', 'Role', 'Organization', 'Rate limit', 'Created', 'Expires', 'State', { hidden: 'Actions' }]}
          row={(k) => (
            <KeyRow
              key={k.keyId}
              k={k}
              mine={k.keyId === myKey}
              busy={busy}
              act={(key, action) => void change(key, action)}
              revoke={setRevoking}
            />
          )}
        />
      </section>
      <ConfirmDialog
        open={revoking !== null}
        title="Revoke this key?"
        message={
          revoking
            ? `${revoking.name} stops working at once, with every console session signed in with it. A revoked key cannot be resumed.`
            : ''
        }
        confirm="Revoke key"
        dismiss="Keep it"
        onAnswer={(yes) => {
          const k = revoking;
          setRevoking(null);
          if (yes && k) void change(k, 'revoke');
        }}
      />
    </>
  );
}

/** The API keys page. */
export default adminPage('API keys', 'ADMIN', (me) => <Keys system={me.system} myKey={me.keyId} />);
