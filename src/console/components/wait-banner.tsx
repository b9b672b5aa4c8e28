/*
 * What a running execution waits for, said above its page: a run waiting for a person is not a
 * run working. For each node waiting for a person (an input node or user task) its name and an
 * Answer button that opens the node's panel, where the task's form is; other waits in a line.
 */
import type { InstanceView } from '../../shared/api/process.js';
import { waitsOf } from '../model/summary.js';
import { WAITING_WORDS } from './execution-cells.js';

/** Props of WaitBanner. */
type Props = {
  readonly run: InstanceView;
  /** Opens the panel of node `nodeId` (a top-level node), where its task's form is. */
  readonly onAnswer: (nodeId: string) => void;
};

/** The banner; nothing for an execution that does not run or waits nowhere. */
export function WaitBanner({ run, onAnswer }: Props) {
  const waits = run.queuePosition === undefined ? (waitsOf(run).waits ?? []) : [];
  if (waits.length === 0) return null;
  const people = waits.filter((w) => w.for === 'person');
  const others = waits.filter((w) => w.for !== 'person');
  return (
    <section class={`wait-banner${people.length > 0 ? ' wait-person' : ''}`} aria-label="What it waits for">
      {people.map((w) => (
        <p key={w.nodeId}>
          <strong>{`Waiting for a person at ${w.nodeName}`}</strong>{' '}
          <button type="button" class="primary" onClick={() => onAnswer(w.nodeId)}>
            {`Answer ${w.nodeName}`}
          </button>
        </p>
      ))}
      {others.length > 0 && (
        <p class="muted">{others.map((w) => `${WAITING_WORDS[w.for]} at ${w.nodeName}`).join('; ')}</p>
      )}
    </section>
  );
}
