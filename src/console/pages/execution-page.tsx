/*
 * /executions/:id — one execution on its flow's diagram, live: the log stream (SSE) drives
 * re-reads of the execution (throttled), which redraw the states, the path taken and the panels.
 * Beside the diagram: the node panel, the log, variables, output, children; Cancel, Cancel the
 * whole tree, Retry, and Replay from a node.
 */
import { useLocation, useRoute } from 'preact-iso/router';
import { useEffect, useMemo, useState } from 'preact/hooks';
import { calls } from '../../shared/api/calls/index.js';
import { errorMessage } from '../../shared/errors.js';
import { send } from '../api/http.js';
import { ChildTree } from '../components/child-tree.js';
import { ConfirmDialog } from '../components/confirm-dialog.js';
import { Conversation } from '../components/conversation.js';
import { Facts } from '../components/execution-facts.js';
import { WaitBanner } from '../components/wait-banner.js';
import { JsonBlock } from '../components/json-block.js';
import { LogView } from '../components/log-view.js';
import { MoveForm } from '../components/move-form.js';
import { NodePanel } from '../components/node-panel.js';
import { StateBadge } from '../components/state-badge.js';
import { TreeCancel } from '../components/tree-cancel.js';
import { Diagram } from '../diagram/diagram.js';
import { buildGraph } from '../diagram/graph-model.js';
import { useApi } from '../hooks/use-api.js';
import { useNodeSelection } from '../hooks/use-node-selection.js';
import { useLog } from '../hooks/use-log.js';
import { useRuns } from '../hooks/use-runs.js';
import { useMay } from '../hooks/use-session.js';
import { useThrottled } from '../hooks/use-throttled.js';
import { useNow } from '../hooks/use-now.js';
import { useTitle } from '../hooks/use-title.js';
import {
  bodyRuns,
  chooseRun,
  chosenRun,
  openedBodies,
  openPath,
  toggleOpen,
  type OpenState,
} from '../model/open-state.js';
import { locate } from './execution-view.js';

/** The variables typed for a retry: null when none; throws, saying why, when they are not a JSON object. */
function retryVariables(text: string): Record<string, unknown> | null {
  if (text.trim() === '') return null;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new Error('the variables are not JSON');
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new Error('the variables must be a JSON object, {"name": value, ...}');
  return value as Record<string, unknown>;
}

