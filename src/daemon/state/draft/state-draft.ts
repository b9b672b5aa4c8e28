/**
 * A step's draft: the state a step decides on (engine/step/), a copy-on-write view over the
 * live state that the step's records are applied to, so later decisions of the same step see
 * them while the live state stays as it was. The runner commits a durable step's draft (the
 * store's transaction, store/record-store.ts): its changes are handed over, not applied again
 * (docs/decisions/101-a-step-on-a-draft.md). A step that throws leaves its draft behind and
 * nothing changed.
 *
 * What the draft holds of its own:
 * - the executions the step read: a copy each, made on first read (`execution`), since the
 *   reducer changes an execution in place; new ones as the reducer puts them. The commit puts
 *   the copies of those the records changed in place of the live objects (the rest are
 *   dropped): an execution resumed in a copy also leaves its old objects to the old generation
 *   unchanged (object-shapes.ts, youngCopy: why that pays);
 * - the state's dictionaries the reducer writes (kept messages, tree counts, bulks, memory...):
 *   copy-on-write overlays (cow-record.ts), made on first read;
 * - the indexes a step reads back (live counts, job queues, concurrency slots): forks with copy-on-write maps;
 *   the task index, which no step reads: its changes, made at the commit; the file refs and
 *   the trigger fires: made at the commit, from the records.
 * Everything else (the catalogue: flows, keys, domains...) is the live state's, read only: no
 * step record changes it.
 */
import { executionsTouched, type WfxRecord } from '../records.js';
import { FileRefs } from '../file-refs.js';
import { JobQueues } from '../job-queues.js';
import { ConcurrencySlots } from '../concurrency-slots.js';
import { LiveCounts } from '../live-counts.js';
import { TaskIndex } from '../task-index.js';
import { ExecutionTable } from '../execution-table.js';
import { execution as liveExecution } from '../executions.js';
import { carryTriggerFires } from '../trigger-fires.js';
import { executionCopy } from '../object-shapes.js';
import type { Execution, WfxState } from '../state.js';
import { commitRecord, cowRecord } from './cow-record.js';

/** The state's dictionaries a step's records may write: each an overlay in the draft. */
const OVERLAID = [
  'treeCreated',
  'subscriptions',
  'messages',
  'messageIds',
  'thrown',
  'bulks',
  'pendingDeliveries',
  'webhookDeliveries',
  'webhookRefused',
  'webhookEventIds',
  'scheduleFires',
  'debounced',
  'emailSeen',
  'memory',
  'files',
] as const satisfies ReadonlyArray<keyof WfxState>;

type Overlaid = (typeof OVERLAID)[number];

/**
 * Those whose values the reducer replaces and never changes in place: their overlays hand a
 * value out as it is (cowRecord's `shallow`). The step's tests decide on deeply frozen states,
 * so a handler that changed one in place would throw there.
 */
const SHALLOW: ReadonlySet<Overlaid> = new Set([
  'treeCreated',
  'debounced',
  'subscriptions',
  'messages',
  'messageIds',
  'thrown',
  'files',
]);

/**
 * A step's draft over `base` (see the top of this file). `draft.state` is what the step and the
 * reducer take: the draft itself, a WfxState whose fields are getters over its own parts (the
 * accessors below, and those defined once on the prototype after the class), so a step's draft
 * costs a few fields, each part made on first use, not an object of thirty properties.
 */
export class StateDraft {
  /**
   * The executions the step read or wrote, by id (an archived one: undefined). A dictionary
   * from the start (no prototype): a step's new ids would each give a plain object a new shape.
   */
  readonly instances: Record<string, Execution | undefined> = Object.create(null) as Record<
    string,
    Execution | undefined
  >;
  private table: ExecutionTable<Execution> | undefined = undefined;
  private overlays: Map<Overlaid, object> | null = null;
  private liveCountsFork: LiveCounts | undefined = undefined;
  private jobQueuesFork: JobQueues | undefined = undefined;
  private slotsFork: ConcurrencySlots | undefined = undefined;
  private taskIndexFork: TaskIndex | undefined = undefined;

  constructor(readonly base: WfxState) {}

  /** The draft as the reducer and the step see it. */
  get state(): WfxState {
    return this as unknown as WfxState;
  }

