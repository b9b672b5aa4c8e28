/*
 * The cells every table of executions shows alike (the list's rows, the comparison's candidates):
 * state (a start its flow's concurrency limit holds back: its place in the queue), when it
 * started, how long it took, its correlation key.
 */
import type { InstanceSummary } from '../../shared/api/process.js';
import { durationBetween, formatTime } from '../model/format.js';
import { StateBadge } from './state-badge.js';

/** Props of ExecutionCells. */
type Props = {
  readonly e: InstanceSummary;
  /** The time a running execution's duration runs to (ms). */
  readonly now: number;
};

/** Four cells of execution `e`'s row: its state, start, duration and correlation key. */
export function ExecutionCells({ e, now }: Props) {
  return (
    <>
      <td>
        <StateBadge state={e.state} />
        {e.queuePosition !== undefined && (
          <span
            class="tag"
            title="Waits for a slot of its flow's concurrency limit"
          >{`queued #${e.queuePosition}`}</span>
        )}
      </td>
      <td>
        <time dateTime={e.startTime}>{formatTime(e.startTime)}</time>
      </td>
      <td>{durationBetween(e.startTime, e.endTime, now)}</td>
      <td>{e.correlationKey ?? ''}</td>
    </>
  );
}
