/**
 * An outcome checked before any record of it is written: the limits it would pass (limits.ts)
 * and the depth of what it writes (json-shape.ts). A failing check turns it into the node's
 * failure, so nothing applied to the state can overflow what recurses over it later.
 */
import { describeDepthExcess, jsonDepthExcess } from '../../../shared/json-shape.js';
import { treeCancellation } from '../../state/bulk.js';
import { LiveCounts } from '../../state/live-counts.js';
import { MEMORY_MAX_ENTRY_BYTES } from '../../state/memory.js';
import type { Execution, WfxState } from '../../state/state.js';
import { childrenFailure, variablesFailure, type ExecutionLimits } from '../limits.js';
import type { MemoryWrite, Outcome } from '../nodes/handler.js';

/** The JSON bytes a step has let through so far, and how many it may (limits.ts, stepBytes); the starts it may make. */
export interface StepBytes {
  bytes: number;
  readonly maxBytes: number;
  /** Takes `n` starts of `organization` from the org-starts-per-second limit: 0, else the ms to wait (StartRate.take). */
  takeStarts(organization: string, n: number): number;
}

/**
 * The outcome, or a DATA_TOO_DEEP failure when what it would write (variables, output, data it
 * delivers or starts a child with) nests deeper than `maxJsonDepth`, or the failure of a limit
 * it would pass. What passes counts toward `budget.bytes`. Variables grow deeper inside a flow
 * (a setVariable that nests a reference to itself, in a loop).
 */
export function checkedOutcome(
  state: WfxState,
  limits: ExecutionLimits,
  maxJsonDepth: number,
  budget: StepBytes,
  inst: Execution,
  outcome: Outcome,
): Outcome {
  // Sizes first: their walk stops at the limit, so the depth walk after it is bounded too.
  const limited = limitedOutcome(state, limits, budget, inst, outcome);
  return limited === outcome ? deepChecked(outcome, maxJsonDepth) : limited;
}

/**
 * The outcome, or the failure of a limit it would pass (limits.ts): the variables it sets,
 * the executions it starts (their number, the data they carry, their pace). An execution whose
 * tree is being cancelled (treeCancellation) is cancelled instead of starting another.
 */
function limitedOutcome(
  state: WfxState,
  limits: ExecutionLimits,
  budget: StepBytes,
  inst: Execution,
  outcome: Outcome,
): Outcome {
  const variables = 'variables' in outcome ? outcome.variables : undefined;
  if (variables) {
    const failure = variablesFailure(inst, variables, limits);
    if (typeof failure !== 'number') return failure;
    budget.bytes += failure;
  }
  if (outcome.kind !== 'call' && (outcome.kind !== 'wait' || outcome.start === undefined)) return outcome;
  const starts = outcome.kind === 'wait' ? outcome.start! : [outcome.start];
  if (starts.length === 0) return outcome;
  const root = inst.root ?? inst.processInstanceId;
  const cancelling = treeCancellation(state.bulks, root);
  if (cancelling !== null)
    return {
      kind: 'cancel',
      reason: `its tree (root ${root}) is cancelled by bulk operation ${cancelling.bulkId}`,
    };
  const failure = childrenFailure(inst, starts, outcome.kind === 'wait', {
    limits,
    counts: LiveCounts.of(state),
    room: budget.maxBytes,
    treeCreated: state.treeCreated[root] ?? 0,
    takeStarts: (n) => budget.takeStarts(inst.organization, n),
  });
  if (typeof failure !== 'number') return failure;
  budget.bytes += failure;
  return outcome;
}

/** The outcome, or DATA_TOO_DEEP when what it writes nests deeper than `max`. */
function deepChecked(outcome: Outcome, max: number): Outcome {
  const fail = (value: unknown, what: string): Outcome | null => {
    const excess = jsonDepthExcess(value, max);
    return excess === null
      ? null
      : { kind: 'fail', code: 'DATA_TOO_DEEP', message: `${what} ${describeDepthExcess(excess)}` };
  };
  switch (outcome.kind) {
    case 'next':
      return (
        (outcome.variables && fail(outcome.variables, 'the variables the node sets are')) ??
        (outcome.output && fail(outcome.output, 'the output the node sets is')) ??
        (outcome.deliver && fail(outcome.deliver.data, 'the data the node sends is')) ??
        (outcome.memory && memoryFailure(outcome.memory, max)) ??
        outcome
      );
    case 'wait':
      return (
        (outcome.variables && fail(outcome.variables, 'the variables the node sets are')) ??
        outcome.start?.reduce<Outcome | null>(
          (found, child) => found ?? fail(child.variables, 'the variables of the execution the node starts are'),
          null,
        ) ??
        outcome
      );
    case 'call':
      return fail(outcome.start.variables, 'the data of the execution the node starts is') ?? outcome;
    case 'cancel':
    case 'fail':
      return (outcome.variables && fail(outcome.variables, 'the variables the node sets are')) ?? outcome;
    default:
      return outcome;
  }
}

/**
 * A memory write that would nest deeper than `max` (DATA_TOO_DEEP) or hold more than an entry
 * may (MEMORY_TOO_LARGE), as the node's failure; null when every write may go. Depth first:
 * measuring the size serializes the value, which must not recurse too deep.
 */
function memoryFailure(writes: readonly MemoryWrite[], max: number): Outcome | null {
  for (const w of writes) {
    if (!w.entry) continue;
    const excess = jsonDepthExcess(w.entry.value, max);
    if (excess !== null)
      return {
        kind: 'fail',
        code: 'DATA_TOO_DEEP',
        message: `the value for memory ${w.namespace}/${w.key} is ${describeDepthExcess(excess)}`,
      };
    const bytes = Buffer.byteLength(JSON.stringify(w.entry.value) ?? 'null');
    if (bytes > MEMORY_MAX_ENTRY_BYTES)
      return {
        kind: 'fail',
        code: 'MEMORY_TOO_LARGE',
        message: `the value for memory ${w.namespace}/${w.key} is ${bytes} bytes of JSON, more than ${MEMORY_MAX_ENTRY_BYTES}`,
      };
  }
  return null;
}
