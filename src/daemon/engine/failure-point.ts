/**
 * Where a failed execution stood when it failed, and what its variables were when it entered a
 * node: read from its node instances and its log (pure), for a retry (step/repair.ts) and a
 * replay. A failure leaves every other active or waiting node cancelled with one reason, in the
 * lines right before the execution's last one (step/tokens.ts, finish): those are the tokens a
 * retry puts back, with the node that failed.
 */
import { lineParts } from '../state/log-line.js';
import { STATE, STATUS, type Execution, type NodeInstance } from '../state/state.js';

/** The reason finish() gives the nodes it cancels when the execution fails. */
const CANCELLED_BY_FAILURE = 'cancelled: the execution failed';

/** Failures whose node is where a token stood, not a node that ran and failed (none ran). */
const TOKEN_AT_NODE = new Set(['STEP_LIMIT_EXCEEDED', 'BRANCH_LIMIT_EXCEEDED', 'LOG_LIMIT_EXCEEDED']);

/** What a retry of a failed execution puts back. */
export interface FailurePoint {
  /** The node instance that failed and failed the execution; null when the failure was not a node's (a limit). */
  readonly failed: NodeInstance | null;
  /**
   * Its child execution that failed and failed it (a subProcess), retried in its place; null
   * when the node runs again instead.
   */
  readonly child: string | null;
  /** Nodes where a token starts again, as new node instances: the failed node (unless its child is retried) and those the failure cancelled. */
  readonly tokens: readonly string[];
}

/** Where failed execution `inst` stood when it failed (see FailurePoint). */
export function failurePoint(inst: Execution): FailurePoint {
  const error = inst.error;
  const cancelled = cancelledByFailure(inst);
  const tokens = cancelled.map((n) => n.nodeId);
  let failed: NodeInstance | null = null;
  if (error?.nodeId != null) {
    const nodes = Object.values(inst.nodes);
    for (let i = nodes.length - 1; i >= 0 && failed === null; i--) {
      const n = nodes[i]!;
      if (n.nodeId === error.nodeId && n.statusCd === STATUS.FAILED && n.endTime === inst.endTime) failed = n;
    }
  }
  let child: string | null = null;
  if (failed !== null) {
    const last = failed.children?.at(-1);
    if (failed.nodeType === 'subProcess' && last !== undefined && error?.code !== 'CHILD_CANCELLED') child = last;
    else tokens.unshift(failed.nodeId);
  } else if (error?.nodeId != null && TOKEN_AT_NODE.has(error.code) && !tokens.includes(error.nodeId)) {
    // The token that would have entered the node (a limit stopped it before it was written).
    tokens.unshift(error.nodeId);
  }
  return { failed, child, tokens };
}

/** The node instances the failure cancelled: the lines before the execution's last that say so. */
function cancelledByFailure(inst: Execution): NodeInstance[] {
  const found: NodeInstance[] = [];
  for (let i = inst.logs.length - 2; i >= 0; i--) {
    const { nodeInstanceId, message } = lineParts(inst.logs[i]!);
    if (message !== CANCELLED_BY_FAILURE || nodeInstanceId === null) break;
    const node = inst.nodes[nodeInstanceId];
    if (node?.statusCd === STATUS.CANCELLED) found.push(node);
  }
  return found.reverse();
}

/** The variables of `inst` when a token last entered `nodeId`, read from its log. */
export type EntryVariables =
  | { readonly kind: 'found'; readonly variables: Record<string, unknown> }
  /** No node instance of `nodeId`: the execution never reached it. */
  | { readonly kind: 'not-reached' }
  /** The log had stopped carrying copies of the variables before the node was entered. */
  | { readonly kind: 'unlogged' };

/**
 * The variables as they stood when `nodeId` was last entered: the last copy the log holds
 * before that node's `started` line (every change of the variables logs a copy after it).
 */
export function variablesAtEntry(inst: Execution, nodeId: string): EntryVariables {
  const logs = inst.logs;
  let start = -1;
  for (let i = logs.length - 1; i >= 0 && start < 0; i--) {
    const { nodeInstanceId, message } = lineParts(logs[i]!);
    if (message === 'started' && nodeInstanceId !== null && inst.nodes[nodeInstanceId]?.nodeId === nodeId) start = i;
  }
  if (start < 0) return { kind: 'not-reached' };
  if (inst.varsUnlogged !== undefined && inst.varsUnlogged < start) return { kind: 'unlogged' };
  for (let i = start - 1; i >= 0; i--) {
    const { variables } = lineParts(logs[i]!);
    if (variables !== undefined) return { kind: 'found', variables };
  }
  return { kind: 'unlogged' };
}

/** Where a retry's reads look: the live state, then history. */
export interface ExecutionReads {
  readonly live: (id: string) => Execution | undefined;
  readonly archived: (id: string) => Promise<Execution | null>;
}

/**
 * What a retry of failed execution `root` needs from history: it, and each child whose failure
 * failed its parent's node, as far down as they go, by id, for those not live. `found` is told
 * each child's id before it is read (to hold it in the live state).
 */
export async function readFailureChain(
  root: Execution,
  reads: ExecutionReads,
  found: (id: string) => void = () => undefined,
): Promise<Map<string, Execution>> {
  const archived = new Map<string, Execution>();
  if (!reads.live(root.processInstanceId)) archived.set(root.processInstanceId, root);
  for (let at = root.stateCd === STATE.FAILED ? failurePoint(root) : null; at?.child != null;) {
    found(at.child);
    const live = reads.live(at.child);
    const child = live ?? (await reads.archived(at.child));
    if (!child || child.stateCd !== STATE.FAILED) break;
    if (!live) archived.set(at.child, child);
    at = failurePoint(child);
  }
  return archived;
}
