/*
 * The panel of a node opened on the diagram: its instances (start, end, state, what it waits
 * for, attempts, child executions), the branch a gateway took, a loop's iterations, its error, a
 * callAgent's conversation and its part of the log.
 */
import { useEffect, useRef } from 'preact/hooks';
import type { InstanceView, NodeView, Wait } from '../../shared/api/process.js';
import { branchesTaken, type GraphModel, type ModelBoundary, type ModelNode } from '../diagram/graph-model.js';
import { iterationWords } from '../diagram/node-words.js';
import { durationBetween, formatTime } from '../model/format.js';
import { nodeVariables, type LogState } from '../model/log.js';
import { JsonBlock } from './json-block.js';
import { nodeState } from '../model/states.js';
import { Conversation } from './conversation.js';
import { LogView } from './log-view.js';
import { StateBadge } from './state-badge.js';
import { TaskForm } from './task-form.js';

/** What the panel shows: a node, or a boundary event on its node. */
export type PanelTarget =
  | { readonly kind: 'node'; readonly node: ModelNode }
  | { readonly kind: 'boundary'; readonly boundary: ModelBoundary; readonly on: ModelNode };

/** Props of NodePanel. */
type Props = {
  readonly target: PanelTarget;
  /** The graph the node is in (its scope's): the edges it took. */
  readonly graph: GraphModel;
  /** The execution the node's instances belong to (a body's run inside an opened container); null: a definition. */
  readonly run: InstanceView | null;
  /** That execution's log, when the page follows it. */
  readonly log: LogState | null;
  /** A container open on the diagram: the run its body shows, and how to choose another. */
  readonly body?: { readonly shown: string | null; readonly choose: (childId: string) => void };
  /** Offered for a node of the execution the page shows that it reached: replays it from there. */
  readonly onReplay?: (nodeId: string) => void;
  /** A node that waits for input shows its form; answering it needs `mayExecute`, then `onAnswered` reads again. */
  readonly task?: { readonly mayExecute: boolean; readonly onAnswered: () => void };
  readonly onClose: () => void;
};

/** What a waiting instance waits for, in words. */
function waitWords(w: Wait): string {
  switch (w.kind) {
    case 'input':
      return `input (${w.inputType}${w.formTitle ? `: ${w.formTitle}` : ''})${w.assignee ? ` for ${w.assignee}` : ''}`;
    case 'event':
      return `${w.eventType} ${w.messageRef}${w.correlationKey ? ` (key ${w.correlationKey})` : ''}`;
    case 'timer':
      return `a timer, due ${formatTime(w.dueAt)}`;
    case 'child':
      return 'its child execution';
    case 'loop':
      return `iterations: ${w.state.done} done, ${w.state.running} running${w.state.items ? ` of ${w.state.items.length}` : ''}`;
    case 'tools':
      return 'its tool calls';
    case 'job':
      return `a worker of ${w.domain} (${w.action}), attempt ${w.attempt} of ${w.maxAttempts}${w.lock ? `, held by ${w.lock.worker}` : ''}`;
    case 'queue':
      return "a slot of the flow's concurrency limit (queued)";
  }
}

/** One node instance: its state, when, how long, what it waits for, who answered it, its attempts and children. */
function InstanceItem({ ni, index, childWord, now }: { ni: NodeView; index: number; childWord: string; now: number }) {
  const job = ni.wait?.kind === 'job' ? ni.wait : null;
  const children = ni.childInstanceIds ?? [];
  return (
    <li class="instance">
      <div class="instance-head">
        <span class="muted">{`#${index + 1}`}</span> <StateBadge node={nodeState(ni.statusCd)} />{' '}
        <time dateTime={ni.startTime}>{formatTime(ni.startTime)}</time>
        {ni.endTime ? ' → ' : ''}
        {ni.endTime && <time dateTime={ni.endTime}>{formatTime(ni.endTime)}</time>}
        <span class="muted">{` (${durationBetween(ni.startTime, ni.endTime, now)})`}</span>
      </div>
      {ni.wait && ni.statusCd === 1 && <div>{`Waits for ${waitWords(ni.wait)}.`}</div>}
      {ni.answeredBy !== undefined && (
        <div class="answered">
          {'Answered by '}
          <code>{ni.answeredBy}</code>
          {ni.answeredAt && ' at '}
          {ni.answeredAt && <time dateTime={ni.answeredAt}>{formatTime(ni.answeredAt)}</time>}
        </div>
      )}
      {job?.lastError && (
        <div class="error-text">{`Last attempt: ${job.lastError.code}: ${job.lastError.message}`}</div>
      )}
      {children.length > 0 && (
        <ul class="instance-children">
          {children.map((c, i) => (
            <li key={c}>
              <a href={`/executions/${encodeURIComponent(c)}`} title={c}>
                {childWord === 'iteration' ? `iteration ${i + 1}` : `${childWord} ${c}`}
              </a>
            </li>
          ))}
        </ul>
      )}
    </li>
  );
}

