import { STATE_NAMES, STATUS_NAMES } from '../client/describe.js';

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

/**
 * How the TUI shows a listed execution's state: a running one that waits for a person is
 * `waiting` (a hand, yellow), not one at work; otherwise its state's look (stateView).
 */
export function listedStateView(e: {
  readonly stateCd: number;
  readonly waits?: readonly { readonly for: string }[];
}): { word: string; symbol: string; color: string } {
  if (e.stateCd === 0 && e.waits?.some((w) => w.for === 'person') === true)
    return { word: 'waiting', symbol: '◷', color: 'yellow' };
  return stateView(e.stateCd);
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

/**
 * An id cut to `width` characters keeping its HEAD, … after it: what the TUI shows can be typed
 * to `wfx`, which takes a unique prefix of an id (as git does).
 */
export function shortId(id: string, width: number): string {
  return id.length <= width ? id : `${id.slice(0, Math.max(1, width - 1))}…`;
}

/**
 * The fewest characters (at least `min`, at most the longest id) that tell `ids` apart by their
 * heads (pure). uuidv7 ids begin with their start's millisecond, so ids of executions started
 * close together share long heads: a column sized by this still shows what tells them apart.
 */
export function uniquePrefixLength(ids: readonly string[], min = 8): number {
  const sorted = [...new Set(ids)].sort();
  let need = min;
  for (let i = 1; i < sorted.length; i++) {
    const a = sorted[i - 1]!;
    const b = sorted[i]!;
    let same = 0;
    while (same < a.length && a[same] === b[same]) same++;
    need = Math.max(need, same + 1);
  }
  return Math.min(need, Math.max(min, ...sorted.map((id) => id.length)));
}

/** The columns a shortId of `ids` takes: at least `min`, wide enough to tell them apart (… included), at most 36. */
export function idColumns(ids: readonly string[], min: number): number {
  return Math.min(36, Math.max(min, uniquePrefixLength(ids) + 1));
}

/** The first row shown of a list of `total` in `rows` rows, keeping `selected` in view (near the middle). */
export function windowStart(selected: number, rows: number, total: number): number {
  return Math.max(0, Math.min(selected - Math.floor(rows / 2), total - rows));
}

const TRIGGER_LOOK = {
  active: { symbol: '●', color: 'green' },
  failing: { symbol: '✖', color: 'red' },
  disabled: { symbol: '○', color: 'gray' },
} as const;

/** A trigger state as the TUI shows it: the word, a symbol (so it reads without colour) and a colour. */
export function triggerStateView(state: string): { word: string; symbol: string; color: string } {
  const look = TRIGGER_LOOK[state as keyof typeof TRIGGER_LOOK];
  return look ? { word: state, ...look } : { word: state, symbol: '?', color: 'white' };
}

/** `3m ago`, `in 2h 05m`, `-` (pure): how far `iso` is from `now`, compact enough for a 10-column cell. */
export function relativeTime(iso: string | null, now: Date): string {
  if (!iso) return '-';
  const ms = Date.parse(iso) - now.getTime();
  const s = Math.floor(Math.abs(ms) / 1000);
  const span =
    s < 60
      ? `${s}s`
      : s < 3600
        ? `${Math.floor(s / 60)}m`
        : s < 86400
          ? `${Math.floor(s / 3600)}h ${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}m`
          : `${Math.floor(s / 86400)}d`;
  return ms >= 0 ? `in ${span}` : `${span} ago`;
}

/** `YYYY-MM-DD HH:MM:SS` of an instant, in local time. */
export function stamp(iso: string): string {
  const d = new Date(iso);
  const p = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())} ${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}`;
}

/**
 * Time left to `dueAt` (`in 4m 12s`), or how long past it (`overdue 12s`): a timer's countdown,
 * ticking with `now` (pure, duration's units).
 */
export function countdown(dueAt: string, now: Date): string {
  const at = now.toISOString();
  return Date.parse(dueAt) >= now.getTime() ? `in ${duration(at, dueAt, now)}` : `overdue ${duration(dueAt, at, now)}`;
}

/** An environment's name in `width` columns: whole when it fits, else `PROD` / `DEV`. */
export function envWord(environment: string, width: number): string {
  if (environment.length <= width) return environment;
  return environment === 'PRODUCTION' ? 'PROD' : environment === 'DEVELOPMENT' ? 'DEV' : environment.slice(0, width);
}
