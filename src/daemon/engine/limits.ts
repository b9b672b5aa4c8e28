/**
 * What one execution, one tree of executions and one organization may hold: the engine's
 * limits, so that no flow and no tenant can exhaust the daemon. Each is checked before the
 * step that would pass it emits anything (the memory and the journal entry are never spent),
 * and reaching one fails the node (through error boundaries like any failure) or refuses the
 * start with a catalogue code: never the daemon. `--limit NAME=VALUE` sets them
 * (docs/operations.md, "Limits").
 */
import type { NodeFailureCode } from '../../shared/flow/failure-codes.js';
import { formatBytes, parseBytes } from '../../shared/bytes.js';
import { jsonSize } from '../../shared/json-size.js';
import type { LiveCounts } from '../state/live-counts.js';
import { liveNodes, logSize, measureVariables, variablesSize } from '../state/sizes.js';
import type { Execution } from '../state/state.js';
import type { ChildStart, Outcome } from './nodes/handler.js';

/** The engine's limits (EngineOptions.limits; DaemonOptions.limits). */
export interface ExecutionLimits {
  /** JSON size of one execution's variables (a node that would pass it fails: VARIABLES_TOO_LARGE). */
  readonly variablesBytes: number;
  /** JSON size of one execution's log (the execution fails once past it: LOG_LIMIT_EXCEEDED). */
  readonly logBytes: number;
  /** Active or waiting node instances of one execution: its parallel branches (BRANCH_LIMIT_EXCEEDED). */
  readonly branches: number;
  /** Running child executions of one execution: subProcesses, loop iterations, agent tools (CHILD_LIMIT_EXCEEDED). */
  readonly children: number;
  /** Running executions of one tree: a root and all started under it, children and called ones (TREE_LIMIT_EXCEEDED). */
  readonly treeExecutions: number;
  /**
   * Executions ever started under one root while its tree runs: children, loop iterations, agent
   * tools and called executions (TREE_BUDGET_EXCEEDED). What stops a flow that calls itself:
   * `treeExecutions` holds how many run at once, not how many a tree makes one after another.
   */
  readonly treeCreated: number;
  /** Iterations of one loopNode, whatever its `maxIterations` says (LOOP_LIMIT). */
  readonly loopIterations: number;
  /** Running executions of one organization (a start past it: EXECUTION_LIMIT_EXCEEDED). */
  readonly organizationExecutions: number;
  /**
   * Starts a second of one organization, however they are made (the API, triggers, nodes): a
   * start past it is refused, or fails its node, with ORG_RATE_EXCEEDED (start-rate.ts).
   */
  readonly organizationStartsPerSecond: number;
  /** Running bulk operations of one organization (system keys' over every organization count as one; BULK_LIMIT_EXCEEDED). */
  readonly bulkOperations: number;
  /** Running bulk operations in all (BULK_LIMIT_EXCEEDED). */
  readonly bulkOperationsTotal: number;
  /** Executions one bulk operation may select (BULK_TOO_LARGE). */
  readonly bulkExecutions: number;
  /** Executions one chain of execution triggers may start, one after the other (a start past it is skipped). */
  readonly triggerDepth: number;
}

const MiB = 1024 * 1024;

/**
 * The defaults: room for what flows do (a service response as large as a serviceTask takes, a
 * loop over a few thousand items, a thousand branches) on a laptop and a server alike; far below what
 * exhausts a daemon's heap or makes one journal entry too big to write.
 */
export const DEFAULT_LIMITS: ExecutionLimits = {
  variablesBytes: 10 * MiB,
  logBytes: 32 * MiB,
  branches: 1000,
  children: 1000,
  treeExecutions: 10_000,
  treeCreated: 10_000,
  loopIterations: 100_000,
  organizationExecutions: 1_000_000,
  organizationStartsPerSecond: 5_000,
  bulkOperations: 2,
  bulkOperationsTotal: 8,
  bulkExecutions: 100_000,
  triggerDepth: 5,
};

/**
 * The most one step may write as the data of what it starts and sets, summed over its nodes:
 * past it, the rest of the step's nodes are left for a later step, and a single node that
 * would pass it alone fails (STEP_TOO_LARGE). One step is one journal entry, made as one
 * string, which V8 caps far below the heap.
 */
export function stepBytes(limits: ExecutionLimits): number {
  return Math.max(64 * MiB, 2 * limits.variablesBytes);
}

