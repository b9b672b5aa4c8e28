/*
 * /bulk/:bulkId — one bulk operation: what it does to which executions, its progress (read again
 * every second while it runs: GET /process/bulk/{id}), the result of each execution reached
 * (GET /process/bulk/{id}/results, a page at a time), and Cancel operation while it runs.
 */
import { useRoute } from 'preact-iso/router';
import { useEffect, useRef, useState } from 'preact/hooks';
import { calls } from '../../shared/api/calls/index.js';
import { errorMessage } from '../../shared/errors.js';
import { send } from '../api/http.js';
import { ConfirmDialog } from '../components/confirm-dialog.js';
import { DataTable } from '../components/data-table.js';
import { LoadMore } from '../components/load-more.js';
import { ReadState } from '../components/read-state.js';
import { useApi } from '../hooks/use-api.js';
import { usePages } from '../hooks/use-pages.js';
import { useMay } from '../hooks/use-session.js';
import { useTitle } from '../hooks/use-title.js';
import { BULK_STATE_WORDS, OPERATIONS, progressWords } from '../model/bulk.js';
import { formatTime } from '../model/format.js';

/** Results per page read. */
const PAGE = 100;

/** The bulk operation page. */
export default function BulkPage() {
  const { params } = useRoute();
  const bulkId = params.bulkId ?? '';
  const op = useApi(calls.bulk.get(bulkId));
  const mayCancel = useMay('WORKFLOW_PUBLISH');
  const [asking, setAsking] = useState(false);
  const [problem, setProblem] = useState<string | null>(null);
  const v = op.data;
  const reached = v ? v.done + v.skipped : -1;
  useTitle(v ? `Bulk ${v.operation} ${v.bulkId}` : `Bulk operation ${bulkId}`);

  // While it runs, read it again a second after each answer.
  const reload = useRef(op.reload);
  reload.current = op.reload;
  useEffect(() => {
    if (v?.state !== 'RUNNING') return;
    const timer = setTimeout(() => reload.current(), 1000);
    return () => clearTimeout(timer);
  }, [v]);

  // The first page of results, again whenever more executions were reached.
  const results = usePages((cursor) => (reached < 0 ? null : calls.bulk.results(bulkId, { limit: PAGE, cursor })));
  const counted = useRef(reached);
  const reloadResults = results.reload;
  useEffect(() => {
    if (counted.current >= 0 && reached !== counted.current) reloadResults();
    counted.current = reached;
  }, [reached, reloadResults]);

  const cancel = async (yes: boolean) => {
    setAsking(false);
    if (!yes) return;
    try {
      await send(calls.bulk.cancel(bulkId));
      op.reload();
    } catch (err) {
      setProblem(`Cancel failed: ${errorMessage(err)}`);
    }
  };

  if (op.error && !v)
    return (
      <>
        <h1>{`Bulk operation ${bulkId}`}</h1>
        <p role="alert" class="error-text">{`This operation cannot be shown: ${op.error.message}`}</p>
      </>
    );
  if (!v) return <p class="muted">Loading…</p>;
  return (
    <>
      <div class="page-head">
        <h1>{`Bulk ${OPERATIONS[v.operation].verb.toLowerCase()}`}</h1>
        <span class={`bulk-state bulk-${v.state.toLowerCase()}`}>{BULK_STATE_WORDS[v.state]}</span>
        {v.state === 'RUNNING' && mayCancel && (
          <button type="button" class="danger" onClick={() => setAsking(true)}>
            Cancel operation
          </button>
        )}
      </div>
      <ConfirmDialog
        open={asking}
        title="Cancel this operation?"
        message="It stops before its next chunk; what was done stays done."
        confirm="Cancel operation"
        dismiss="Keep it running"
        onAnswer={(yes) => void cancel(yes)}
      />
      <section class="panel" aria-labelledby="bulk-progress-title">
        <h2 id="bulk-progress-title">Progress</h2>
        <progress
          class="bulk-progress"
          max={Math.max(v.total, 1)}
          value={v.total === 0 ? 1 : v.done + v.skipped}
          aria-label={`Progress of the bulk ${v.operation}`}
          aria-describedby="bulk-progress-words"
        />
        <p id="bulk-progress-words">
          {progressWords(v)}
          {v.etaSeconds !== null && ` · about ${v.etaSeconds} s left`}
        </p>
        <p role="status" class="visually-hidden">
          {v.state === 'RUNNING' ? '' : `The operation ${BULK_STATE_WORDS[v.state]}.`}
        </p>
        {v.error && <p class="error-text">{`It failed: ${v.error.code}: ${v.error.message}`}</p>}
        {problem && (
          <p role="alert" class="error-text">
            {problem}
          </p>
        )}
        <dl class="facts">
          <dt>Operation</dt>
          <dd>{v.bulkId}</dd>
          <dt>Selection</dt>
          <dd>
            <code>{JSON.stringify(v.query)}</code>
          </dd>
          {v.params !== null && (
            <>
              <dt>Parameters</dt>
              <dd>
                <code>{JSON.stringify(v.params)}</code>
              </dd>
            </>
          )}
          <dt>Created</dt>
          <dd>{`${formatTime(v.createdAt)} by ${v.by}`}</dd>
          {v.finishedAt && (
            <>
              <dt>Finished</dt>
              <dd>{formatTime(v.finishedAt)}</dd>
            </>
          )}
          {v.cancelledBy && (
            <>
              <dt>Cancelled by</dt>
              <dd>{v.cancelledBy}</dd>
            </>
          )}
        </dl>
      </section>
      <section class="panel" aria-labelledby="bulk-results-title">
        <h2 id="bulk-results-title">Result per execution</h2>
        <ReadState
          read={results}
          what="The results"
          empty={results.items.length === 0 && 'No execution reached yet.'}
        />
        {results.items.length > 0 && (
          <DataTable
            class="bulk-results"
            caption="The result of each execution reached, newest execution first"
            columns={['Execution', 'Result']}
          >
            {results.items.map((r) => (
              <tr key={r.processInstanceId}>
                <td>
                  <a href={`/executions/${encodeURIComponent(r.processInstanceId)}`}>{r.processInstanceId}</a>
                </td>
                <td>{r.outcome === 'DONE' ? 'done' : `skipped: ${r.code ?? ''}`}</td>
              </tr>
            ))}
          </DataTable>
        )}
        {results.more && <LoadMore onLoad={results.loadMore} />}
      </section>
    </>
  );
}
