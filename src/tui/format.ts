import { STATE_NAMES, STATUS_NAMES } from '../cli/api.js';

const STATE_LOOK = [
  { symbol: '●', color: 'cyan' },
  { symbol: '✔', color: 'green' },
  { symbol: '✖', color: 'red' },
  { symbol: '◌', color: 'yellow' },
] as const;

/** How the TUI shows an execution state: the CLI's word, a symbol (so it reads without colour) and a colour. */
export function stateView(stateCd: number): { word: string; symbol: string; color: string } {
  const look = STATE_LOOK[stateCd];
  return look ? { word: STATE_NAMES[stateCd]!, ...look } : { word: String(stateCd), symbol: '?', color: 'white' };
}

/** A node instance's status in words (the CLI's). */
export const statusWord = (statusCd: number): string => STATUS_NAMES[statusCd] ?? String(statusCd);

/** `1h 02m`, `3m 05s`, `12s` between two instants (to `now` while running). */
export function duration(start: string, end: string | null, now: Date): string {
  const ms = Math.max(0, (end ? Date.parse(end) : now.getTime()) - Date.parse(start));
  const s = Math.floor(ms / 1000);
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m ${String(s % 60).padStart(2, '0')}s`;
  return `${Math.floor(m / 60)}h ${String(m % 60).padStart(2, '0')}m`;
}

/** `HH:MM:SS` of an instant, in local time. */
export function clock(iso: string): string {
  return new Date(iso).toTimeString().slice(0, 8);
}

/** Cuts `text` to `width` characters, with … when cut. */
export function fit(text: string, width: number): string {
  return text.length <= width ? text.padEnd(width) : `${text.slice(0, Math.max(0, width - 1))}…`;
}

/** Cuts `text` to at most `width` characters, with … when cut (no padding). */
export function cut(text: string, width: number): string {
  return text.length <= width ? text : `${text.slice(0, Math.max(0, width - 1))}…`;
}
