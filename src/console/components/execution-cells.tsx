/*
 * The cells every table of executions shows alike (the list's rows, the comparison's candidates):
 * state (a start its flow's concurrency limit holds back: its place in the queue), when it
 * started, how long it took, its correlation key and search attributes.
 */
import type { InstanceSummary, WaitingFor } from '../../shared/api/process.js';
import { durationBetween, formatTime } from '../model/format.js';
import { StateBadge } from './state-badge.js';

/** Props of ExecutionCells. */
type Props = {
  readonly e: InstanceSummary;
  /** The time a running execution's duration runs to (ms). */
  readonly now: number;
};

/** What a person reads of a wait: `waiting for a person`, `for an event`... (WAITING_FOR). */
export const WAITING_WORDS: Readonly<Record<WaitingFor, string>> = {
  person: 'waiting for a person',
  event: 'waiting for an event',
  timer: 'waiting for a timer',
  worker: 'waiting for a worker',
  child: 'waiting for child executions',
  queue: 'queued',
};

/** Where a running execution waits: the first wait (a person's first), and how many more. */
function WaitTag({ waits }: { readonly waits: NonNullable<InstanceSummary['waits']> }) {
  const first = waits.find((w) => w.for === 'person') ?? waits[0]!;
  const more = waits.length > 1 ? ` (+${waits.length - 1})` : '';
  return <span class={`tag wait-${first.for}`}>{`${WAITING_WORDS[first.for]} at ${first.nodeName}${more}`}</span>;
}

/** Four cells of execution `e`'s row: its state, start, duration and correlation key. */
export function ExecutionCells({ e, now }: Props) {
  return (
    <>
      <td>
        <StateBadge state={e.state} />
        {e.queuePosition !== undefined ? (
          <span
            class="tag"
            title="Waits for a slot of its flow's concurrency limit"
          >{`queued #${e.queuePosition}`}</span>
        ) : (
          e.waits !== undefined && <WaitTag waits={e.waits} />
        )}
      </td>
      <td>
        <time dateTime={e.startTime}>{formatTime(e.startTime)}</time>
      </td>
      <td>{durationBetween(e.startTime, e.endTime, now)}</td>
      <td>
        {e.correlationKey ?? ''}
        {e.search !== undefined && <SearchTags search={e.search} />}
      </td>
    </>
  );
}

/** Search attributes as tags, each a link to the executions that have it too. */
export function SearchTags({ search }: { readonly search: Readonly<Record<string, string>> }) {
  return (
    <span class="search-tags">
      {Object.entries(search).map(([name, value]) => (
        <a
          key={name}
          class="tag"
          href={`/executions?${new URLSearchParams({ where: `${name}=${value}` }).toString()}`}
          title="Executions with this search attribute"
        >{`${name}=${value}`}</a>
      ))}
    </span>
  );
}