  /** Execution `id` of the base, copied into the draft on first read (executions.ts, execution). */
  readThrough(id: string): Execution | undefined {
    if (Object.hasOwn(this.instances, id)) return undefined; // archived by this step
    const live = liveExecution(this.base, id);
    if (live === undefined) return undefined;
    const copy = executionCopy(live);
    this.instances[id] = copy;
    return copy;
  }

  /** The table of the draft's executions (ExecutionTable.forDraft: it lists nothing), made on first use. */
  get instanceTable(): ExecutionTable<Execution> {
    return (this.table ??= ExecutionTable.forDraft(this.state));
  }

  set instanceTable(table: ExecutionTable<Execution>) {
    this.table = table;
  }

  /** The overlay of the base's dictionary `key`, made on first use. */
  overlay(key: Overlaid): object {
    const overlays = (this.overlays ??= new Map());
    let o = overlays.get(key);
    if (o === undefined) overlays.set(key, (o = cowRecord(this.base[key] as object, SHALLOW.has(key))));
    return o;
  }

  get liveCounts(): LiveCounts {
    return (this.liveCountsFork ??= LiveCounts.of(this.base).fork(this.state));
  }

  get jobQueues(): JobQueues {
    return (this.jobQueuesFork ??= JobQueues.of(this.base).fork(this.state));
  }

  get concurrencySlots(): ConcurrencySlots {
    return (this.slotsFork ??= ConcurrencySlots.of(this.base).fork(this.state));
  }

  /** Only a made index is kept up (TaskIndex.held): a draft keeps up the base's, if it has one. */
  get taskIndex(): TaskIndex | undefined {
    const held = TaskIndex.held(this.base);
    return held === null ? undefined : (this.taskIndexFork ??= held.fork(this.state));
  }

  /** None: the base's file refs are kept up from the records at the commit. */
  get fileRefs(): undefined {
    return undefined;
  }

  /**
   * Hands the draft's changes to the live state (the base), `records` being what the step
   * wrote: the executions they changed, the dictionaries, the forked indexes, then what is
   * made from the records themselves. Called once, synchronously, inside the store's
   * transaction: a throw here fails the store.
   */
  commit(records: readonly WfxRecord[]): void {
    const base = this.base;
    const own = this.instances;
    const changed = new Set<string>();
    const add = (id: string): void => void changed.add(id);
    for (const r of records) executionsTouched.touched(r, add);
    const table = ExecutionTable.of(base);
    for (const id in own) {
      if (!changed.has(id)) continue; // only read: the live object stays
      const inst = own[id];
      if (inst !== undefined) table.put(inst);
      else table.archive(id);
    }
    if (this.overlays !== null) for (const cow of this.overlays.values()) commitRecord(cow);
    if (this.liveCountsFork !== undefined) LiveCounts.held(base)?.commitFork(this.liveCountsFork);
    if (this.jobQueuesFork !== undefined) JobQueues.held(base)?.commitFork(this.jobQueuesFork);
    if (this.slotsFork !== undefined) ConcurrencySlots.held(base)?.commitFork(this.slotsFork);
    if (this.taskIndexFork !== undefined) TaskIndex.held(base)?.commitFork(this.taskIndexFork);
    const fileRefs = base.fileRefs !== undefined ? FileRefs.held(base) : null;
    if (fileRefs !== null) for (const r of records) fileRefs.applied(r);
    carryTriggerFires(this.state, base);
    // What the commit handed over, let go: only the executions stay (the live state's now).
    this.overlays = null;
    this.liveCountsFork = this.jobQueuesFork = this.taskIndexFork = this.slotsFork = undefined;
    this.table = undefined;
  }
}

const proto = StateDraft.prototype as unknown as Record<string, unknown>;
/** The catalogue and settings: the base's own objects, read only (no step record changes them). */
const READ_ONLY = [
  'organizations',
  'apiKeys',
  'flows',
  'environments',
  'flowSecrets',
  'webhooks',
  'webhookTokens',
  'emailConnections',
  'aiProviders',
  'secretsKey',
  'secretsResealed',
  'domains',
  'audit',
  'coldSubscriptions',
  'coldTasks',
] as const satisfies ReadonlyArray<keyof WfxState>;
for (const key of READ_ONLY)
  Object.defineProperty(proto, key, {
    get(this: StateDraft) {
      return this.base[key];
    },
  });
for (const key of OVERLAID)
  Object.defineProperty(proto, key, {
    get(this: StateDraft) {
      return this.overlay(key);
    },
  });
