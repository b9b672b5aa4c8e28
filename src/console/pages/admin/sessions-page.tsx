/*
 * /manage/sessions — console sessions open on this daemon (GET /admin/sessions: permission ADMIN;
 * the caller's organization, a system admin all): how each signed in, as whom, when last seen;
 * Revoke ends one (asked first).
 */
import { useState } from 'preact/hooks';
import { calls } from '../../../shared/api/calls/index.js';
import type { SessionInfo } from '../../../shared/api/console.js';
import { send } from '../../api/http.js';
import { adminPage } from '../../components/admin-shell.js';
import { ConfirmDialog } from '../../components/confirm-dialog.js';
import { ReadTable } from '../../components/read-table.js';
import { SaidNote } from '../../components/said-note.js';
import { useApi } from '../../hooks/use-api.js';
import { useSaid } from '../../hooks/use-said.js';
import { formatTime } from '../../model/format.js';

const METHOD_WORDS: Readonly<Record<SessionInfo['method'], string>> = {
  link: 'one-time link',
  apiKey: 'API key',
  oidc: 'identity provider',
};

function Sessions() {
  const sessions = useApi(calls.sessions.list());
  const [revoking, setRevoking] = useState<SessionInfo | null>(null);
  const { said, attempt } = useSaid();
  const items = sessions.data?.items ?? [];
  const revoke = async (s: SessionInfo) => {
    await attempt(() => send(calls.sessions.revoke(s.id)), `Session ${s.id} ended.`, `Session ${s.id} was not ended`);
    sessions.reload();
  };
  return (
    <>
      <SaidNote said={said} />
      <ReadTable
        read={sessions}
        items={items}
        what="The sessions"
        class="sessions"
        caption="Console sessions"
        columns={[
          'Session',
          'Signed in with',
          'As',
          'Organization',
          'Created',
          'Last seen',
          'Expires',
          { hidden: 'Actions' },
        ]}
        row={(s) => (
          <tr key={s.id} data-session={s.id}>
            <th scope="row">
              <code>{s.id}</code>
            </th>
            <td>{METHOD_WORDS[s.method]}</td>
            <td>{s.keyId !== undefined ? `key ${s.keyId}` : (s.subject ?? '')}</td>
            <td>{s.organization ?? <span class="muted">system</span>}</td>
            <td>{formatTime(s.createdAt)}</td>
            <td>{formatTime(s.lastSeenAt)}</td>
            <td>{formatTime(s.expiresAt)}</td>
            <td>
              <button type="button" onClick={() => setRevoking(s)} aria-label={`Revoke session ${s.id}`}>
                Revoke
              </button>
            </td>
          </tr>
        )}
      />
      <ConfirmDialog
        open={revoking !== null}
        title="End this session?"
        message="Its browser is signed out at its next request (your own session too, if it is this one)."
        confirm="End session"
        dismiss="Keep it"
        onAnswer={(yes) => {
          const s = revoking;
          setRevoking(null);
          if (yes && s) void revoke(s);
        }}
      />
    </>
  );
}

/** The console sessions page. */
export default adminPage('Console sessions', 'ADMIN', () => <Sessions />);
