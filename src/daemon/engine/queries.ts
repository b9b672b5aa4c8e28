/**
 * The engine's read side: executions as a caller may see them, live or in history. Reads
 * only; the checks the commands make before they act (running, still running) live here too.
 */
import { WfxError } from '../../shared/errors.js';
import { ownEntry } from '../../shared/json-object.js';
import { execution, type Executions } from '../state/executions.js';
import { STATE, type Execution, type WfxState } from '../state/state.js';
import { ConcurrencySlots } from '../state/concurrency-slots.js';
import { ExecutionTable } from '../state/execution-table.js';
import type { ExecutionArchive } from './archive.js';
import { listExecutions, type ExecutionPage, type ExecutionSources } from './execution-list.js';
import type { FailureSources } from './failures.js';
import type { OrganizationScope } from './scope.js';

/** A live or archived execution the caller may see, or null. */
export async function findInstance(
  executions: Executions,
  archive: ExecutionArchive,
  caller: OrganizationScope,
  id: string,
): Promise<Execution | null> {
  const loading = executions.ensure([id]);
  if (loading !== null) await loading;
  const inst: Execution | null = executions.get(id) ?? (await archive.read(id));
  if (!inst || (caller.organization !== null && inst.organization !== caller.organization)) return null;
  return inst;
}

/**
 * Where a list of executions reads them: the live state, resident or cold (`executions`), and
 * the archive's history (the organization of a flow from the live state's flows, to filter
 * older history by).
 */
export function executionSources(executions: Executions, state: WfxState, archive: ExecutionArchive): ExecutionSources {
  return {
    live: () => ExecutionTable.of(state).live(),
    history: archive.history,
    archived: (id) => archive.read(id),
    liveOne: (id) => execution(state, id),
    coldIds: (where) => (where === undefined ? executions.coldIds() : executions.coldIdsWithSearch(where)),
    coldSummary: (id) => executions.coldSummary(id),
    ensure: (ids) => executions.ensure(ids),
    flowOrganization: (processId) => ownEntry(state.flows, processId)?.organization,
    queuedAhead: (inst) => ConcurrencySlots.of(state).position(inst),
  };
}

/** Where failures are grouped from: a list's sources, and the live executions and flows by id. */
export function failureSources(executions: Executions, state: WfxState, archive: ExecutionArchive): FailureSources {
  return {
    ...executionSources(executions, state, archive),
    flow: (processId) => ownEntry(state.flows, processId),
  };
}

/**
 * Executions of a flow, newest first (ids are time-ordered): live ones and those in history;
 * top-level ones only unless `children`. `cursor` is the last id of the previous page. Throws
 * PROCESS_NOT_FOUND for a flow the caller may not see.
 */
export async function listInstances(
  executions: Executions,
  state: WfxState,
  archive: ExecutionArchive,
  caller: OrganizationScope,
  processId: string,
  opts: { stateCd?: number; limit: number; cursor?: string; children?: boolean },
): Promise<ExecutionPage> {
  const flow = ownEntry(state.flows, processId);
  if (!flow || (caller.organization !== null && flow.organization !== caller.organization))
    throw new WfxError('PROCESS_NOT_FOUND', `no flow ${processId}`);
  return listExecutions(executionSources(executions, state, archive), {
    ...opts,
    organization: caller.organization,
    processId,
  });
}

/**
 * The running execution `id` the caller may act on. Throws INSTANCE_NOT_RUNNING for a
 * finished one (live or archived), INSTANCE_NOT_FOUND for one it may not see or that does not exist.
 */
export async function runningInstance(
  executions: Executions,
  archive: ExecutionArchive,
  caller: OrganizationScope,
  id: string,
): Promise<Execution> {
  const visible = (i: Execution | null | undefined): i is Execution =>
    !!i && (caller.organization === null || i.organization === caller.organization);
  const loading = executions.ensure([id]);
  if (loading !== null) await loading;
  const live = executions.get(id);
  if (!visible(live)) {
    if (await findInstance(executions, archive, caller, id))
      throw new WfxError('INSTANCE_NOT_RUNNING', `execution ${id} is not running`);
    throw new WfxError('INSTANCE_NOT_FOUND', `no execution ${id}`);
  }
  if (live.stateCd !== STATE.RUNNING) throw new WfxError('INSTANCE_NOT_RUNNING', `execution ${id} is not running`);
  return live;
}

/**
 * Live execution `id` as it is now, still running (in a step, after runningInstance checked
 * who may see it): throws INSTANCE_NOT_RUNNING once it has finished, or left the live state.
 */
export function runningNow(state: WfxState, id: string): Execution {
  const inst = execution(state, id);
  if (!inst || inst.stateCd !== STATE.RUNNING)
    throw new WfxError('INSTANCE_NOT_RUNNING', `execution ${id} is not running`);
  return inst;
}
