/* What the compare page says of a comparison (model/compare.ts): sides, times, the divergence, in words. Pure. */
import type { NodeMark } from '../diagram/diagram-node.js';
import type { Divergence, NodeTime, RunWay, Side } from './compare.js';
import { formatDuration } from './format.js';

/** Which runs reached a node, in words. */
export const SIDE_WORDS: Record<Side, string> = { both: 'both runs', a: 'only run A', b: 'only run B' };

/** The badge of a side: the runs' letters. */
export const SIDE_BADGE: Record<Side, string> = { both: 'A B', a: 'A', b: 'B' };

/** A node's mark on the compared diagram: its side (null: neither run reached it), and whether the paths part there. */
export function nodeMark(side: Side | null, diverged: boolean): NodeMark {
  if (side === null) return { badge: '', line: 'neither run', words: 'reached by neither run', className: 'cmp-none' };
  return {
    badge: SIDE_BADGE[side],
    line: diverged ? 'paths part here' : SIDE_WORDS[side],
    words: `reached by ${SIDE_WORDS[side]}${diverged ? '; their paths part here' : ''}`,
    className: `cmp-${side}${diverged ? ' cmp-diverged' : ''}`,
  };
}

/** A run's time at a node: `1.2 s`, `3.4 s over 3 visits`, `(still there)` for an open visit; `not reached` for null. */
export function timeWords(t: NodeTime | null): string {
  if (t === null) return 'not reached';
  const visits = t.visits > 1 ? ` over ${t.visits} visits` : '';
  return `${formatDuration(t.ms)}${visits}${t.open ? ' (still there)' : ''}`;
}

/** B's time less A's, signed: `+` when B was slower, `−` when faster, `same` when equal; '' for null. */
export function deltaWords(ms: number | null): string {
  if (ms === null) return '';
  if (ms === 0) return 'same';
  return `${ms > 0 ? '+' : '−'}${formatDuration(Math.abs(ms))}`;
}

/** Where a run went from a node: `took "total > 100" to Big order`, `failed there`, `is waiting there`. */
export function wayWords(w: RunWay): string {
  const took = w.took.map((t) => (t.label === null ? `went on to ${t.toName}` : `took “${t.label}” to ${t.toName}`));
  const visits = w.visits > 1 ? ` (${w.visits} visits)` : '';
  if (took.length === 0) return `${w.state === 'completed' ? 'ended' : w.state} there${visits}`;
  return `${w.state === 'completed' ? '' : `${w.state}, then `}${took.join(' and ')}${visits}`;
}

/** The divergence in one sentence per run. */
export function divergenceWords(d: Divergence): { readonly a: string; readonly b: string } {
  return { a: `Run A ${wayWords(d.a)}.`, b: `Run B ${wayWords(d.b)}.` };
}

/** A variable's value as short text: its JSON (cut past `max` characters), or `not set` when absent. */
export function valueWords(value: unknown, present: boolean, max = 120): string {
  if (!present) return 'not set';
  const text = JSON.stringify(value) ?? String(value);
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}
