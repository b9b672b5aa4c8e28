/* An execution's facts on its page: where it runs, when, what started it, its error, replays and retries. */
import type { InstanceView, TriggeredByView } from '../../shared/api/process.js';
import { durationBetween, formatTime } from '../model/format.js';
import { SearchTags } from './execution-cells.js';

/**
 * The ended execution that started this one, as "…<id tail> (<flow name>, <state>)": ids are
 * UUIDv7, whose heads are alike for a minute's executions, so the tail tells them apart.
 */
function triggeredByText(by: TriggeredByView): string {
  const facts = [by.processName ?? by.processId, ...(by.state ? [by.state] : [])];
  return `…${by.processInstanceId.slice(-12)} (${facts.join(', ')})`;
}

/** The names an ENV_NOT_SET failure's message gives as `{env.NAME}`, in order. Pure. */
export function envNamesOf(message: string): string[] {
  return [...new Set([...message.matchAll(/\{env\.([A-Za-z_][A-Za-z0-9_]*)\}/g)].map((m) => m[1]!))];
}

/** The execution's facts, as a description list; `now` moves a running one's duration on. */
export function Facts({ run, now }: { readonly run: InstanceView; readonly now: number }) {
  const error = run.data.error;
  return (
    <dl class="facts">
      <dt>Execution</dt>
      <dd>
        <code>{run.processInstanceId}</code>
      </dd>
      <dt>Flow</dt>
      <dd>
        <a href={`/flows/${encodeURIComponent(run.processId)}?version=${run.processVersion}`}>
          {`version ${run.processVersion}`}
        </a>{' '}
        <span class="muted">{run.processId}</span>
      </dd>
      <dt>Environment</dt>
      <dd>{run.environment}</dd>
      <dt>Started</dt>
      <dd>
        <time dateTime={run.startTime}>{formatTime(run.startTime)}</time>
      </dd>
      <dt>{run.endTime ? 'Ended' : 'Running for'}</dt>
      <dd>
        {run.endTime ? (
          <>
            <time dateTime={run.endTime}>{formatTime(run.endTime)}</time>
            {` (took ${durationBetween(run.startTime, run.endTime, now)})`}
          </>
        ) : (
          durationBetween(run.startTime, null, now)
        )}
      </dd>
      {run.correlationKey !== null && (
        <>
          <dt>Correlation key</dt>
          <dd>
            <code>{run.correlationKey}</code>
          </dd>
        </>
      )}
      {run.search !== undefined && (
        <>
          <dt>Search</dt>
          <dd>
            <SearchTags search={run.search} />
          </dd>
        </>
      )}
      {run.parentInstanceId !== null && (
        <>
          <dt>Parent</dt>
          <dd>
            <a href={`/executions/${encodeURIComponent(run.parentInstanceId)}`}>{run.parentInstanceId}</a>
            {run.iteration !== undefined ? ` (iteration ${run.iteration + 1})` : ''}
          </dd>
        </>
      )}
      {run.triggeredBy && (
        <>
          <dt>Triggered by</dt>
          <dd>
            <a
              href={`/executions/${encodeURIComponent(run.triggeredBy.processInstanceId)}`}
              title={run.triggeredBy.processInstanceId}
            >
              {triggeredByText(run.triggeredBy)}
            </a>
          </dd>
        </>
      )}
      {error && (
        <>
          <dt>Error</dt>
          <dd class="error-text">{`${error.code}: ${error.message}${error.nodeId ? ` (at ${error.nodeId})` : ''}`}</dd>
          {error.code === 'ENV_NOT_SET' && (
            <dd>
              {envNamesOf(error.message).map((name) => (
                <a
                  key={name}
                  class="button-link"
                  href={`/manage/environment?name=${encodeURIComponent(name)}&environment=${run.environment}`}
                >{`Set ${name} in ${run.environment.toLowerCase()}`}</a>
              ))}
            </dd>
          )}
        </>
      )}
      {run.replayOf && (
        <>
          <dt>Replay of</dt>
          <dd>
            <a href={`/executions/${encodeURIComponent(run.replayOf.processInstanceId)}`}>
              {run.replayOf.processInstanceId}
            </a>
            {` from ${run.replayOf.nodeId}, by ${run.replayOf.by}`}
          </dd>
        </>
      )}
      {run.retries && run.retries.length > 0 && (
        <>
          <dt>Retries</dt>
          <dd>
            <ol class="retries">
              {run.retries.map((r, i) => (
                <li key={i}>
                  <time dateTime={r.at}>{formatTime(r.at)}</time>
                  {` by ${r.by}, after ${r.error.code}${r.error.nodeId ? ` at ${r.error.nodeId}` : ''}`}
                  {r.set && r.set.length > 0 ? ` (set ${r.set.join(', ')})` : ''}
                </li>
              ))}
            </ol>
          </dd>
        </>
      )}
    </dl>
  );
}
