/**
 * What the daemon keeps of an execution that is not resident (decision 068, steps 4-6): enough
 * to route work to it and to list it without reading its document. An execution's summary is
 * made from its document when a checkpoint writes it to an execution segment; the segment's
 * index holds it, and the resident directory is loaded from those indexes at start.
 */
import { STATUS } from '../../shared/api/index.js';
import type { Execution, NodeInstance } from './execution-document.js';

/** What one waiting node waits for, as far as routing needs. */
export type WaitSummary =
  | {
      readonly kind: 'input';
      readonly node: string;
      /**
       * When the node started waiting (ms since the epoch): the task list's order. Node times are
       * written by toISOString, so `new Date(since).toISOString()` is the node's startTime.
       */
      readonly since: number;
      readonly assignee: string | null;
    }
  | {
      readonly kind: 'event';
      readonly node: string;
      readonly eventType: 'message' | 'signal';
      /** The node's id in its flow (NodeInstance.nodeId: what a subscription names). */
      readonly nodeId: string;
      /** The message or signal name the node waits on (its subscription bucket with the key). */
      readonly ref: string;
      readonly key: string | null;
    }
  | {
      readonly kind: 'job';
      readonly node: string;
      readonly domain: string;
      readonly action: string;
      /** Not activated before this (ms), a retry's backoff; null: at once. */
      readonly notBefore: number | null;
      /** The worker's lock lapses at this (ms); null: not locked. */
      readonly lockedUntil: number | null;
      /** Its execution's priority (Execution.priority): the job queue's order. Absent: 0 (written only when not). */
      readonly priority?: number;
    }
  | { readonly kind: 'timer' | 'child' | 'loop' | 'tools' | 'queue'; readonly node: string };

/** An execution as the directory keeps it while its document stays on disk. */
export interface ExecutionSummary {
  readonly id: string;
  readonly organization: string;
  readonly processId: string;
  readonly processVersion: string;
  readonly environment: string;
  /** STATE: a summary of a finished execution is kept until history has it. */
  readonly stateCd: number;
  /** The execution at the top of its tree (Execution.root); null: this one. */
  readonly root: string | null;
  readonly parent: string | null;
  /** When it started (ms since the epoch; `new Date(startMs).toISOString()` is its startTime). */
  readonly startMs: number;
  /** Started by an execution trigger (Execution.triggeredBy set): trigger health notes its start. */
  readonly triggered: boolean;
  /** Holds or waits for a slot of its flow's concurrency limit (Execution.concurrency set): a restart reads it back first. Absent: false (written only when true). */
  readonly slot?: boolean;
  /** A child execution (Execution.parentNodeInstanceId set: its parent's node waits for it), as live counts count them. */
  readonly child: boolean;
  /** The execution's own correlation key. */
  readonly correlationKey: string | null;
  /**
   * Its earliest timer (ms): a wait's due time or an unfired timer boundary event of a live
   * node; null: none. When it comes, the execution is read and its timers are armed exactly.
   */
  readonly dueMs: number | null;
  /** Node instances Active: nonzero means a restart must run it again. */
  readonly active: number;
  /** Its waiting nodes, in node order. */
  readonly waits: readonly WaitSummary[];
  /** Its search attributes (Execution.search). Absent: none (written only when it has some). */
  readonly search?: Readonly<Record<string, string>>;
}

/** A summary's flag bits as the segment index and the directory keep them: `triggered`. */
export const FLAG_TRIGGERED = 1;
/** A summary's flag bit: `child`. */
export const FLAG_CHILD = 2;

/** A summary's flag bit: `slot`. */
export const FLAG_SLOT = 4;

/** The flag bits of `summary`: FLAG_TRIGGERED, FLAG_CHILD and FLAG_SLOT. */
export function summaryFlags(summary: Pick<ExecutionSummary, 'triggered' | 'child' | 'slot'>): number {
  return (
    (summary.triggered ? FLAG_TRIGGERED : 0) |
    (summary.child ? FLAG_CHILD : 0) |
    (summary.slot === true ? FLAG_SLOT : 0)
  );
}

/**
 * `summary`, marked `slot` when `slot` is true: set after the literal, so that the summaries of
 * executions without one keep one shape (no spread: docs/decisions/011-no-object-spread-for-growing-objects.md).
 */
export function withSlot(summary: ExecutionSummary, slot: boolean): ExecutionSummary {
  if (slot) (summary as { slot?: boolean }).slot = true;
  return summary;
}

/** The due times (ms) of the unfired timer boundary events of a live node (engine/effect-plan.ts knows the flow). */
export type BoundaryDue = (inst: Execution, ni: NodeInstance) => readonly number[];

/** The summary of execution `inst`. Pure (`boundaryDue` reads its flow). */
export function summarize(inst: Execution, boundaryDue: BoundaryDue): ExecutionSummary {
  let due: number | null = null;
  let active = 0;
  const waits: WaitSummary[] = [];
  const earlier = (ms: number): void => {
    if (Number.isFinite(ms) && (due === null || ms < due)) due = ms;
  };
  for (const nid in inst.nodes) {
    const ni = inst.nodes[nid]!;
    if (ni.statusCd === STATUS.ACTIVE) active++;
    else if (ni.statusCd !== STATUS.WAITING) continue;
    for (const at of boundaryDue(inst, ni)) earlier(at);
    const wait = ni.wait;
    if (ni.statusCd !== STATUS.WAITING || wait === null) continue;
    if (wait.dueAt) earlier(Date.parse(wait.dueAt));
    waits.push(waitSummary(inst, ni));
  }
  const summary: ExecutionSummary = {
    id: inst.processInstanceId,
    organization: inst.organization,
    processId: inst.processId,
    processVersion: inst.processVersion,
    environment: inst.environment,
    stateCd: inst.stateCd,
    root: inst.root ?? null,
    parent: inst.parentInstanceId,
    startMs: Date.parse(inst.startTime),
    triggered: inst.triggeredBy !== undefined,
    child: inst.parentInstanceId !== null && inst.parentNodeInstanceId !== undefined,
    correlationKey: inst.correlationKey,
    dueMs: due,
    active,
    waits,
  };
  if (inst.search !== undefined) (summary as { search?: Readonly<Record<string, string>> }).search = inst.search;
  return withSlot(summary, inst.concurrency !== undefined);
}

/** The summary of waiting node `ni` of `inst` (its `wait` set). */
function waitSummary(inst: Execution, ni: NodeInstance): WaitSummary {
  const wait = ni.wait!;
  switch (wait.kind) {
    case 'input':
      return { kind: 'input', node: ni.id, since: Date.parse(ni.startTime), assignee: wait.assignee };
    case 'event':
      return {
        kind: 'event',
        node: ni.id,
        eventType: wait.eventType,
        nodeId: ni.nodeId,
        ref: wait.messageRef,
        key: wait.correlationKey,
      };
    case 'job':
      return {
        kind: 'job',
        node: ni.id,
        domain: wait.domain,
        action: wait.action,
        notBefore: wait.notBefore === null ? null : Date.parse(wait.notBefore),
        lockedUntil: wait.lock === null ? null : Date.parse(wait.lock.expiresAt),
        ...(inst.priority !== undefined && inst.priority !== 0 && { priority: inst.priority }),
      };
    default:
      return { kind: wait.kind, node: ni.id };
  }
}