/** What the node's latest run found and set, from the log's copies of the variables. */
function NodeVariablesView({
  log,
  nodeId,
  name,
}: {
  readonly log: LogState;
  readonly nodeId: string;
  readonly name: string;
}) {
  const vars = nodeVariables(log, nodeId);
  return (
    <>
      <h3>Variables in</h3>
      <JsonBlock value={vars.in} label={`Variables when ${name} started`} empty="Not kept in the log." />
      <h3>Variables it set</h3>
      <JsonBlock value={vars.set} label={`Variables ${name} set`} empty="None." />
    </>
  );
}

/** The panel of the node or boundary event opened on the diagram. */
export function NodePanel({ target, graph, run, log, body, onReplay, task, onClose }: Props) {
  const heading = useRef<HTMLHeadingElement>(null);
  const id = target.kind === 'node' ? target.node.id : target.boundary.id;
  useEffect(() => heading.current?.focus(), [id]);
  const node = target.kind === 'node' ? target.node : null;
  const instances = target.kind === 'node' ? target.node.instances : target.boundary.instances;
  const name = target.kind === 'node' ? target.node.name : target.boundary.name;
  const type =
    target.kind === 'node' ? target.node.type : `${target.boundary.event} boundary event on ${target.on.name}`;
  const error = run?.data.error && run.data.error.nodeId === id ? run.data.error : null;
  const branches = node && node.shape === 'gateway' && run ? branchesTaken(graph, node.id) : [];
  const agent = instances.at(-1)?.agent;
  const waiting = instances.at(-1);
  const input = waiting?.statusCd === 1 && waiting.wait?.kind === 'input' ? waiting.wait : null;
  const now = Date.now();
  return (
    <section class="panel node-panel" aria-labelledby="node-panel-title">
      <div class="panel-head">
        <h2 id="node-panel-title" tabIndex={-1} ref={heading}>
          {name}
        </h2>
        <button type="button" class="icon-button" onClick={onClose} aria-label={`Close the panel of ${name}`}>
          ×
        </button>
      </div>
      <p class="muted">{`${type} · id ${id}`}</p>
      {target.kind === 'boundary' && run && (
        <p>{target.boundary.fired ? 'This boundary event fired.' : 'This boundary event has not fired.'}</p>
      )}
      {branches.length > 0 && (
        <p>
          {'Took: '}
          {branches.map((b, i) => (
            <code key={i} class="branch">
              {b}
            </code>
          ))}
        </p>
      )}
      {node && node.iterations !== null && <p>{`Iterations: ${iterationWords(node)}.`}</p>}
      {node && body && node.children.length > 0 && (
        <p>
          <label>
            {'The body shows '}
            <select value={body.shown ?? node.children.at(-1)} onChange={(e) => body.choose(e.currentTarget.value)}>
              {node.children.map((c, i) => (
                <option key={c} value={c}>
                  {node.type === 'loopNode' ? `iteration ${i + 1}` : `run ${i + 1}`}
                </option>
              ))}
            </select>
          </label>
        </p>
      )}
      {error && <p class="error-text" role="alert">{`${error.code}: ${error.message}`}</p>}
      {run === null ? null : instances.length === 0 ? (
        <p class="muted">Not reached.</p>
      ) : (
        <>
          <h3>{instances.length === 1 ? 'Its instance' : `Its ${instances.length} instances`}</h3>
          <ol class="instances">
            {instances.map((ni, i) => (
              <InstanceItem
                key={ni.nodeInstanceId}
                ni={ni}
                index={i}
                childWord={node?.type === 'loopNode' ? 'iteration' : node?.type === 'callAgent' ? 'tool call' : 'child'}
                now={now}
              />
            ))}
          </ol>
        </>
      )}
      {task && run && waiting && input && (
        <div class="node-task">
          <h3>Answer</h3>
          <TaskForm
            processInstanceId={run.processInstanceId}
            organization={run.organization}
            nodeId={waiting.nodeId}
            nodeName={waiting.nodeName}
            spec={input}
            mayExecute={task.mayExecute}
            idBase={`answer-${waiting.nodeInstanceId}`}
            onAnswered={task.onAnswered}
          />
        </div>
      )}
      {log && instances.length > 0 && <NodeVariablesView log={log} nodeId={id} name={name} />}
      {onReplay && log && node && instances.length > 0 && (
        <p>
          <button type="button" onClick={() => onReplay(id)}>
            Replay from here
          </button>{' '}
          <span class="muted">a new execution from this node, with the variables in above</span>
        </p>
      )}
      {agent && (
        <>
          <h3>Conversation</h3>
          <Conversation agent={agent} />
        </>
      )}
      {log && instances.length > 0 && (
        <details class="node-log" open>
          <summary>Log of this node</summary>
          <LogView log={log} nodeId={id} limit={100} />
        </details>
      )}
      {run && !log && run.processInstanceId && (
        <p>
          <a
            href={`/executions/${encodeURIComponent(run.processInstanceId)}`}
          >{`Open execution ${run.processInstanceId}`}</a>
        </p>
      )}
    </section>
  );
}
