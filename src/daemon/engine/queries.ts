/**
 * The engine's read side: executions as a caller may see them, live or in history. Reads
 * only; the checks the commands make before they act (running, still running) live here too.
 */
import { WfxError } from '../../shared/errors.js';
import { ownEntry } from '../../shared/json-object.js';
import { STATE, type Instance, type WfxState } from '../state/state.js';
import type { ExecutionArchive, InstanceSummary } from './archive.js';
import type { OrganizationScope } from './scope.js';

/** A live or archived execution the caller may see, or null. */
export async function findInstance(
  state: WfxState,
  archive: ExecutionArchive,
  caller: OrganizationScope,
  id: string,
): Promise<Instance | null> {
  const inst: Instance | null = ownEntry(state.instances, id) ?? (await archive.read(id));
  if (!inst || (caller.organization !== null && inst.organization !== caller.organization)) return null;
  return inst;
}

/**
 * Executions of a flow, newest first (ids are time-ordered): live ones and those in history.
 * `cursor` is the last id of the previous page. Throws PROCESS_NOT_FOUND for a flow the
 * caller may not see.
 */
export function listInstances(
  state: WfxState,
  archive: ExecutionArchive,
  caller: OrganizationScope,
  processId: string,
  opts: { stateCd?: number; limit: number; cursor?: string; children?: boolean },
): Promise<{ items: InstanceSummary[]; nextCursor: string | null }> {
  return archive.list(caller, processId, opts, (id) => findInstance(state, archive, caller, id));
}

/**
 * The running execution `id` the caller may act on. Throws INSTANCE_NOT_RUNNING for a
 * finished one (live or archived), INSTANCE_NOT_FOUND for one it may not see or that does not exist.
 */
export async function runningInstance(
  state: WfxState,
  archive: ExecutionArchive,
  caller: OrganizationScope,
  id: string,
): Promise<Instance> {
  const visible = (i: Instance | null | undefined): i is Instance =>
    !!i && (caller.organization === null || i.organization === caller.organization);
  const live = ownEntry(state.instances, id);
  if (!visible(live)) {
    if (await findInstance(state, archive, caller, id))
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
export function runningNow(state: WfxState, id: string): Instance {
  const inst = state.instances[id];
  if (!inst || inst.stateCd !== STATE.RUNNING)
    throw new WfxError('INSTANCE_NOT_RUNNING', `execution ${id} is not running`);
  return inst;
}