/** The execution page. */
export default function ExecutionPage() {
  const { params } = useRoute();
  const id = params.id ?? '';
  const exec = useApi(calls.instances.get(id));
  const run = exec.data ?? null;
  const reload = useThrottled(exec.reload, 300);
  const [generation, setGeneration] = useState(0);
  const log = useLog(id, reload, generation);
  const { route } = useLocation();
  const [version, setVersion] = useState(0);
  useEffect(() => setVersion((v) => v + 1), [run]);
  const flow = useApi(run ? calls.flows.get(run.processId, run.processVersion) : null);
  const [asking, setAsking] = useState(false);
  const [askingRetry, setAskingRetry] = useState(false);
  /** The variables a retry sets first, as typed (a JSON object, or empty). */
  const [retryData, setRetryData] = useState('');
  const { selected, select, close: closePanel } = useNodeSelection(asking || askingRetry);
  const [open, setOpen] = useState<OpenState>(() => (selected ? openPath({}, selected.scope) : {}));
  const runs = useRuns((known) => bodyRuns(open, run, known), version);
  const opened = useMemo(() => openedBodies(open, run, runs), [open, run, runs]);
  const graph = useMemo(
    () => (flow.data ? buildGraph(flow.data.definition.nodes, run, opened) : null),
    [flow.data, run, opened],
  );
  // The daemon refuses a cancel, retry or replay without WORKFLOW_EXECUTE whatever the page
  // shows; the page does not offer what would be refused.
  const mayExecute = useMay('WORKFLOW_EXECUTE');
  const mayPublish = useMay('WORKFLOW_PUBLISH');
  const [actionError, setActionError] = useState<string | null>(null);
  useTitle(run ? `${run.processName} ${run.processInstanceId}` : `Execution ${id}`);
  const now = useNow(run?.state === 'RUNNING');

  const act = async (what: string, call: () => Promise<void>) => {
    try {
      await call();
      setActionError(null);
    } catch (err) {
      setActionError(`${what} failed: ${errorMessage(err)}`);
    }
  };
  const cancel = async (yes: boolean) => {
    setAsking(false);
    if (!yes) return;
    await act('Cancel', async () => {
      await send(calls.instances.cancel(id));
      exec.reload();
    });
  };
  const retry = async (yes: boolean) => {
    setAskingRetry(false);
    if (!yes) return;
    await act('Retry', async () => {
      const data = retryVariables(retryData);
      await send(calls.instances.retry(id, data === null ? {} : { data }));
      setRetryData('');
      // Its log stream ended with the failure: follow it again.
      setGeneration((g) => g + 1);
      exec.reload();
    });
  };
  const replay = (nodeId: string) =>
    void act('Replay', async () => {
      const res = await send(calls.instances.replay(id, { nodeId }));
      route(`/executions/${encodeURIComponent(res.processInstanceId)}`);
    });

  if (exec.error && !run)
    return (
      <>
        <h1>{`Execution ${id}`}</h1>
        <p role="alert" class="error-text">{`This execution cannot be shown: ${exec.error.message}`}</p>
      </>
    );
  if (!run) return <p class="muted">Loading…</p>;
  const located = graph && selected ? locate(graph, opened, run, selected) : null;
  // A callAgent's conversation is in its panel while that is open.
  const agents = run.nodes.filter((n) => n.agent && !(selected?.scope.length === 0 && selected.id === n.nodeId));
  const { error: _error, ...variables } = run.data;
  return (
    <>
      <div class="page-head">
        <h1>{run.processName}</h1>
        <StateBadge state={run.state} />
        {run.queuePosition !== undefined && (
          <span class="muted">{`queued #${run.queuePosition}: waits for a slot of the flow's concurrency limit`}</span>
        )}
        <a class="button-link compare-link" href={`/compare?a=${encodeURIComponent(run.processInstanceId)}`}>
          Compare with another run
        </a>
        {run.state === 'RUNNING' && mayExecute && (
          <button type="button" class="danger" onClick={() => setAsking(true)}>
            Cancel execution
          </button>
        )}
        {run.rootId === undefined && mayPublish && (
          <TreeCancel
            rootId={run.processInstanceId}
            processName={run.processName}
            generation={run.state}
            onStarted={(v) => route(`/bulk/${encodeURIComponent(v.bulkId)}`)}
            onError={setActionError}
          />
        )}
        {run.state === 'FAILED' && mayExecute && run.parentNodeInstanceId === undefined && (
          <button type="button" onClick={() => setAskingRetry(true)}>
            Retry execution
          </button>
        )}
      </div>
      {actionError && (
        <p role="alert" class="error-text">
          {actionError}
        </p>
      )}
      <WaitBanner run={run} onAnswer={(nodeId) => select({ scope: [], id: nodeId })} />
      <ConfirmDialog
        open={askingRetry}
        title="Retry this execution?"
        message={`Execution ${run.processInstanceId} goes on from where it failed${run.data.error?.nodeId ? ` (${run.data.error.nodeId} runs again)` : ''}, with its variables as they are.`}
        confirm="Retry execution"
        tone="primary"
        dismiss="Leave it failed"
        onAnswer={(yes) => void retry(yes)}
      >
        <label class="retry-data">
          Variables to set first (a JSON object; leave empty to keep them as they are)
          <textarea
            rows={4}
            value={retryData}
            placeholder='{"token": "a new one"}'
            spellcheck={false}
            onInput={(e) => setRetryData(e.currentTarget.value)}
          />
        </label>
      </ConfirmDialog>
      <ConfirmDialog
        open={asking}
        title="Cancel this execution?"
        message={`Execution ${run.processInstanceId} of ${run.processName} and every child execution it runs will be cancelled. This cannot be undone.`}
        confirm="Cancel execution"
        dismiss="Keep it running"
        onAnswer={(yes) => void cancel(yes)}
      />
      <Facts run={run} now={now} />
      <div class="execution-grid">
        <section class="diagram-pane" aria-labelledby="diagram-title">
          <h2 id="diagram-title">Diagram</h2>
          {graph ? (
            <Diagram
              graph={graph}
              hasRun
              title={`${run.processName} version ${run.processVersion}`}
              selected={selected}
              onSelect={(p) => select(p)}
              onToggle={(p) => setOpen((o) => toggleOpen(o, p.scope, p.id))}
            />
          ) : flow.error ? (
            <p class="error-text">{`The flow's definition cannot be read: ${flow.error.message}`}</p>
          ) : (
            <p class="muted">Loading the diagram…</p>
          )}
        </section>
        <div class="side">
          {located && selected && (
            <NodePanel
              target={located.target}
              graph={located.graph}
              run={located.run}
              log={selected.scope.length === 0 ? log : null}
              body={
                located.target.kind === 'node' && located.target.node.container
                  ? {
                      shown: chosenRun(open, selected.scope, selected.id),
                      choose: (childId) => {
                        setOpen((o) =>
                          chooseRun(
                            openPath(o, [...selected.scope, selected.id]),
                            selected.scope,
                            selected.id,
                            childId,
                          ),
                        );
                      },
                    }
                  : undefined
              }
              {...(mayExecute && selected.scope.length === 0 && { onReplay: replay })}
              task={{ mayExecute, onAnswered: exec.reload }}
              onClose={closePanel}
            />
          )}
          {run.state === 'RUNNING' && mayPublish && run.parentNodeInstanceId === undefined && flow.data && (
            <details class="panel">
              <summary>
                <h2>Move to another version</h2>
              </summary>
              <MoveForm
                id={run.processInstanceId}
                current={run.processVersion}
                versions={flow.data.versions.map((v) => v.version)}
                onMoved={exec.reload}
              />
            </details>
          )}
          <details class="panel" open>
            <summary>
              <h2>Log</h2>
            </summary>
            <LogView log={log} />
          </details>
          <details class="panel" open>
            <summary>
              <h2>Variables</h2>
            </summary>
            <JsonBlock value={variables} label="Variables" empty="No variables." />
          </details>
          <details class="panel" open={run.output !== null}>
            <summary>
              <h2>Output</h2>
            </summary>
            <JsonBlock value={run.output} label="Output" empty={run.state === 'RUNNING' ? 'Not yet.' : 'No output.'} />
          </details>
          <details class="panel" open>
            <summary>
              <h2>Child executions</h2>
            </summary>
            <ChildTree run={run} version={version} />
          </details>
          {agents.map((n) => (
            <details key={n.nodeInstanceId} class="panel" open>
              <summary>
                <h2>{`Conversation of ${n.nodeName}`}</h2>
              </summary>
              <Conversation agent={n.agent!} />
            </details>
          ))}
        </div>
      </div>
    </>
  );
}
