/*
 * /manage/sessions — console sessions open on this daemon (GET /admin/sessions: permission ADMIN;
 * the caller's organization, a system admin all): how each signed in, as whom, when last seen;
 * Revoke ends one (asked first).
 */
import { useState } from 'preact/hooks';
import type { SessionInfo } from '../../../shared/api/console.js';
import { api, path } from '../../api/http.js';
import { AdminShell } from '../../components/admin-shell.js';
import { ConfirmDialog } from '../../components/confirm-dialog.js';
import { useApi } from '../../hooks/use-api.js';
import { formatTime } from '../../model/format.js';

const METHOD_WORDS: Readonly<Record<SessionInfo['method'], string>> = {
  link: 'one-time link',
  apiKey: 'API key',
  oidc: 'identity provider',
};

function Sessions() {
  const sessions = useApi<{ items: readonly SessionInfo[] }>('/admin/sessions');
  const [revoking, setRevoking] = useState<SessionInfo | null>(null);
  const [said, setSaid] = useState('');
  const items = sessions.data?.items ?? [];
  const revoke = async (s: SessionInfo) => {
    try {
      await api(path`/admin/sessions/${s.id}/revoke`, { method: 'POST', body: {} });
      setSaid(`Session ${s.id} ended.`);
    } catch (e) {
      setSaid(`Session ${s.id} was not ended: ${e instanceof Error ? e.message : String(e)}`);
    }
    sessions.reload();
  };
  return (
    <>
      <p aria-live="polite" class="muted">
        {said}
      </p>
      {sessions.error && (
        <p role="alert" class="error-text">{`The sessions cannot be read: ${sessions.error.message}`}</p>
      )}
      {!sessions.data && !sessions.error && <p class="muted">Loading…</p>}
      {items.length > 0 && (
        <div class="table-scroll">
          <table class="sessions">
            <caption class="visually-hidden">Console sessions</caption>
            <thead>
              <tr>
                <th scope="col">Session</th>
                <th scope="col">Signed in with</th>
                <th scope="col">As</th>
                <th scope="col">Organization</th>
                <th scope="col">Created</th>
                <th scope="col">Last seen</th>
                <th scope="col">Expires</th>
                <th scope="col">
                  <span class="visually-hidden">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {items.map((s) => (
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
              ))}
            </tbody>
          </table>
        </div>
      )}
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
export default function SessionsPage() {
  return (
    <AdminShell title="Console sessions" needs="ADMIN">
      {() => <Sessions />}
    </AdminShell>
  );
}
