/** How the TUI shows states: a word, a symbol (so it reads without colour) and a colour. */
export const STATE_VIEW: Record<number, { word: string; symbol: string; color: string }> = {
  0: { word: 'running', symbol: '●', color: 'cyan' },
  1: { word: 'completed', symbol: '✔', color: 'green' },
  2: { word: 'failed', symbol: '✖', color: 'red' },
  3: { word: 'cancelled', symbol: '◌', color: 'yellow' },
};

export const STATUS_WORDS: Record<number, string> = { 0: 'active', 1: 'waiting', 2: 'completed', 3: 'failed', 4: 'cancelled', 5: 'timed out' };

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