/** The names `--limit NAME=VALUE` takes, each a key of ExecutionLimits, and whether its value is a size. */
export const LIMIT_NAMES: Readonly<Record<string, { readonly key: keyof ExecutionLimits; readonly size: boolean }>> = {
  'variables-size': { key: 'variablesBytes', size: true },
  'log-size': { key: 'logBytes', size: true },
  branches: { key: 'branches', size: false },
  children: { key: 'children', size: false },
  'tree-executions': { key: 'treeExecutions', size: false },
  'tree-created': { key: 'treeCreated', size: false },
  'loop-iterations': { key: 'loopIterations', size: false },
  'live-executions': { key: 'organizationExecutions', size: false },
  'org-starts-per-second': { key: 'organizationStartsPerSecond', size: false },
  'bulk-operations': { key: 'bulkOperations', size: false },
  'bulk-operations-total': { key: 'bulkOperationsTotal', size: false },
  'bulk-executions': { key: 'bulkExecutions', size: false },
  'trigger-depth': { key: 'triggerDepth', size: false },
};

/** The hard ceiling of `loop-iterations`: what the flow format allows a loopNode's `maxIterations` (schema.ts). */
export const MAX_LOOP_ITERATIONS = 100_000;

/**
 * One `--limit` value, `NAME=VALUE` (sizes as `16MiB`, `512KiB` or bytes; counts as whole
 * numbers), into its key and value. Throws an Error saying what is wrong (the CLI makes it a
 * usage error).
 */
export function parseLimit(text: string): { readonly key: keyof ExecutionLimits; readonly value: number } {
  const eq = text.indexOf('=');
  const name = eq < 0 ? text : text.slice(0, eq);
  const spec = LIMIT_NAMES[name];
  if (!Object.hasOwn(LIMIT_NAMES, name) || spec === undefined)
    throw new Error(`unknown limit ${name}; the limits are ${Object.keys(LIMIT_NAMES).join(', ')}`);
  const raw = eq < 0 ? '' : text.slice(eq + 1).trim();
  if (spec.size) {
    const bytes = parseBytes(raw) ?? NaN;
    if (!(bytes >= 1024 && bytes <= 4096 * MiB))
      throw new Error(`${name} must be a size from 1KiB to 4GiB, e.g. ${name}=16MiB`);
    return { key: spec.key, value: bytes };
  }
  const n = Number(raw);
  const max = spec.key === 'loopIterations' ? MAX_LOOP_ITERATIONS : 100_000_000;
  if (!/^\d+$/.test(raw) || n < 1 || n > max) throw new Error(`${name} must be a whole number from 1 to ${max}`);
  return { key: spec.key, value: n };
}

/** `limits` as people read them, one `name=value` each (for the daemon's start line and status). */
export function describeLimits(limits: ExecutionLimits): string {
  return Object.entries(LIMIT_NAMES)
    .map(([name, { key, size }]) => `${name}=${size ? formatBytes(limits[key]).replace(' ', '') : limits[key]}`)
    .join(' ');
}

/** A limit an execution passes: its failure code and why. */
export interface LimitExcess {
  readonly code: NodeFailureCode;
  readonly message: string;
}

/**
 * The first limit `inst` holds more than (its variables, its log, its branches; with `counts`,
 * its running children and its tree too), or null: at recovery, an execution left so by an
 * earlier version, or by limits lowered since, fails instead of running on.
 */
export function overLimits(inst: Execution, limits: ExecutionLimits, counts: LiveCounts | null): LimitExcess | null {
  const held = (what: string, n: number, limit: number, code: NodeFailureCode): LimitExcess | null =>
    n > limit ? { code, message: `the execution holds ${what} ${n}, over its limit of ${limit}` } : null;
  return (
    held('variables of JSON size', variablesSize(inst), limits.variablesBytes, 'VARIABLES_TOO_LARGE') ??
    held('a log of JSON size', logSize(inst), limits.logBytes, 'LOG_LIMIT_EXCEEDED') ??
    held('active or waiting nodes', liveNodes(inst), limits.branches, 'BRANCH_LIMIT_EXCEEDED') ??
    (counts &&
      (held('running children', counts.childrenOf(inst.processInstanceId), limits.children, 'CHILD_LIMIT_EXCEEDED') ??
        held('running executions in its tree', counts.tree(inst), limits.treeExecutions, 'TREE_LIMIT_EXCEEDED')))
  );
}

/** The node's failure when the variables it sets would pass the variables-size limit, else the bytes it writes. */
export function variablesFailure(
  inst: Execution,
  variables: Readonly<Record<string, unknown>>,
  limits: ExecutionLimits,
): Outcome | number {
  const max = limits.variablesBytes;
  const { total, written } = measureVariables(inst, variables, max);
  if (total <= max) return written;
  return {
    kind: 'fail',
    code: 'VARIABLES_TOO_LARGE',
    message: `the variables would be over ${formatBytes(max)} of JSON (the variables-size limit) with what the node sets`,
  };
}

