/**
 * Every record and the one reducer that applies them. Each family of records (records/) has its
 * types and its handlers side by side; this file joins them into the union and the dispatch
 * table, so the reducer's invariants (deterministic; a record changes only what it names) are
 * kept in one place, since recovery replays every record through it.
 */
import { DERIVED, initialState, type Execution, type WfxState } from './state.js';
import { ExecutionTable } from './execution-table.js';
import { FileRefs } from './file-refs.js';
import { auditHandlers, type AuditRecord } from './records/audit.js';
import { bulkHandlers, type BulkRecord } from './records/bulk.js';
import { catalogueHandlers, type CatalogueRecord } from './records/catalogue.js';
import { executionHandlers, type ExecutionRecord } from './records/execution.js';
import { fileHandlers, type FileRecord } from './records/files.js';
import type { Handlers } from './records/handlers.js';
import { messageHandlers, type MessageRecord } from './records/messages.js';
import { moveHandlers, type MoveRecord } from './records/moves.js';
import { nodeHandlers, nodeRunOf, type NodeRecord, type NodeRun } from './records/nodes.js';
import { nodeWaitHandlers, type NodeWaitRecord } from './records/node-waits.js';
import { repairHandlers, type RepairRecord } from './records/repair.js';
import { secretHandlers, type SecretRecord } from './records/secrets.js';
import { triggerHandlers, type TriggerRecord } from './records/triggers.js';

/**
 * Every change to the live state is one of these records, journaled before it is acknowledged
 * and replayed on recovery. A record says what happened, with every value it needs (times and
 * ids included), so applying it is deterministic. Log entries and the subscription index are
 * derived from node transitions (records/nodes.ts, records/node-waits.ts), so they need no
 * records of their own.
 */
export type WfxRecord =
  | CatalogueRecord
  | ExecutionRecord
  | NodeRecord
  | NodeWaitRecord
  | RepairRecord
  | MessageRecord
  | TriggerRecord
  | SecretRecord
  | FileRecord
  | MoveRecord
  | BulkRecord
  | AuditRecord;

// A handler changes only the execution its record names in `instanceId` (a child's start: also
// its parent): checkpoints copy an execution just before a record that changes it (executionsTouched).
const handlers: Handlers<WfxRecord> = {
  ...catalogueHandlers,
  ...executionHandlers,
  ...nodeHandlers,
  ...nodeWaitHandlers,
  ...repairHandlers,
  ...messageHandlers,
  ...triggerHandlers,
  ...secretHandlers,
  ...fileHandlers,
  ...moveHandlers,
  ...bulkHandlers,
  ...auditHandlers,
};

/** Applies one record to the state in place. Deterministic; the store's reducer. */
export function applyRecord(state: WfxState, record: WfxRecord): void {
  (handlers[record.type] as (s: WfxState, r: WfxRecord) => void)(state, record);
  // Only an engine whose executions may leave memory has one (file-refs.ts).
  if (state.fileRefs !== undefined) FileRefs.held(state)?.applied(record);
}

/**
 * The store's coalescing (StoreOptions.coalesce): consecutive `node.ran` records of one
 * execution at one time are journaled as one `nodes.ran`. The reducer keeps none of their
 * objects (it copies variables and output), so they may be serialized after they are applied.
 */
export const coalesceNodeRuns = {
  candidate: (r: WfxRecord): boolean => r.type === 'node.ran',
  merge: (last: WfxRecord, next: WfxRecord): WfxRecord | null => {
    if (
      next.type !== 'node.ran' ||
      (last.type !== 'node.ran' && last.type !== 'nodes.ran') ||
      last.instanceId !== next.instanceId ||
      last.at !== next.at
    )
      return null;
    const run = nodeRunOf(next);
    if (last.type === 'nodes.ran') {
      (last.nodes as NodeRun[]).push(run); // the store's own record until serialized
      return last;
    }
    return { type: 'nodes.ran', instanceId: last.instanceId, at: last.at, nodes: [nodeRunOf(last), run] };
  },
};

/**
 * The executions a record changes (StoreOptions.snapshotCollection): a checkpoint copies each
 * one before that record is applied. Every record that changes an execution names it in
 * `instanceId`; a child's start also changes its parent's node (its `children`). Their keys
 * come from the state's ExecutionTable rather than from enumerating the dictionary.
 */
export const executionsTouched = {
  key: 'instances',
  keys: (_instances: Record<string, unknown>, state: object): string[] => ExecutionTable.of(state as WfxState).keys(),
  /** An execution read back at a lazy open (StoreOptions.lazy), put as the table keeps them. */
  adopt: (state: object, entry: unknown): void => ExecutionTable.of(state as WfxState).put(entry as Execution),
  /** An execution a standby's copy lets go of (its row is current): its derived indexes are rebuilt at the takeover. */
  evict: (state: object, id: string): void => ExecutionTable.of(state as WfxState).archive(id),
  touched: (r: WfxRecord, visit: (instanceId: string) => void): void => {
    if ('instanceId' in r) visit(r.instanceId);
    else if (r.type === 'instance.started') {
      visit(r.instance.processInstanceId); // new, so not in the copy: unless an id ever came back
      if (r.instance.parentInstanceId !== null && r.instance.parentNodeInstanceId !== undefined)
        visit(r.instance.parentInstanceId);
    }
  },
} as const;

/**
 * How the daemon opens its store (Store.open's options but the directory): the state, its
 * reducer, the coalescing of node runs, and snapshots copied a slice at a time.
 */
export const WFX_STORE = {
  initialState,
  derived: DERIVED,
  apply: applyRecord,
  coalesce: coalesceNodeRuns,
  snapshotCollection: executionsTouched,
} as const;
