/**
 * The slots of flows' concurrency limits (a flow's `concurrency`, engine/step/concurrency.ts):
 * per organization and slot (Execution.concurrency: environment, flow and key value), the
 * executions that hold one, in the order they took it, and those queued for one, by priority
 * then in the order they came. Derived from the executions (a queued one's start event waits
 * with a `queue` wait), so never written to a snapshot (DERIVED in state.ts): made by the
 * recovery walk, else on first use; kept up by the reducer's `instance.started`, the `queue`
 * wait's `node.waiting` and its end, and `instance.finished`.
 *
 * Every execution that holds or waits for a slot stays resident (at-rest/execution-cache.ts
 * never evicts one; a restart reads the cold ones back first), so a walk over the resident
 * executions finds them all.
 */
import { STATE, STATUS } from '../../shared/api/index.js';
import type { Execution, NodeInstance } from './execution-document.js';
import { ExecutionTable } from './execution-table.js';
import { ownIndex, StateIndex } from './state-index.js';
import { commitCow, CowMap } from './draft/cow-map.js';

/** What the slots belong to: the state's executions and the index kept beside them. */
export interface ConcurrencySlotsHolder {
  instances: Record<string, Execution | undefined>;
  instanceTable?: ExecutionTable<Execution> | undefined;
  concurrencySlots?: ConcurrencySlots | undefined;
}

/** Ids as a set in insertion order (a Map's keys: a CowMap can fork it). */
type Ids = Map<string, true>;

/** The start event of `inst` while it waits for a slot, else undefined. */
export function queuedNode(inst: Execution): NodeInstance | undefined {
  if (inst.concurrency === undefined || inst.stateCd !== STATE.RUNNING) return undefined;
  for (const id in inst.nodes) {
    const ni = inst.nodes[id]!;
    if (ni.statusCd === STATUS.WAITING && ni.wait?.kind === 'queue') return ni;
  }
  return undefined;
}

/**
 * Whether `map` is empty: its first key, not its size, which a step's copy-on-write fork
 * (draft/cow-map.ts) counts by walking every key (a queue may be long).
 */
const isEmpty = (map: ReadonlyMap<unknown, unknown>): boolean => map.keys().next().done === true;

/** The index's key of `inst`'s slot. */
const slotOf = (inst: Pick<Execution, 'organization' | 'concurrency'>): string =>
  `${inst.organization}\0${inst.concurrency!}`;

/** The slots of one state (see the top of this file). */
export class ConcurrencySlots extends StateIndex<ConcurrencySlotsHolder> {
  private constructor(
    state: ConcurrencySlotsHolder,
    /** By slot: the executions holding it, oldest first. */
    private holding: Map<string, Ids> = new Map(),
    /** By slot: by priority, the executions queued for it, oldest first. */
    private queued: Map<string, Map<number, Ids>> = new Map(),
    /** By slot: how many hold it (`holding`'s sizes, kept apart: a fork counts a Map's size by walking it). */
    private counts: Map<string, number> = new Map(),
  ) {
    super(state);
  }

  /** The slots of `state`: its own, or new ones made from its resident executions. */
  static of(state: ConcurrencySlotsHolder): ConcurrencySlots {
    const held = ownIndex(state.concurrencySlots, state);
    if (held !== null) return held;
    const made = ConcurrencySlots.building(state);
    for (const inst of ExecutionTable.of(state).live()) made.add(inst);
    return made.built();
  }

  /** The slots of `state` if they are made, else null (the reducer keeps up only slots that exist). */
  static held(state: ConcurrencySlotsHolder): ConcurrencySlots | null {
    return ownIndex(state.concurrencySlots, state);
  }

  /** New, empty slots made the state's own, for a walk to `add` every live execution and then call `built`. */
  static building(state: ConcurrencySlotsHolder): ConcurrencySlots {
    return (state.concurrencySlots = new ConcurrencySlots(state));
  }

  /** Counts `inst` while building (one with no slot, or finished, counts nothing). */
  add(inst: Execution): void {
    if (inst.concurrency === undefined || inst.stateCd !== STATE.RUNNING) return;
    if (queuedNode(inst) !== undefined) this.enqueue(inst);
    else this.hold(inst);
  }

  /** Ends a build: each list in id order, which is start order (a walk's order need not be). */
  built(): ConcurrencySlots {
    const sorted = (ids: Ids): Ids => new Map([...ids.keys()].sort().map((id) => [id, true]));
    for (const [slot, ids] of this.holding) {
      this.holding.set(slot, sorted(ids));
      this.counts.set(slot, ids.size);
    }
    for (const byPriority of this.queued.values()) for (const [p, ids] of byPriority) byPriority.set(p, sorted(ids));
    return this;
  }

