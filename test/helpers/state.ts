import { applyRecord, type WfxRecord } from '../../src/daemon/state/records.js';
import { startedInstance } from '../../src/daemon/state/records/execution.js';
import { ExecutionTable } from '../../src/daemon/state/execution-table.js';
import type { Execution, WfxState } from '../../src/daemon/state/state.js';

/** The live executions of `state` in their order, tombstones skipped (ExecutionTable.live). */
export function liveInstances(state: WfxState): Execution[] {
  return ExecutionTable.of(state).live();
}

/** The fields of a new execution that `applyStart` fills in unless given. */
type StartFields = Parameters<typeof startedInstance>[0];

/**
 * The record of a new execution `id` of flow `p` (organization default, PRODUCTION, no parent,
 * no variables), with `fields` over those.
 */
export function startRecord(id: string, at: string, fields: Partial<StartFields> = {}): WfxRecord {
  const start: StartFields = {
    processId: 'p',
    processName: 'P',
    processVersion: '1',
    organization: 'default',
    environment: 'PRODUCTION',
    correlationKey: null,
    parentInstanceId: null,
    variables: {},
    ...fields,
  };
  return { type: 'instance.started', instance: startedInstance(start, id, at) };
}

/** Applies `startRecord(id, at, fields)` to `state`. */
export function applyStart(state: WfxState, id: string, at: string, fields: Partial<StartFields> = {}): void {
  applyRecord(state, startRecord(id, at, fields));
}
