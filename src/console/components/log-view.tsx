/* An execution's log as it arrives: the newest entries last, the last ones shown (the rest counted). */
import { useLayoutEffect, useRef } from 'preact/hooks';
import type { LogState } from '../model/log.js';
import { formatTime } from '../model/format.js';

/** Props of LogView. */
type Props = {
  readonly log: LogState;
  /** Only this node's entries (a node's panel); all when absent. */
  readonly nodeId?: string;
  /** Most entries shown (default 500): a long log keeps its newest. */
  readonly limit?: number;
};

/** The log (or one node's part of it), live. */
export function LogView({ log, nodeId, limit = 500 }: Props) {
  const entries = nodeId === undefined ? log.entries : log.entries.filter((e) => e.entry.nodeId === nodeId);
  const shown = entries.length > limit ? entries.slice(entries.length - limit) : entries;
  // New entries keep the newest in view, unless the reader scrolled up to read older ones.
  const list = useRef<HTMLOListElement>(null);
  const atEnd = useRef(true);
  useLayoutEffect(() => {
    const el = list.current;
    if (el && atEnd.current) el.scrollTop = el.scrollHeight;
  }, [shown.length, log.last]);
  return (
    <div class="log">
      {entries.length > shown.length && (
        <p class="muted">{`${entries.length - shown.length} earlier entries not shown.`}</p>
      )}
      {shown.length === 0 ? (
        <p class="muted">{log.ended ? 'No entries.' : 'No entries yet.'}</p>
      ) : (
        <ol
          class="log-entries"
          ref={list}
          tabIndex={0}
          aria-label="Log entries"
          onScroll={(e) => {
            const el = e.currentTarget;
            atEnd.current = el.scrollHeight - el.scrollTop - el.clientHeight < 24;
          }}
        >
          {shown.map(({ seq, entry }) => (
            <li key={seq} class={`log-entry level-${entry.level.toLowerCase()}`} data-seq={seq}>
              <time dateTime={entry.timestamp}>{formatTime(entry.timestamp)}</time>
              <span class="log-level">{entry.level}</span>
              <span class="log-node">{entry.nodeName || entry.nodeId}</span>
              <span class="log-message">{entry.message}</span>
              {entry.variables !== undefined && Object.keys(entry.variables).length > 0 && (
                <details class="log-vars">
                  <summary>variables</summary>
                  <pre>{JSON.stringify(entry.variables, null, 2)}</pre>
                </details>
              )}
            </li>
          ))}
        </ol>
      )}
      <p class="muted log-status">
        {log.ended ? 'The execution has finished: the log is complete.' : 'Following the log…'}
      </p>
    </div>
  );
}
