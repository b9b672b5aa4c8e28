/*
 * /triggers — what starts executions by itself: every active flow version's triggers with their
 * health (GET /admin/triggers: a schedule's next fire times, the reason for anything not firing),
 * a flow's schedules paused and resumed there (WORKFLOW_PUBLISH); for ADMIN sessions also the email connections' state and the webhook registrations, each
 * leading to its delivery log.
 */
import { useState } from 'preact/hooks';
import { calls } from '../../shared/api/calls/index.js';
import type { ScheduleHealth, TriggerHealth } from '../../shared/api/triggers.js';
import { send } from '../api/http.js';
import { DataTable } from '../components/data-table.js';
import { ReadState } from '../components/read-state.js';
import { SaidNote } from '../components/said-note.js';
import { useApi } from '../hooks/use-api.js';
import { useSaid } from '../hooks/use-said.js';
import { useMay } from '../hooks/use-session.js';
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

/** A schedule's Pause or Resume button: pausing turns off every schedule of its flow in its environment. */
function PauseButton(props: {
  readonly t: ScheduleHealth;
  readonly busy: boolean;
  readonly toggle: (t: ScheduleHealth) => void;
}) {
  const { t } = props;
  const word = t.state === 'disabled' ? 'Resume' : 'Pause';
  return (
    <button
      type="button"
      disabled={props.busy}
      onClick={() => props.toggle(t)}
      aria-label={`${word} the schedules of ${t.flowName} in ${t.environment}`}
    >
      {word}
    </button>
  );
}

/** The health table; with `toggle`, each schedule's Pause or Resume button. */
function HealthTable(props: {
  readonly items: readonly TriggerHealth[];
  readonly busy: boolean;
  readonly toggle: ((t: ScheduleHealth) => void) | null;
}) {
  const { items, toggle } = props;
  const columns = ['Flow', 'Environment', 'Trigger', 'State', 'Last fire', 'Next fires', 'Why it does not fire'];
  return (
    <DataTable
      class="triggers"
      caption="Triggers of the active flow versions and their health"
      columns={toggle ? [...columns, { hidden: 'Actions' }] : columns}
    >
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
          {toggle && (
            <td class="row-actions">
              {t.type === 'schedule' && t.state !== 'failing' && (
                <PauseButton t={t} busy={props.busy} toggle={toggle} />
              )}
            </td>
          )}
        </tr>
      ))}
    </DataTable>
  );
}

/** The email connections' state (ADMIN). */
function EmailConnections() {
  const list = useApi(calls.emailConnections.list());
  if (list.error || !list.data || list.data.items.length === 0)
    return <ReadState read={list} what="The email connections" empty="No email connections." />;
  return (
    <DataTable
      caption="Email connections and their state"
      columns={['Name', 'Mailbox', 'State', 'Last poll', 'Last error']}
    >
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
    </DataTable>
  );
}

/** The webhook registrations (ADMIN), each a link to its delivery log. */
function Webhooks() {
  const list = useApi(calls.webhooks.list());
  if (list.error || !list.data || list.data.items.length === 0)
    return <ReadState read={list} what="The webhooks" empty="No webhook registrations." />;
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
  const health = useApi(calls.triggers.list());
  useTitle('Triggers');
  // The daemon refuses the registrations and mailboxes without ADMIN; the page does not ask.
  const admin = useMay('ADMIN');
  const publisher = useMay('WORKFLOW_PUBLISH');
  const [busy, setBusy] = useState(false);
  const { said, attempt } = useSaid();
  const toggle = async (t: ScheduleHealth) => {
    const resume = t.state === 'disabled';
    const body = { environment: t.environment };
    setBusy(true);
    await attempt(
      () => send(resume ? calls.schedules.resume(t.processId, body) : calls.schedules.pause(t.processId, body)),
      `The schedules of ${t.flowName} in ${t.environment} ${resume ? 'fire again' : 'are paused'}.`,
      `The schedules of ${t.flowName} were not ${resume ? 'resumed' : 'paused'}`,
    );
    setBusy(false);
    health.reload();
  };
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
        <ReadState
          read={health}
          what="Trigger health"
          empty={items.length === 0 && 'No active flow version has a trigger.'}
        />
        <SaidNote said={said} />
        {items.length > 0 && <HealthTable items={items} busy={busy} toggle={publisher ? toggle : null} />}
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
