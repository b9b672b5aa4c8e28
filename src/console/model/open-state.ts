/*
 * Which containers of a diagram are open, and which run of each body they show (a loop's
 * iteration, an embedded subProcess's child execution). Pure: the execution page keeps it in
 * state and reads the runs it names.
 */
import type { InstanceView } from '../../shared/api/process.js';
import type { Opened } from '../diagram/graph-model.js';

/** Open containers by node id: the child execution chosen (null: the latest) and what is open in its body. */
export interface OpenState {
  readonly [containerId: string]: { readonly childId: string | null; readonly inner: OpenState };
}

/** The state with the container at `scope` + `id` opened, or closed if it was open. Pure. */
export function toggleOpen(open: OpenState, scope: readonly string[], id: string): OpenState {
  const [head, ...rest] = scope;
  if (head === undefined) {
    if (open[id]) {
      const { [id]: _closed, ...others } = open;
      return others;
    }
    return { ...open, [id]: { childId: null, inner: {} } };
  }
  const at = open[head];
  if (!at) return open;
  return { ...open, [head]: { ...at, inner: toggleOpen(at.inner, rest, id) } };
}

/** The state with every container of `scope` open (a deep link to a node inside bodies). Pure. */
export function openPath(open: OpenState, scope: readonly string[]): OpenState {
  const [head, ...rest] = scope;
  if (head === undefined) return open;
  const at = open[head] ?? { childId: null, inner: {} };
  return { ...open, [head]: { ...at, inner: openPath(at.inner, rest) } };
}

/** The state with the open container at `scope` + `id` showing child execution `childId`. Pure. */
export function chooseRun(open: OpenState, scope: readonly string[], id: string, childId: string): OpenState {
  const [head, ...rest] = scope;
  if (head === undefined) return open[id] ? { ...open, [id]: { childId, inner: {} } } : open;
  const at = open[head];
  if (!at) return open;
  return { ...open, [head]: { ...at, inner: chooseRun(at.inner, rest, id, childId) } };
}

/** The child executions node `id` of `run` started, oldest first. Pure. */
export function childrenOf(run: InstanceView | null, id: string): string[] {
  return (run?.nodes ?? []).filter((n) => n.nodeId === id).flatMap((n) => n.childInstanceIds ?? []);
}

/**
 * The opened bodies for buildGraph: each open container showing its chosen run (by default
 * the latest child of the container's node in `run`), read from `runs`; a run not read yet
 * shows the body without states. Pure.
 */
export function openedBodies(
  open: OpenState,
  run: InstanceView | null,
  runs: Readonly<Record<string, InstanceView>>,
): Opened {
  const out: Record<string, Opened[string]> = {};
  for (const [id, o] of Object.entries(open)) {
    const childId = o.childId ?? childrenOf(run, id).at(-1) ?? null;
    const childRun = childId === null ? null : (runs[childId] ?? null);
    out[id] = { run: childRun, opened: openedBodies(o.inner, childRun, runs) };
  }
  return out;
}

/** The child executions the open bodies show, to be read (every one named, read or not). Pure. */
export function bodyRuns(
  open: OpenState,
  run: InstanceView | null,
  runs: Readonly<Record<string, InstanceView>>,
): string[] {
  const ids: string[] = [];
  for (const [id, o] of Object.entries(open)) {
    const childId = o.childId ?? childrenOf(run, id).at(-1) ?? null;
    if (childId === null) continue;
    ids.push(childId);
    ids.push(...bodyRuns(o.inner, runs[childId] ?? null, runs));
  }
  return ids;
}

/** The child execution chosen for the container at `scope` + `id` (null: the latest, or not open). Pure. */
export function chosenRun(open: OpenState, scope: readonly string[], id: string): string | null {
  let at: OpenState | undefined = open;
  for (const s of scope) at = at?.[s]?.inner;
  return at?.[id]?.childId ?? null;
}
