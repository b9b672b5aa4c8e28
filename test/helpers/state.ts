import { InstanceTable } from '../../src/daemon/state/instance-table.js';
import type { Instance, WfxState } from '../../src/daemon/state/state.js';

/** The live executions of `state` in their order, tombstones skipped (InstanceTable.live). */
export function liveInstances(state: WfxState): Instance[] {
  return InstanceTable.of(state).live();
}
