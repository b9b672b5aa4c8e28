/**
 * Deeply frozen copies of a state, for the step's tests: a step decides on a draft over the
 * state it is given and must change nothing of it (state/draft/). A write to a frozen object
 * throws in strict code (all of ours), and a frozen copy's Maps and Sets throw on any change.
 */
import { ExecutionTable } from '../../src/daemon/state/execution-table.js';
import { execution } from '../../src/daemon/state/executions.js';
import { JobQueues } from '../../src/daemon/state/job-queues.js';
import { LiveCounts } from '../../src/daemon/state/live-counts.js';
import { indexEventWait } from '../../src/daemon/state/records/subscription-index.js';
import { DERIVED, initialState, STATE, type WfxState } from '../../src/daemon/state/state.js';
import { TaskIndex } from '../../src/daemon/state/task-index.js';

const refuse = (what: string) => () => {
  throw new TypeError(`a frozen ${what} was changed`);
};

/** Freezes `value` and everything it reaches (Maps and Sets made to throw on a change). Returns it. */
export function deepFreeze<T>(value: T, seen = new WeakSet<object>()): T {
  if ((typeof value !== 'object' && typeof value !== 'function') || value === null) return value;
  const obj = value as object;
  if (seen.has(obj) || typeof value === 'function') return value;
  seen.add(obj);
  if (ArrayBuffer.isView(obj)) return value; // a typed array's elements cannot be frozen
  if (obj instanceof Map) {
    for (const [k, v] of obj) {
      deepFreeze(k, seen);
      deepFreeze(v, seen);
    }
    Object.assign(obj, { set: refuse('Map'), delete: refuse('Map'), clear: refuse('Map') });
  } else if (obj instanceof Set) {
    for (const v of obj) deepFreeze(v, seen);
    Object.assign(obj, { add: refuse('Set'), delete: refuse('Set'), clear: refuse('Set') });
  }
  for (const key of Reflect.ownKeys(obj)) {
    const desc = Object.getOwnPropertyDescriptor(obj, key);
    if (desc && 'value' in desc) deepFreeze(desc.value, seen);
  }
  Object.freeze(obj);
  return value;
}

/**
 * A deeply frozen copy of `state`: its data copied (as a snapshot would hold it), its derived
 * indexes made from that data, then everything frozen. What a step decides on in MemoryStep.
 */
export function frozenCopy(state: WfxState): WfxState {
  const derived = new Set<string>(DERIVED);
  const data: Record<string, unknown> = {};
  for (const [key, v] of Object.entries(state)) if (!derived.has(key)) data[key] = v;
  const copy = Object.assign(initialState(), JSON.parse(JSON.stringify(data)) as Partial<WfxState>);
  copy.coldSubscriptions = state.coldSubscriptions;
  copy.coldTasks = state.coldTasks;
  const table = ExecutionTable.of(copy);
  for (const id of table.ids()) {
    const inst = execution(copy, id);
    if (inst === undefined || inst.stateCd !== STATE.RUNNING) continue;
    for (const nid in inst.nodes) indexEventWait(copy, inst, inst.nodes[nid]!);
  }
  LiveCounts.of(copy);
  JobQueues.of(copy);
  TaskIndex.of(copy);
  return deepFreeze(copy);
}