  /** These slots for a step's draft: changes stay in the fork (copy-on-write maps) until `commitFork`. */
  fork(holder: ConcurrencySlotsHolder): ConcurrencySlots {
    return new ConcurrencySlots(
      holder,
      new CowMap(this.holding, 'nested'),
      new CowMap(this.queued, 'nested'),
      new CowMap(this.counts),
    );
  }

  /** Writes the changes of `f` (this one's fork) into these slots. */
  commitFork(f: ConcurrencySlots): void {
    commitCow(f.holding as CowMap<string, Ids>);
    commitCow(f.queued as CowMap<string, Map<number, Ids>>);
    commitCow(f.counts as CowMap<string, number>);
  }

  /** `inst` holds a slot (started, or given one), last of its slot's. */
  hold(inst: Execution): void {
    this.unqueue(inst);
    const slot = slotOf(inst);
    let ids = this.holding.get(slot);
    if (ids === undefined) this.holding.set(slot, (ids = new Map()));
    if (ids.has(inst.processInstanceId)) return;
    ids.set(inst.processInstanceId, true);
    this.counts.set(slot, (this.counts.get(slot) ?? 0) + 1);
  }

  /** `inst` waits for a slot (it holds none), last of its priority's. */
  enqueue(inst: Execution): void {
    this.unhold(inst);
    const slot = slotOf(inst);
    let byPriority = this.queued.get(slot);
    if (byPriority === undefined) this.queued.set(slot, (byPriority = new Map()));
    const p = inst.priority ?? 0;
    let ids = byPriority.get(p);
    if (ids === undefined) byPriority.set(p, (ids = new Map()));
    ids.set(inst.processInstanceId, true);
  }

  /** `inst` ended: it holds and waits for nothing. */
  release(inst: Execution): void {
    if (inst.concurrency === undefined) return;
    this.unhold(inst);
    this.unqueue(inst);
  }

  private unhold(inst: Execution): void {
    const slot = slotOf(inst);
    const ids = this.holding.get(slot);
    if (ids === undefined || !ids.delete(inst.processInstanceId)) return;
    const left = (this.counts.get(slot) ?? 1) - 1;
    if (left > 0) return void this.counts.set(slot, left);
    this.counts.delete(slot);
    this.holding.delete(slot);
  }

  private unqueue(inst: Execution): void {
    const slot = slotOf(inst);
    const byPriority = this.queued.get(slot);
    const p = inst.priority ?? 0;
    const ids = byPriority?.get(p);
    if (ids === undefined || !ids.delete(inst.processInstanceId)) return;
    if (!isEmpty(ids)) return;
    byPriority!.delete(p);
    if (isEmpty(byPriority!)) this.queued.delete(slot);
  }

  /** How many executions hold slot `slot` of `organization`. */
  holders(organization: string, slot: string): number {
    return this.counts.get(`${organization}\0${slot}`) ?? 0;
  }

  /** The execution that has held a slot of `slot` longest, if any. */
  oldest(organization: string, slot: string): string | undefined {
    const ids = this.holding.get(`${organization}\0${slot}`);
    return ids === undefined ? undefined : ids.keys().next().value;
  }

  /** The queued execution next in line for `slot`: the highest priority, the oldest in it. */
  next(organization: string, slot: string): string | undefined {
    const byPriority = this.queued.get(`${organization}\0${slot}`);
    if (byPriority === undefined) return undefined;
    let best: number | undefined;
    for (const p of byPriority.keys()) if (best === undefined || p > best) best = p;
    return best === undefined ? undefined : byPriority.get(best)!.keys().next().value;
  }

  /** How many queued executions of `slot` come before `inst` (0: it is next), or null when it is not queued. */
  position(inst: Execution): number | null {
    const byPriority = this.queued.get(slotOf(inst));
    const p = inst.priority ?? 0;
    const own = byPriority?.get(p);
    if (own === undefined || !own.has(inst.processInstanceId)) return null;
    let ahead = 0;
    for (const [q, ids] of byPriority!) if (q > p) ahead += ids.size;
    for (const id of own.keys()) {
      if (id === inst.processInstanceId) break;
      ahead++;
    }
    return ahead;
  }

  /** How many executions wait for a slot, in every organization and slot. */
  get queuedTotal(): number {
    let n = 0;
    for (const byPriority of this.queued.values()) for (const ids of byPriority.values()) n += ids.size;
    return n;
  }
}
