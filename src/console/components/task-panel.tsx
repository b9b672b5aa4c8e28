/*
 * One task opened from the inbox or its deep link (/tasks/ID/NODE): the execution read to find
 * the node waiting there, its facts (flow, assignee, who claimed it, waiting since, due with a
 * countdown that stops once it is answered), Claim or Unclaim, its form (closed to all but who
 * claimed it), and beside it the execution's variables, what the person answering judges; or,
 * when it no longer waits, what became of it.
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import { calls } from '../../shared/api/calls/index.js';
import { useApi } from '../hooks/use-api.js';
import { useNow } from '../hooks/use-now.js';
import { useSession } from '../hooks/use-session.js';
import { actorOfSession, claimWords } from '../model/claim.js';
import { ClaimControl } from './claim-control.js';
import { formatDuration, formatTime } from '../model/format.js';
import { dueWords } from '../model/task-form.js';
import { JsonBlock } from './json-block.js';
import { TaskForm } from './task-form.js';

/** Props of TaskPanel. */
type Props = {
  readonly processInstanceId: string;
  readonly nodeId: string;
  /** When it stops waiting by itself, as the inbox says (its timeout or a boundary timer); else its own timeout. */
  readonly dueAt?: string | null;
  readonly mayExecute: boolean;
  /** The name of who claimed it, as the inbox says it (the execution names the claimer by id only). */
  readonly claimedByName?: string;
  /** Reads again what is around it, once answered. */
  readonly onAnswered: () => void;
  readonly onClose: () => void;
};

/** The panel (see the top of this file). */
export function TaskPanel({ processInstanceId, nodeId, dueAt, claimedByName, mayExecute, onAnswered, onClose }: Props) {
  const exec = useApi(calls.instances.get(processInstanceId));
  const me = actorOfSession(useSession().data);
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => heading.current?.focus(), [processInstanceId, nodeId]);
  const run = exec.data;
  const ni = run?.nodes.find((n) => n.nodeId === nodeId && n.statusCd === 1 && n.wait?.kind === 'input');
  const wait = ni?.wait?.kind === 'input' ? ni.wait : null;
  const due = dueAt !== undefined ? dueAt : (wait?.dueAt ?? null);
  // Answered here: no longer due (the form says what became of it).
  const [answered, setAnswered] = useState(false);
  useEffect(() => setAnswered(false), [processInstanceId, nodeId]);
  const now = useNow(due !== null && !answered);
  const execution = `/executions/${encodeURIComponent(processInstanceId)}`;
  return (
    <section class="panel task-panel" aria-labelledby="task-panel-title">
      <div class="panel-head">
        <h2 id="task-panel-title" tabIndex={-1} ref={heading}>
          {ni ? ni.nodeName : `Task ${nodeId}`}
        </h2>
        <button type="button" class="icon-button" onClick={onClose} aria-label="Close the task">
          ×
        </button>
      </div>
      {exec.error && <p role="alert" class="error-text">{`This task cannot be read: ${exec.error.message}`}</p>}
      {!run && !exec.error && <p class="muted">Loading…</p>}
      {run && !wait && (
        <div role="status" class="task-late">
          <p>
            <strong>This task no longer waits.</strong>{' '}
            {`It was answered, timed out or cancelled; the execution is ${run.state.toLowerCase()}.`}
          </p>
          <p>
            <a href={execution}>Open the execution</a>
          </p>
        </div>
      )}
      {run && ni && wait && (
        <>
          <dl class="facts task-facts">
            <dt>Flow</dt>
            <dd>
              <a href={execution}>{`${run.processName} (execution ${run.processInstanceId})`}</a>
            </dd>
            {run.correlationKey && (
              <>
                <dt>Correlation key</dt>
                <dd>{run.correlationKey}</dd>
              </>
            )}
            {wait.assignee && (
              <>
                <dt>For</dt>
                <dd>{wait.assignee}</dd>
              </>
            )}
            <dt>Claimed</dt>
            <dd>
              <ClaimControl
                processInstanceId={processInstanceId}
                nodeId={nodeId}
                claimedBy={ni.claimedBy ?? null}
                {...(claimedByName !== undefined && { claimedByName })}
                me={me}
                mayExecute={mayExecute && !answered}
                onChanged={() => {
                  exec.reload();
                  onAnswered();
                }}
              />
            </dd>
            <dt>Waiting since</dt>
            <dd>
              <time dateTime={ni.startTime}>{formatTime(ni.startTime)}</time>
            </dd>
            <dt>Due</dt>
            <dd>
              {answered ? (
                'answered'
              ) : due ? (
                <>
                  <time dateTime={due}>{formatTime(due)}</time>{' '}
                  <span class="countdown">{`(${dueWords(due, now, formatDuration)})`}</span>
                </>
              ) : (
                'no time limit'
              )}
            </dd>
          </dl>
          <div class="task-body">
            <TaskForm
              processInstanceId={processInstanceId}
              organization={run.organization}
              nodeId={nodeId}
              nodeName={ni.nodeName}
              spec={wait}
              mayExecute={mayExecute}
              {...(ni.claimedBy !== undefined &&
                ni.claimedBy !== me && { claimedByOther: claimWords(ni.claimedBy, me, claimedByName) })}
              idBase="task"
              onAnswered={() => {
                setAnswered(true);
                onAnswered();
              }}
            />
            <section class="task-variables" aria-labelledby="task-variables-title">
              <h3 id="task-variables-title">The execution's variables</h3>
              <JsonBlock value={variablesOf(run.data)} label="Variables of the execution" empty="No variables." />
            </section>
          </div>
        </>
      )}
    </section>
  );
}

/** An execution's variables without its error (a failed one's, shown as its error elsewhere). Pure. */
function variablesOf(data: Readonly<Record<string, unknown>>): Record<string, unknown> {
  const { error: _error, ...variables } = data;
  return variables;
}
