/*
 * /manage/workers — domains with their workers (who was seen when, who is polling now), and the
 * jobs waiting, locked or backing off, each linked to the execution and node it belongs to
 * (GET /jobs/workers, GET /jobs: permission WORKFLOW_READ). Read again every five seconds.
 */
import type { DomainHealth, JobView } from '../../../shared/api/jobs.js';
import { calls } from '../../../shared/api/calls/index.js';
import { adminPage } from '../../components/admin-shell.js';
import { DataTable } from '../../components/data-table.js';
import { ReadState } from '../../components/read-state.js';
import { useApi } from '../../hooks/use-api.js';
import { useEvery } from '../../hooks/use-every.js';
import { formatTime } from '../../model/format.js';

/** A domain's state as a badge class (its word is shown too, never the colour alone). */
const DOMAIN_STATE: Readonly<Record<DomainHealth['state'], string>> = {
  active: 'state-completed',
  stalled: 'state-failed',
  idle: 'state-cancelled',
};
const JOB_STATE: Readonly<Record<JobView['state'], string>> = {
  waiting: 'state-waiting',
  locked: 'state-running',
  backoff: 'state-timedOut',
};

/** How many jobs the page lists. */
const JOB_LIMIT = 200;

function DomainsTable({ items, showOrg }: { readonly items: readonly DomainHealth[]; readonly showOrg: boolean }) {
  return (
    <DataTable
      class="domains"
      caption="Domains and their workers"
      columns={[
        'Domain',
        showOrg && 'Organization',
        'State',
        'Waiting',
        'Locked',
        'Workers (last seen)',
        'Oldest waiting',
      ]}
    >
      {items.map((d) => (
        <tr key={`${d.organization}/${d.domain}`} data-domain={d.domain}>
          <th scope="row">{d.domain}</th>
          {showOrg && <td>{d.organization}</td>}
          <td>
            <span class={`badge ${DOMAIN_STATE[d.state]}`}>{d.state}</span>
            {d.state === 'stalled' && <div class="muted">jobs wait and no worker was seen for a minute</div>}
          </td>
          <td>{d.waiting}</td>
          <td>{d.locked}</td>
          <td>
            {d.workers.length === 0 ? (
              <span class="muted">none seen</span>
            ) : (
              <ul class="plain-list">
                {d.workers.map((w) => (
                  <li key={w.worker}>
                    <code>{w.worker}</code> <span class="muted">{formatTime(w.lastSeen)}</span>
                    {w.polling && <span class="tag">polling</span>}
                  </li>
                ))}
              </ul>
            )}
          </td>
          <td>{d.oldestWaiting ? formatTime(d.oldestWaiting) : <span class="muted">none</span>}</td>
        </tr>
      ))}
    </DataTable>
  );
}

function JobsTable({ items, showOrg }: { readonly items: readonly JobView[]; readonly showOrg: boolean }) {
  return (
    <DataTable
      class="jobs"
      caption="Jobs waiting for a worker or held by one"
      columns={['Job', showOrg && 'Organization', 'State', 'Worker', 'Attempt', 'Created', 'Execution']}
    >
      {items.map((j) => (
        <tr key={j.key} data-job={j.key}>
          <th scope="row">
            <code>{`${j.domain}/${j.action}`}</code>
            {j.lastError && <div class="error-text">{`${j.lastError.code}: ${j.lastError.message}`}</div>}
          </th>
          {showOrg && <td>{j.organization}</td>}
          <td>
            <span class={`badge ${JOB_STATE[j.state]}`}>{j.state}</span>
            {j.state === 'locked' && j.lockedUntil && <div class="muted">{`until ${formatTime(j.lockedUntil)}`}</div>}
            {j.state === 'backoff' && j.notBefore && <div class="muted">{`not before ${formatTime(j.notBefore)}`}</div>}
          </td>
          <td>{j.worker === null ? <span class="muted">none</span> : <code>{j.worker}</code>}</td>
          <td>{`${j.attempt} of ${j.maxAttempts}`}</td>
          <td>{formatTime(j.createdAt)}</td>
          <td>
            <a
              href={`/executions/${encodeURIComponent(j.processInstanceId)}?node=${encodeURIComponent(j.nodeId)}`}
              aria-label={`Execution ${j.processInstanceId} of ${j.processName}, at node ${j.nodeId}`}
            >
              {j.processName}
            </a>{' '}
            <span class="muted">{j.nodeId}</span>
          </td>
        </tr>
      ))}
    </DataTable>
  );
}

function Workers({ system }: { readonly system: boolean }) {
  const domains = useApi(calls.jobs.workers());
  const jobs = useApi(calls.jobs.list({ limit: JOB_LIMIT }));
  useEvery(5000, () => {
    domains.reload();
    jobs.reload();
  });
  const domainItems = domains.data?.items ?? [];
  const jobItems = jobs.data?.items ?? [];
  const stalled = domainItems.filter((d) => d.state === 'stalled').length;
  return (
    <>
      <section class="admin-section" aria-labelledby="domains-title">
        <h2 id="domains-title">Domains</h2>
        <ReadState
          read={domains}
          what="The domains"
          empty={domainItems.length === 0 && 'No domains registered (wfx domains register).'}
        />
        {stalled > 0 && <p class="notice">{`${stalled} stalled: jobs wait and no worker was seen for a minute.`}</p>}
        {domainItems.length > 0 && <DomainsTable items={domainItems} showOrg={system} />}
      </section>
      <section class="admin-section" aria-labelledby="jobs-title">
        <h2 id="jobs-title">Jobs</h2>
        <ReadState read={jobs} what="The jobs" empty={jobItems.length === 0 && 'No job waits for a worker.'} />
        {jobItems.length > 0 && <JobsTable items={jobItems} showOrg={system} />}
        {jobs.data?.more && <p class="muted">{`The oldest ${JOB_LIMIT} are shown (wfx jobs list for more).`}</p>}
      </section>
    </>
  );
}

/** The workers and jobs page. */
export default adminPage('Workers and jobs', 'WORKFLOW_READ', (me) => <Workers system={me.system} />);
