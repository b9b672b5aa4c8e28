/* /flows — every flow the session may see: the version active in each environment, its triggers, its versions. */
import { calls } from '../../shared/api/calls/index.js';
import type { FlowSummary } from '../../shared/api/flows.js';
import { ReadTable } from '../components/read-table.js';
import { useApi } from '../hooks/use-api.js';
import { useMay } from '../hooks/use-session.js';
import { useTitle } from '../hooks/use-title.js';
import { formatTime } from '../model/format.js';
import { ENVIRONMENT_NAMES } from '../model/filters.js';

/** Whether a flow is meant to be started by hand: an on-demand trigger, or no trigger at all. */
const onDemand = (f: FlowSummary) => f.triggers.length === 0 || f.triggers.includes('on-demand');

/** The flows page. */
export default function FlowsPage() {
  const flows = useApi(calls.flows.list());
  // The daemon refuses a start without WORKFLOW_EXECUTE whatever the page shows.
  const mayExecute = useMay('WORKFLOW_EXECUTE');
  useTitle('Flows');
  const items = [...(flows.data?.items ?? [])].sort((a, b) => a.processId.localeCompare(b.processId));
  return (
    <>
      <div class="page-head">
        <h1>Flows</h1>
      </div>
      <ReadTable
        read={flows}
        items={items}
        what="The flows"
        empty="No flows published yet (wfx flow publish)."
        class="flows"
        caption="Flows and their active versions"
        columns={[
          'Flow',
          ...ENVIRONMENT_NAMES.map((env) => `Active in ${env.toLowerCase()}`),
          'Triggers',
          'Versions',
          'Last published',
          { hidden: 'Executions' },
          mayExecute && { hidden: 'Run' },
        ]}
        row={(f) => {
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
        }}
      />
    </>
  );
}
