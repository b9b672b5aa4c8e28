/* /flows — every flow the session may see: the version active in each environment, its triggers, its versions. */
import type { FlowList, FlowSummary } from '../../shared/api/flows.js';
import type { WhoAmI } from '../../shared/api/meta.js';
import { useApi } from '../hooks/use-api.js';
import { useTitle } from '../hooks/use-title.js';
import { formatTime } from '../model/format.js';
import { ENVIRONMENT_NAMES } from '../model/filters.js';

/** Whether a flow is meant to be started by hand: an on-demand trigger, or no trigger at all. */
const onDemand = (f: FlowSummary) => f.triggers.length === 0 || f.triggers.includes('on-demand');

/** The flows page. */
export default function FlowsPage() {
  const flows = useApi<FlowList>('/admin/flows');
  // The daemon refuses a start without WORKFLOW_EXECUTE whatever the page shows.
  const me = useApi<WhoAmI>('/auth/whoami');
  const mayExecute = me.data?.permissions.includes('WORKFLOW_EXECUTE') ?? false;
  useTitle('Flows');
  const items = [...(flows.data?.items ?? [])].sort((a, b) => a.processId.localeCompare(b.processId));
  return (
    <>
      <div class="page-head">
        <h1>Flows</h1>
      </div>
      {flows.error && <p role="alert" class="error-text">{`The flows cannot be read: ${flows.error.message}`}</p>}
      {!flows.data && !flows.error && <p class="muted">Loading…</p>}
      {flows.data && items.length === 0 && <p class="muted">No flows published yet (wfx flow publish).</p>}
      {items.length > 0 && (
        <div class="table-scroll">
          <table class="flows">
            <caption class="visually-hidden">Flows and their active versions</caption>
            <thead>
              <tr>
                <th scope="col">Flow</th>
                {ENVIRONMENT_NAMES.map((env) => (
                  <th key={env} scope="col">{`Active in ${env.toLowerCase()}`}</th>
                ))}
                <th scope="col">Triggers</th>
                <th scope="col">Versions</th>
                <th scope="col">Last published</th>
                <th scope="col">
                  <span class="visually-hidden">Executions</span>
                </th>
                {mayExecute && (
                  <th scope="col">
                    <span class="visually-hidden">Run</span>
                  </th>
                )}
              </tr>
            </thead>
            <tbody>
              {items.map((f) => {
                const latest = f.versions.at(-1);
                return (
                  <tr key={`${f.organization}/${f.processId}`}>
                    <th scope="row">
                      <a href={`/flows/${encodeURIComponent(f.processId)}`}>{f.name}</a>{' '}
                      <span class="muted">{f.processId}</span>
                    </th>
                    {ENVIRONMENT_NAMES.map((env) => (
                      <td key={env}>
                        {f.active[env] !== undefined ? (
                          <a
                            href={`/flows/${encodeURIComponent(f.processId)}?version=${f.active[env]}`}
                          >{`v${f.active[env]}`}</a>
                        ) : (
                          <span class="muted">none</span>
                        )}
                      </td>
                    ))}
                    <td>{f.triggers.length === 0 ? <span class="muted">none</span> : f.triggers.join(', ')}</td>
                    <td>{f.versions.length}</td>
                    <td>{latest ? <time dateTime={latest.publishedAt}>{formatTime(latest.publishedAt)}</time> : ''}</td>
                    <td>
                      <a href={`/executions?processId=${encodeURIComponent(f.processId)}`}>
                        executions<span class="visually-hidden">{` of ${f.name}`}</span>
                      </a>
                    </td>
                    {mayExecute && (
                      <td>
                        {onDemand(f) && (
                          <a class="button-link" href={`/flows/${encodeURIComponent(f.processId)}/run`}>
                            Run<span class="visually-hidden">{` ${f.name}`}</span>
                          </a>
                        )}
                      </td>
                    )}
                  </tr>
                );
              })}
            </tbody>
          </table>
        </div>
      )}
    </>
  );
}
