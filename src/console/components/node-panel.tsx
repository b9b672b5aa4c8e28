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
import type { LogState } from '../model/log.js';
import { nodeState } from '../model/states.js';
import { Conversation } from './conversation.js';
import { LogView } from './log-view.js';
import { StateBadge } from './state-badge.js';

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
  }
}

/** One node instance: a row of the instances table. */
function InstanceRow({ ni, index, now }: { ni: NodeView; index: number; now: number }) {
  const job = ni.wait?.kind === 'job' ? ni.wait : null;
  return (
    <tr>
      <th scope="row">{index + 1}</th>
      <td>
        <StateBadge node={nodeState(ni.statusCd)} />
      </td>
      <td>
        <time dateTime={ni.startTime}>{formatTime(ni.startTime)}</time>
      </td>
      <td>{ni.endTime ? <time dateTime={ni.endTime}>{formatTime(ni.endTime)}</time> : '—'}</td>
      <td>{durationBetween(ni.startTime, ni.endTime, now)}</td>
      <td>
        {ni.wait && ni.statusCd === 1 ? waitWords(ni.wait) : ''}
        {job?.lastError && (
          <div class="error-text">{`last attempt: ${job.lastError.code}: ${job.lastError.message}`}</div>
        )}
        {(ni.childInstanceIds ?? []).map((c) => (
          <div key={c}>
            <a href={`/executions/${encodeURIComponent(c)}`}>{`child ${c}`}</a>
          </div>
        ))}
      </td>
    </tr>
  );
}

/** The panel of the node or boundary event opened on the diagram. */
export function NodePanel({ target, graph, run, log, body, onClose }: Props) {
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
        <div class="table-scroll">
          <table class="instances">
            <caption class="visually-hidden">{`Instances of ${name}`}</caption>
            <thead>
              <tr>
                <th scope="col">#</th>
                <th scope="col">State</th>
                <th scope="col">Started</th>
                <th scope="col">Ended</th>
                <th scope="col">Took</th>
                <th scope="col">Waits for, children</th>
              </tr>
            </thead>
            <tbody>
              {instances.map((ni, i) => (
                <InstanceRow key={ni.nodeInstanceId} ni={ni} index={i} now={now} />
              ))}
            </tbody>
          </table>
        </div>
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
