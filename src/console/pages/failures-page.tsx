/*
 * /failures — failed executions at a glance: grouped by flow, failure code and node (GET
 * /process/failures), each group's count and newest execution, and a link to the list of them.
 */
import { calls } from '../../shared/api/calls/index.js';
import { ReadTable } from '../components/read-table.js';
import { useApi } from '../hooks/use-api.js';
import { useTitle } from '../hooks/use-title.js';
import { formatTime } from '../model/format.js';
import { filtersToQuery } from '../model/filters.js';

/** The failures page. */
export default function FailuresPage() {
  const failures = useApi(calls.instances.failures({ sort: 'count', limit: 200 }));
  useTitle('Failures');
  const groups = failures.data?.groups ?? [];
  return (
    <>
      <div class="page-head">
        <h1>Failures</h1>
        {failures.data && (
          <span class="muted">{`${failures.data.total} failed execution${failures.data.total === 1 ? '' : 's'} in ${failures.data.groupCount} group${failures.data.groupCount === 1 ? '' : 's'}`}</span>
        )}
      </div>
      <ReadTable
        read={failures}
        items={groups}
        what="The failures"
        empty="No failed executions."
        class="failures"
        caption="Failed executions by flow, failure code and node"
        columns={['Count', 'Failure', 'Node', 'Flow', 'Newest', { hidden: 'Executions' }]}
        row={(g) => {
          const list = `/executions${filtersToQuery({
            processId: g.processId,
            state: 'FAILED',
            errorCode: g.errorCode,
            ...(g.nodeId !== null && { failedNode: g.nodeId }),
          })}`;
          return (
            <tr key={`${g.processId}/${g.errorCode}/${g.nodeId ?? ''}`}>
              <td>{g.count}</td>
              <th scope="row">
                <code>{g.errorCode}</code>
              </th>
              <td>{g.nodeId === null ? <span class="muted">no node</span> : (g.nodeName ?? g.nodeId)}</td>
              <td>
                <a href={`/flows/${encodeURIComponent(g.processId)}`}>{g.processName ?? g.processId}</a>
              </td>
              <td>
                <a href={`/executions/${encodeURIComponent(g.newest.processInstanceId)}`}>
                  {g.newest.at ? formatTime(g.newest.at) : g.newest.processInstanceId}
                </a>
                {g.newest.message && <div class="muted">{g.newest.message}</div>}
              </td>
              <td>
                <a
                  href={list}
                  aria-label={`List them: the ${g.count} ${g.errorCode} failures at ${g.nodeId ?? 'no node'}`}
                >
                  List them
                </a>
              </td>
            </tr>
          );
        }}
      />
    </>
  );
}
