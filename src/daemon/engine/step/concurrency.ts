/**
 * Flow concurrency (a flow's `concurrency`): a top-level start of such a flow holds a slot of its
 * flow, environment and key value (Execution.concurrency) while it runs. Over the limit, policy
 * `queue` writes the start queued (its start event waits, a `queue` wait), `cancel-new` refuses
 * it (CONCURRENCY_LIMIT_REACHED), `cancel-oldest` cancels the oldest holder first. A holder that
 * ends gives its slot, in the same step, to the next queued start of its slot: the highest
 * priority, the oldest within one (state/concurrency-slots.ts). A queued start is thus started
 * by the journal entry that ends the holder before it: once, and never lost to a crash.
 *
 * The executions a slot's holders and queue name are reached past the trees a step's input
 * names (Step.reach): they are always resident (the cache never evicts one).
 */
import { WfxError } from '../../../shared/errors.js';
import { ConcurrencySlots, queuedNode } from '../../state/concurrency-slots.js';
import { execution } from '../../state/executions.js';
import { STATE, type Execution, type NodeInstance, type WfxState } from '../../state/state.js';
import type { LaunchParams } from './context.js';
import type { ResumeInput } from '../nodes/handler.js';
import { concurrencyOf, slotKeyOf } from './slot-key.js';

/** What concurrency needs of the step (tokens.ts, step.ts; structural, so that neither imports this one's importers). */
interface SlotStep {
  readonly state: WfxState;
  readonly touched: Set<string>;
  reach(instanceId: string): void;
  wake(inst: Execution, ni: NodeInstance, input: ResumeInput): void;
  finish(inst: Execution, stateCd: 1 | 2 | 3, reason: string): void;
  launch(params: LaunchParams): Execution;
  launchQueued(params: LaunchParams): Execution;
  drain(): void;
}

/** Where a resolved start goes: it runs, waits for a slot, or first cancels the oldest holder. */
export type Placement = 'run' | 'queue' | { readonly cancel: Execution };

/**
 * Where start `params` goes (see the top of this file). Throws CONCURRENCY_LIMIT_REACHED under
 * policy `cancel-new`; changes nothing.
 */
export function placeStart(s: Pick<SlotStep, 'state'>, params: LaunchParams): Placement {
  const slot = params.concurrency;
  const c = slot === undefined ? undefined : concurrencyOf(s.state, params.processId, params.processVersion);
  if (slot === undefined || c === undefined) return 'run';
  const slots = ConcurrencySlots.of(s.state);
  if (slots.holders(params.organization, slot) < c.limit) return 'run';
  const policy = c.policy ?? 'queue';
  if (policy === 'queue') return 'queue';
  const key = slotKeyOf(slot);
  if (policy === 'cancel-new')
    throw new WfxError(
      'CONCURRENCY_LIMIT_REACHED',
      `flow ${params.processName} runs ${c.limit} execution${c.limit === 1 ? '' : 's'}${key === '' ? '' : ` for key "${key}"`} in ${params.environment} already (its concurrency limit, policy cancel-new)`,
      { details: { processId: params.processId, limit: c.limit, key } },
    );
  const oldest = slots.oldest(params.organization, slot);
  const inst = oldest === undefined ? undefined : execution(s.state, oldest);
  return inst === undefined ? 'run' : { cancel: inst };
}

/** Launches start `params` where `placement` says, and runs it as far as it goes. */
export function launchPlaced(s: SlotStep, params: LaunchParams, placement: Placement): Execution {
  if (placement === 'queue') return s.launchQueued(params);
  if (placement !== 'run') cancelOldest(s, placement.cancel);
  const inst = s.launch(params);
  s.drain();
  return inst;
}

/** Cancels `oldest`, the holder a start under policy `cancel-oldest` takes the slot of. */
export function cancelOldest(s: Pick<SlotStep, 'reach' | 'touched' | 'finish'>, oldest: Execution): void {
  s.reach(oldest.processInstanceId);
  s.touched.add(oldest.processInstanceId);
  s.finish(oldest, STATE.CANCELLED, "a newer start took its slot (the flow's concurrency limit, policy cancel-oldest)");
}

/**
 * Execution `ended` (which held or waited for a slot) ended: the next queued starts of its slot
 * are given the slots free now, each resumed (not drained: the caller drains).
 */
export function passSlotOn(s: Pick<SlotStep, 'state' | 'reach' | 'wake'>, ended: Execution): void {
  const slot = ended.concurrency;
  if (slot === undefined) return;
  const slots = ConcurrencySlots.of(s.state);
  const org = ended.organization;
  const woken = new Set<string>();
  for (;;) {
    const id = slots.next(org, slot);
    const next = id === undefined || woken.has(id) ? undefined : execution(s.state, id);
    const waiting = next === undefined ? undefined : queuedNode(next);
    if (next === undefined || waiting === undefined) return;
    woken.add(next.processInstanceId);
    const limit = concurrencyOf(s.state, next.processId, next.processVersion)?.limit ?? Infinity;
    if (slots.holders(org, slot) >= limit) return;
    s.reach(next.processInstanceId);
    s.wake(next, waiting, { kind: 'slot' });
  }
}
