/* Times, durations and ids as the console shows them. */

/**
 * An ISO date-time in the browser's locale and zone, to the second, its year left out when it is
 * this year's; '' for null. Pure but for the locale and the year.
 */
export function formatTime(iso: string | null | undefined): string {
  if (!iso) return '';
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  return d.toLocaleString(undefined, {
    ...(d.getFullYear() !== new Date().getFullYear() && { year: 'numeric' }),
    month: 'short',
    day: 'numeric',
    hour: '2-digit',
    minute: '2-digit',
    second: '2-digit',
  });
}

/**
 * Milliseconds as a person reads them: milliseconds under a second, seconds (one decimal under
 * ten) under a minute, then minutes and seconds, hours and minutes, days and hours. Pure.
 */
export function formatDuration(ms: number): string {
  if (!Number.isFinite(ms) || ms < 0) return '';
  if (ms < 1000) return `${Math.round(ms)} ms`;
  const s = ms / 1000;
  if (s < 60) return `${s < 10 ? s.toFixed(1) : Math.round(s)} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m} min ${Math.round(s % 60)} s`;
  const h = Math.floor(m / 60);
  if (h < 24) return `${h} h ${m % 60} min`;
  return `${Math.floor(h / 24)} d ${h % 24} h`;
}

/** How long from `start` to `end` (to `now` while running). Pure. */
export function durationBetween(start: string, end: string | null, now: number): string {
  return formatDuration((end === null ? now : Date.parse(end)) - Date.parse(start));
}

/** JSON text of a value, indented; `undefined` as ''. Pure. */
export function jsonText(value: unknown): string {
  return value === undefined ? '' : JSON.stringify(value, null, 2);
}