/** What childrenFailure reads besides the execution: the limits, the counts, and what the step may still write and start. */
export interface ChildrenRoom {
  readonly limits: ExecutionLimits;
  readonly counts: LiveCounts;
  /** The bytes one step may write (stepBytes). */
  readonly room: number;
  /** Executions started under `inst`'s root so far (state.treeCreated). */
  readonly treeCreated: number;
  /**
   * Takes `n` starts of the organization from its org-starts-per-second limit: 0 when taken, else
   * the ms until they could go (StartRate.take). Asked last, once nothing else fails the node.
   */
  readonly takeStarts: (n: number) => number;
}

/**
 * The node's failure when the executions `starts` names would pass a limit (as children of
 * `inst`, or started by it: callProcess), else the bytes their data writes: each one's
 * variables within the variables-size limit, all of them within `room` (what one step may
 * write), their number within the children, tree-executions, live-executions and tree-created
 * limits, and their pace within org-starts-per-second.
 */
export function childrenFailure(
  inst: Execution,
  starts: readonly ChildStart[],
  asChildren: boolean,
  c: ChildrenRoom,
): Outcome | number {
  const { limits, counts } = c;
  const n = starts.length;
  const fail = (code: NodeFailureCode, message: string): Outcome => ({ kind: 'fail', code, message });
  const root = inst.root ?? inst.processInstanceId;
  if (asChildren && counts.childrenOf(inst.processInstanceId) + n > limits.children)
    return fail(
      'CHILD_LIMIT_EXCEEDED',
      `${n} more child executions would make more than ${limits.children} run at once (the children limit)`,
    );
  if (counts.tree(inst) + n > limits.treeExecutions)
    return fail(
      'TREE_LIMIT_EXCEEDED',
      `${n} more executions would make more than ${limits.treeExecutions} run under root ${root} (the tree-executions limit)`,
    );
  if (counts.organization(inst.organization) + n > limits.organizationExecutions)
    return fail(
      'EXECUTION_LIMIT_EXCEEDED',
      `organization ${inst.organization} runs ${limits.organizationExecutions} executions already (the live-executions limit)`,
    );
  if (c.treeCreated + n > limits.treeCreated)
    return fail(
      'TREE_BUDGET_EXCEEDED',
      `${n} more executions would make more than ${limits.treeCreated} started under root ${root} in all (the tree-created limit): a flow that starts itself, or a loop over more items than that`,
    );
  let bytes = 0;
  // Iterations share their values (a loop's items, the variables copied into each): each measured once.
  const measured = new Map<object, number>();
  for (const start of starts) {
    const size = variablesJsonSize(start.variables, Math.min(limits.variablesBytes, c.room - bytes), measured);
    if (size > limits.variablesBytes)
      return fail(
        'VARIABLES_TOO_LARGE',
        `an execution the node starts would have variables over ${formatBytes(limits.variablesBytes)} of JSON (the variables-size limit)`,
      );
    bytes += size;
    if (bytes > c.room)
      return fail(
        'STEP_TOO_LARGE',
        `the ${n} executions the node starts carry more than ${formatBytes(c.room)} of variables, more than one step may write; start fewer at once (concurrency) or keep less in the variables`,
      );
  }
  const waitMs = c.takeStarts(n);
  if (waitMs > 0)
    return fail(
      'ORG_RATE_EXCEEDED',
      `organization ${inst.organization} starts ${limits.organizationStartsPerSecond} executions a second already (the org-starts-per-second limit); ${n} more could start in ${waitMs} ms`,
    );
  return bytes;
}

/**
 * jsonSize of a variables object, its values looked up in `measured` by identity (and added
 * there): executions started together share most of their values. Stops past `cap`.
 */
function variablesJsonSize(
  vars: Readonly<Record<string, unknown>>,
  cap: number,
  measured: Map<object, number>,
): number {
  let size = 2;
  let entries = 0;
  for (const key in vars) {
    if (!Object.hasOwn(vars, key)) continue;
    const value = vars[key];
    if (value === undefined || typeof value === 'function') continue;
    entries++;
    if (typeof value === 'object' && value !== null) {
      let n = measured.get(value);
      if (n === undefined) {
        n = jsonSize(value, cap - size);
        if (n <= cap - size) measured.set(value, n);
      }
      size += key.length + 3 + n;
    } else size += key.length + 3 + jsonSize(value);
    if (size > cap) return size;
  }
  return size + Math.max(entries - 1, 0);
}
