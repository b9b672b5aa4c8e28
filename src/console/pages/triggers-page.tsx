/*
 * /triggers — what starts executions by itself: every active flow version's triggers with their
 * health (GET /admin/triggers: a schedule's next fire times, the reason for anything not firing);
 * for ADMIN sessions also the email connections' state and the webhook registrations, each
 * leading to its delivery log.
 */
import type { ConnectionView } from '../../shared/api/email-connections.js';
import type { WhoAmI } from '../../shared/api/meta.js';
import type { TriggerHealth, TriggerList } from '../../shared/api/triggers.js';
import type { WebhookList } from '../../shared/api/webhooks.js';
import { useApi } from '../hooks/use-api.js';
import { useTitle } from '../hooks/use-title.js';
import { formatTime } from '../model/format.js';
import { notFiringReason, TRIGGER_STATE_CLASS, triggerWords } from '../model/triggers.js';

/** A trigger's state as a badge: its word, coloured. */
function TriggerState({ state }: { readonly state: TriggerHealth['state'] }) {
  return <span class={`badge ${TRIGGER_STATE_CLASS[state]}`}>{state}</span>;
}

/** When a trigger fires next: a schedule's next fire times, else a dash. */
function NextFires({ t }: { readonly t: TriggerHealth }) {
  if (t.type !== 'schedule' || t.nextFires.length === 0) return <span class="muted">—</span>;
  return (
    <ol class="next-fires" aria-label={`Next fire times of ${t.flowName}`}>
      {t.nextFires.map((at) => (
        <li key={at}>
          <time dateTime={at}>{formatTime(at)}</time>
        </li>
      ))}
    </ol>
  );
}

/** The health table. */
function HealthTable({ items }: { readonly items: readonly TriggerHealth[] }) {
  return (
    <div class="table-scroll">
      <table class="triggers">
        <caption class="visually-hidden">Triggers of the active flow versions and their health</caption>
        <thead>
          <tr>
            <th scope="col">Flow</th>
            <th scope="col">Environment</th>
            <th scope="col">Trigger</th>
            <th scope="col">State</th>
            <th scope="col">Last fire</th>
            <th scope="col">Next fires</th>
            <th scope="col">Why it does not fire</th>
          </tr>
        </thead>
        <tbody>
          {items.map((t, i) => (
            <tr key={`${t.processId}/${t.environment}/${t.type}/${i}`}>
              <th scope="row">
                <a href={`/flows/${encodeURIComponent(t.processId)}`}>{t.flowName}</a>{' '}
                <span class="muted">{`v${t.version}`}</span>
              </th>
              <td>{t.environment}</td>
              <td>{triggerWords(t)}</td>
              <td>
                <TriggerState state={t.state} />
              </td>
              <td>{t.lastFire ? formatTime(t.lastFire) : <span class="muted">never</span>}</td>
              <td>
                <NextFires t={t} />
              </td>
              <td>{notFiringReason(t) ?? ''}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/** The email connections' state (ADMIN). */
function EmailConnections() {
  const list = useApi<{ items: ConnectionView[] }>('/admin/email-connections');
  if (list.error)
    return <p role="alert" class="error-text">{`The email connections cannot be read: ${list.error.message}`}</p>;
  if (!list.data) return <p class="muted">Loading…</p>;
  if (list.data.items.length === 0) return <p class="muted">No email connections.</p>;
  return (
    <div class="table-scroll">
      <table>
        <caption class="visually-hidden">Email connections and their state</caption>
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">Mailbox</th>
            <th scope="col">State</th>
            <th scope="col">Last poll</th>
            <th scope="col">Last error</th>
          </tr>
        </thead>
        <tbody>
          {list.data.items.map((c) => {
            const s = c.state;
            const word = !s || !s.watched ? 'not watched' : s.connected ? 'connected' : 'not connected';
            const cls = !s || !s.watched ? '' : s.connected ? 'state-completed' : 'state-failed';
            return (
              <tr key={c.connectionId}>
                <th scope="row">{c.name}</th>
                <td>{`${c.user} @ ${c.host}:${c.port} ${c.mailbox}`}</td>
                <td>
                  <span class={`badge ${cls}`}>{word}</span>
                </td>
                <td>{s?.lastPoll ? formatTime(s.lastPoll) : <span class="muted">never</span>}</td>
                <td>{s?.lastError ?? ''}</td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </div>
  );
}

/** The webhook registrations (ADMIN), each a link to its delivery log. */
function Webhooks() {
  const list = useApi<WebhookList>('/admin/webhooks');
  if (list.error) return <p role="alert" class="error-text">{`The webhooks cannot be read: ${list.error.message}`}</p>;
  if (!list.data) return <p class="muted">Loading…</p>;
  if (list.data.items.length === 0) return <p class="muted">No webhook registrations.</p>;
  return (
    <ul class="webhook-list">
      {list.data.items.map((w) => (
        <li key={w.webhookId}>
          <a href={`/triggers/webhooks/${encodeURIComponent(w.name)}`}>{w.name}</a>{' '}
          <span class="muted">{`${w.provider} · ${w.endpoints.map((e) => e.environment).join(', ')}`}</span>
        </li>
      ))}
    </ul>
  );
}

/** The triggers page. */
export default function TriggersPage() {
  const health = useApi<TriggerList>('/admin/triggers');
  const me = useApi<WhoAmI>('/auth/whoami');
  useTitle('Triggers');
  // The daemon refuses the registrations and mailboxes without ADMIN; the page does not ask.
  const admin = me.data?.permissions.includes('ADMIN') ?? false;
  const items = health.data?.items ?? [];
  const notFiring = items.filter((t) => t.state !== 'active').length;
  return (
    <>
      <div class="page-head">
        <h1>Triggers</h1>
        {health.data && (
          <span class="muted">{`${items.length} trigger${items.length === 1 ? '' : 's'}, ${notFiring} not active`}</span>
        )}
      </div>
      <section aria-labelledby="health-title">
        <h2 id="health-title">Trigger health</h2>
        {health.error && (
          <p role="alert" class="error-text">{`Trigger health cannot be read: ${health.error.message}`}</p>
        )}
        {!health.data && !health.error && <p class="muted">Loading…</p>}
        {health.data && items.length === 0 && <p class="muted">No active flow version has a trigger.</p>}
        {items.length > 0 && <HealthTable items={items} />}
      </section>
      {admin && (
        <>
          <section aria-labelledby="webhooks-title">
            <h2 id="webhooks-title">Webhook registrations</h2>
            <Webhooks />
          </section>
          <section aria-labelledby="email-title">
            <h2 id="email-title">Email connections</h2>
            <EmailConnections />
          </section>
        </>
      )}
    </>
  );
}
