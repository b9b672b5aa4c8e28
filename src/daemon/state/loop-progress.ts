/**
 * A waiting loopNode's progress as its own record (`loop.progressed`): an iteration done, the
 * next ones started, the values collected since the last record. Written as a whole wait each
 * time, a loop's progress repeated its collection and every value collected so far: a loop
 * over n items wrote O(n²) bytes to the journal. The items stay as the loop's first wait wrote
 * them, and the reducer puts the values collected since into its copy of the list.
 */
import type { LoopState, NodeInstance } from './state.js';

/** The record's fields but its address (instance, node instance, time). */
export interface LoopProgress {
  readonly started: number;
  readonly done: number;
  readonly running: number;
  /** Values collected since the last record, by iteration index (absent: none). */
  readonly collected?: Readonly<Record<string, unknown>>;
  /** Variables a sequential iteration handed on to the flow. */
  readonly variables?: Record<string, unknown>;
}

/**
 * The progress from the loop wait `before` to `after`, or null when `after` is not the same
 * loop going on (its items another list): then it is a new wait, written whole. Pure.
 */
export function loopProgress(
  before: LoopState,
  after: LoopState,
  variables: Record<string, unknown> | undefined,
): LoopProgress | null {
  if (after.items !== before.items || after.collected.length < before.collected.length) return null;
  let collected: Record<string, unknown> | undefined;
  for (let i = 0; i < after.collected.length; i++)
    if (after.collected[i] !== before.collected[i] || !(i in before.collected))
      (collected ??= {})[i] = after.collected[i];
  return {
    started: after.started,
    done: after.done,
    running: after.running,
    ...(collected && { collected }),
    ...(variables && { variables }),
  };
}

/**
 * The wait `node` has once `p` is applied, or null when it does not wait for a loop (the
 * record then changes nothing). The collected values are a new list: the state's old one may
 * be shared with a copy a checkpoint is writing.
 */
export function progressedWait(
  node: NodeInstance,
  p: LoopProgress,
): Extract<NodeInstance['wait'], { kind: 'loop' }> | null {
  const wait = node.wait;
  if (wait?.kind !== 'loop') return null;
  let collected = wait.state.collected;
  if (p.collected) {
    const list = collected.slice();
    for (const [i, value] of Object.entries(p.collected)) list[Number(i)] = value;
    collected = list;
  }
  return {
    kind: 'loop',
    dueAt: null,
    state: { items: wait.state.items, started: p.started, done: p.done, running: p.running, collected },
  };
}
