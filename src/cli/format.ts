import type { LogEntry } from '../shared/api/index.js';

/** One execution log entry, as the API streams it (the wire's type). */
export type { LogEntry };

const COLORS = { INFO: '\u001b[36m', WARN: '\u001b[33m', ERROR: '\u001b[31m' } as const;
const DIM = '\u001b[2m';
const RESET = '\u001b[0m';

/** `HH:MM:SS.mmm LEVEL node: message`, coloured only when asked. */
export function formatLogLine(e: LogEntry, color: boolean): string {
  const time = e.timestamp.slice(11, 23);
  const who =
    e.nodeType === 'process'
      ? e.nodeName
      : `${e.nodeName}${e.nodeName !== e.nodeId && e.nodeId ? ` (${e.nodeId})` : ''}`;
  const level = e.level.padEnd(5);
  return color
    ? `${DIM}${time}${RESET} ${COLORS[e.level]}${level}${RESET} ${who}: ${e.message}`
    : `${time} ${level} ${who}: ${e.message}`;
}

/** A plain text table: columns padded to their widest cell. */
export function table(headers: readonly string[], rows: ReadonlyArray<readonly string[]>): string {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: readonly string[]) =>
    cells
      .map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i]!)))
      .join('  ')
      .trimEnd();
  return [line(headers), ...rows.map(line)].join('\n') + '\n';
}
