/**
 * The step's timer input: a timer armed for a waiting node (its wait's due time) or for a timer
 * boundary event of a live node fired (effects.ts arms them from the records).
 */
import { parseDuration } from '../../../shared/duration.js';
import { ownEntry } from '../../../shared/json-object.js';
import { STATE, STATUS } from '../../state/state.js';
import type { Step } from './step.js';
import { execution } from '../../state/executions.js';

/** The input of this file (index.ts, StepInput): the timer of a node, or of its boundary event `boundaryId`. */
export interface TimerInput {
  readonly kind: 'timer';
  readonly instanceId: string;
  readonly nodeInstanceId: string;
  readonly boundaryId?: string;
}

/** A timer is due: its boundary event fires, or its waiting node resumes (if they still can). */
export function fireTimer(s: Step, input: TimerInput): void {
  const inst = execution(s.state, input.instanceId);
  const ni = inst?.nodes[input.nodeInstanceId];
  if (!inst || !ni || inst.stateCd !== STATE.RUNNING) return;
  const boundaryId = input.boundaryId;
  if (boundaryId === undefined) {
    // Not before its wait's due time: a move to another version may have put it later while
    // the timer armed for the earlier one was about to fire.
    if (ni.statusCd !== STATUS.WAITING || !ni.wait?.dueAt || Date.parse(ni.wait.dueAt) > s.now.getTime()) return;
    s.resume(inst, ni, { kind: 'timer' });
    return;
  }
  // A timer boundary event of a live node: with cancelActivity (the default) the node, and
  // any child under it, is cancelled; either way the boundary path runs.
  if ((ni.statusCd !== STATUS.ACTIVE && ni.statusCd !== STATUS.WAITING) || ni.fired?.includes(boundaryId)) return;
  // Armed for the version the execution ran before a move, and fired before the move's effects
  // forgot it: the version it runs now may have no such boundary event, or a later one.
  const b = ownEntry(s.ctx.flowOf(inst).nodes, boundaryId);
  if (b?.type !== 'boundaryEvent' || b.attachedTo !== ni.nodeId || b.duration === undefined) return;
  if (Date.parse(ni.startTime) + parseDuration(b.duration) > s.now.getTime()) return;
  s.touched.add(inst.processInstanceId);
  if (b.cancelActivity === false) {
    s.emit({
      type: 'boundary.fired',
      instanceId: inst.processInstanceId,
      nodeInstanceId: ni.id,
      boundaryId,
      at: s.at,
    });
  } else {
    s.leave(inst, ni, STATUS.CANCELLED, `cancelled by boundary event ${boundaryId} (timer ${b.duration})`);
  }
  s.createNode(inst, boundaryId);
  s.drain();
}
