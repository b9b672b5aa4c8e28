/**
 * The record of an execution moved to another version of its flow (engine/step/move.ts): from
 * then on it runs that version's nodes, wherever its node instances are.
 */
import { nodesAt } from '../../../shared/flow/types.js';
import { execution } from '../executions.js';
import { ownEntry } from '../../../shared/json-object.js';
import { appendLog } from '../log-line.js';
import { STATUS, type Wait } from '../state.js';
import type { Handlers } from './handlers.js';
import { indexTaskNode } from '../task-index.js';

/** The records of moves (WfxRecord). */
export type MoveRecord = {
  readonly type: 'instance.moved';
  readonly instanceId: string;
  readonly fromVersion: string;
  readonly toVersion: string;
  readonly at: string;
  /** Who asked (api/caller.ts, actorOf): `key:<id>`, `oidc:<subject>`. */
  readonly by: string;
  /**
   * The waits of its waiting input nodes and user tasks made again from the target's nodes
   * (their form), by node instance id; its other waits are kept as they are.
   */
  readonly waits?: Readonly<Record<string, Wait>>;
};

/** The reducer's part for moves (records.ts). */
export const moveHandlers: Handlers<MoveRecord> = {
  'instance.moved': (state, r) => {
    const inst = execution(state, r.instanceId);
    if (!inst) return;
    inst.processVersion = r.toVersion;
    // Versions are never removed once published: the target is there whenever this replays.
    const definition = state.flows[inst.processId]?.versions[r.toVersion]?.definition;
    const nodes = definition && nodesAt(definition, inst.scope);
    for (const id in inst.nodes) {
      const ni = inst.nodes[id]!;
      if (ni.statusCd !== STATUS.ACTIVE && ni.statusCd !== STATUS.WAITING) continue;
      // Its name as the target has it: the node instances that ended keep what they ran as.
      const def = nodes && ownEntry(nodes, ni.nodeId);
      if (def) {
        const name = def.name ?? ni.nodeId;
        if (ni.nodeName !== name) ni.nodeName = name;
        if (ni.nodeType !== def.type) ni.nodeType = def.type;
      }
      const wait = r.waits && ownEntry(r.waits, id);
      if (wait && ni.statusCd === STATUS.WAITING) {
        ni.wait = wait;
        indexTaskNode(state, inst, ni);
      }
    }
    appendLog(inst, null, 'INFO', `moved from version ${r.fromVersion} to version ${r.toVersion} by ${r.by}`, r.at);
  },
};
