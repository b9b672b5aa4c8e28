/*
 * /manage/workers — domains with their workers (who was seen when, who is polling now), and the
 * jobs waiting, locked or backing off, each linked to the execution and node it belongs to
 * (GET /jobs/workers, GET /jobs: permission WORKFLOW_READ). Read again every five seconds.
 */
import type { DomainHealth, DomainHealthList, JobList, JobView } from '../../../shared/api/jobs.js';
import { AdminShell } from '../../components/admin-shell.js';
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
    <div class="table-scroll">
      <table class="domains">
        <caption class="visually-hidden">Domains and their workers</caption>
        <thead>
          <tr>
            <th scope="col">Domain</th>
            {showOrg && <th scope="col">Organization</th>}
            <th scope="col">State</th>
            <th scope="col">Waiting</th>
            <th scope="col">Locked</th>
            <th scope="col">Workers (last seen)</th>
            <th scope="col">Oldest waiting</th>
          </tr>
        </thead>
        <tbody>
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
        </tbody>
      </table>
    </div>
  );
}

function JobsTable({ items, showOrg }: { readonly items: readonly JobView[]; readonly showOrg: boolean }) {
  return (
    <div class="table-scroll">
      <table class="jobs">
        <caption class="visually-hidden">Jobs waiting for a worker or held by one</caption>
        <thead>
          <tr>
            <th scope="col">Job</th>
            {showOrg && <th scope="col">Organization</th>}
            <th scope="col">State</th>
            <th scope="col">Worker</th>
            <th scope="col">Attempt</th>
            <th scope="col">Created</th>
            <th scope="col">Execution</th>
          </tr>
        </thead>
        <tbody>
          {items.map((j) => (
            <tr key={j.key} data-job={j.key}>
              <th scope="row">
                <code>{`${j.domain}/${j.action}`}</code>
                {j.lastError && <div class="error-text">{`${j.lastError.code}: ${j.lastError.message}`}</div>}
              </th>
              {showOrg && <td>{j.organization}</td>}
              <td>
                <span class={`badge ${JOB_STATE[j.state]}`}>{j.state}</span>
                {j.state === 'locked' && j.lockedUntil && (
                  <div class="muted">{`until ${formatTime(j.lockedUntil)}`}</div>
                )}
                {j.state === 'backoff' && j.notBefore && (
                  <div class="muted">{`not before ${formatTime(j.notBefore)}`}</div>
                )}
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
        </tbody>
      </table>
    </div>
  );
}

function Workers({ system }: { readonly system: boolean }) {
  const domains = useApi<DomainHealthList>('/jobs/workers');
  const jobs = useApi<JobList>(`/jobs?limit=${JOB_LIMIT}`);
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
        {domains.error && (
          <p role="alert" class="error-text">{`The domains cannot be read: ${domains.error.message}`}</p>
        )}
        {!domains.data && !domains.error && <p class="muted">Loading…</p>}
        {domains.data && domainItems.length === 0 && <p class="muted">No domains registered (wfx domains register).</p>}
        {stalled > 0 && <p class="notice">{`${stalled} stalled: jobs wait and no worker was seen for a minute.`}</p>}
        {domainItems.length > 0 && <DomainsTable items={domainItems} showOrg={system} />}
      </section>
      <section class="admin-section" aria-labelledby="jobs-title">
        <h2 id="jobs-title">Jobs</h2>
        {jobs.error && <p role="alert" class="error-text">{`The jobs cannot be read: ${jobs.error.message}`}</p>}
        {!jobs.data && !jobs.error && <p class="muted">Loading…</p>}
        {jobs.data && jobItems.length === 0 && <p class="muted">No job waits for a worker.</p>}
        {jobItems.length > 0 && <JobsTable items={jobItems} showOrg={system} />}
        {jobs.data?.more && <p class="muted">{`The oldest ${JOB_LIMIT} are shown (wfx jobs list for more).`}</p>}
      </section>
    </>
  );
}

/** The workers and jobs page. */
export default function WorkersPage() {
  return (
    <AdminShell title="Workers and jobs" needs="WORKFLOW_READ">
      {(me) => <Workers system={me.system} />}
    </AdminShell>
  );
}
