/**
 * Whether a running execution can move to another published version of its flow, and which
 * executions move with it. Pure reads of the state: the step that moves (step/move.ts) and a
 * dry run ask the same questions, so they answer alike. The rules, with their reasons, are in
 * docs/flows.md ("Moving executions to another version") and docs/decisions/058-moving-executions.md.
 */
import type { MoveProblem, MoveProblemCode } from '../../shared/api/index.js';
import { WfxError } from '../../shared/errors.js';
import { edgesOf } from '../../shared/flow/graph.js';
import { nodesAt, type FlowDefinition, type FlowNode } from '../../shared/flow/types.js';
import { ownEntry } from '../../shared/json-object.js';
import { STATE, STATUS, type Execution, type NodeInstance, type WfxState } from '../state/state.js';
import { edgeKey } from './step/tokens.js';
import { execution } from '../state/executions.js';

type Nodes = Readonly<Record<string, FlowNode>>;

/** A move that can be made: the executions that move (the one asked about first) and the versions. */
export interface MovePlan {
  readonly fromVersion: string;
  readonly toVersion: string;
  /** Its flow version's definition it moves to. */
  readonly target: FlowDefinition;
  /** The execution, then each child running a body of the flow under it (parents before children); empty when it runs `toVersion` already. */
  readonly executions: readonly Execution[];
}

/**
 * The move of running execution `id` to version `toVersion` of its flow, checked. Throws
 * INSTANCE_NOT_RUNNING (not live, or finished), INSTANCE_MOVES_WITH_PARENT (it runs a body of
 * its parent's flow: it moves with its parent), VERSION_NOT_FOUND, INSTANCE_NOT_MOVABLE
 * (`details.problems`: moveProblems). An execution that runs `toVersion` already plans no
 * execution (a no-op). Pure.
 */
export function planMove(state: WfxState, id: string, toVersion: string): MovePlan {
  const inst = execution(state, id);
  if (!inst || inst.stateCd !== STATE.RUNNING)
    throw new WfxError('INSTANCE_NOT_RUNNING', `execution ${id} is not running`);
  if (movesWithParent(inst))
    throw new WfxError(
      'INSTANCE_MOVES_WITH_PARENT',
      `execution ${id} runs a body of its parent ${inst.parentInstanceId}: it moves when its parent does`,
      { details: { parentInstanceId: inst.parentInstanceId } },
    );
  const target = ownEntry(ownEntry(state.flows, inst.processId)?.versions ?? {}, toVersion)?.definition;
  if (!target) throw new WfxError('VERSION_NOT_FOUND', `flow ${inst.processId} has no version ${toVersion}`);
  const fromVersion = inst.processVersion;
  if (fromVersion === toVersion) return { fromVersion, toVersion, target, executions: [] };
  const problems = moveProblems(state, inst, toVersion);
  if (problems.length > 0)
    throw new WfxError(
      'INSTANCE_NOT_MOVABLE',
      `execution ${id} cannot move to version ${toVersion}: ${problems.length} problem${problems.length === 1 ? '' : 's'} (${problems[0]!.nodeId}: ${problems[0]!.reason}${problems.length > 1 ? ', ...' : ''})`,
      { details: { fromVersion, toVersion, problems } },
    );
  return { fromVersion, toVersion, target, executions: [inst, ...bodyChildren(state, inst)] };
}

/**
 * Why running execution `inst` (one that moves on its own: see planMove) cannot move to version
 * `toVersion` of its flow, which is published: each live node (Active or Waiting) and each join
 * holding arrivals, of it and of the children that move with it, checked against the target
 * at the same place (its body, for a child). Empty: it can move. Pure.
 */
export function moveProblems(state: WfxState, inst: Execution, toVersion: string): MoveProblem[] {
  const flow = state.flows[inst.processId]!;
  const from = flow.versions[inst.processVersion]!.definition;
  const to = flow.versions[toVersion]!.definition;
  const problems: MoveProblem[] = [];
  const check = (exec: Execution): void => {
    const source = nodesAt(from, exec.scope) ?? {};
    const target = nodesAt(to, exec.scope) ?? {};
    const add = (nodeId: string, code: MoveProblemCode, reason: string): void => {
      problems.push({
        processInstanceId: exec.processInstanceId,
        nodeId,
        ...(exec.scope && { scope: exec.scope }),
        code,
        reason,
      });
    };
    for (const ni of liveNodes(exec)) {
      const was = ownEntry(source, ni.nodeId);
      const now = ownEntry(target, ni.nodeId);
      const problem = nodeProblem(ni, was, now, toVersion);
      if (problem) {
        add(ni.nodeId, problem[0], problem[1]);
        continue;
      }
      const children = movingChildren(state, exec, ni);
      if (children.length === 0) continue;
      if ((now as { nodes?: Nodes }).nodes === undefined)
        add(
          ni.nodeId,
          'BODY_MISSING',
          `${ni.nodeId} runs its body as a child execution; in version ${toVersion} it has no body`,
        );
      else for (const child of children) check(child);
    }
    for (const [gatewayId, arrivals] of Object.entries(exec.joins)) {
      const was = ownEntry(source, gatewayId);
      const now = ownEntry(target, gatewayId);
      if (!now) add(gatewayId, 'NODE_MISSING', `it holds arrivals, and version ${toVersion} has no node ${gatewayId}`);
      else if (was && now.type !== was.type)
        add(
          gatewayId,
          'NODE_TYPE_CHANGED',
          `${gatewayId} is of type ${was.type} here, of type ${now.type} in version ${toVersion}`,
        );
      else {
        const incoming = incomingKeys(target, gatewayId);
        for (const [key, n] of Object.entries(arrivals))
          if (n > 0 && !incoming.has(key))
            add(
              gatewayId,
              'JOIN_CHANGED',
              `it holds an arrival by ${key.replace('>', '.')}, which does not lead to it in version ${toVersion}`,
            );
      }
    }
  };
  check(inst);
  return problems;
}

/** Why live node `ni` (`was` in its version) cannot become `now` of version `toVersion`, or null. */
function nodeProblem(
  ni: NodeInstance,
  was: FlowNode | undefined,
  now: FlowNode | undefined,
  toVersion: string,
): [MoveProblemCode, string] | null {
  const id = ni.nodeId;
  const type = was?.type ?? ni.nodeType;
  if (!now) return ['NODE_MISSING', `version ${toVersion} has no node ${id}`];
  if (now.type !== type)
    return ['NODE_TYPE_CHANGED', `${id} is of type ${type} here, of type ${now.type} in version ${toVersion}`];
  const wait = ni.statusCd === STATUS.WAITING ? ni.wait : null;
  if ((wait?.kind === 'event' || wait?.kind === 'timer') && now.type === 'intermediateCatchEvent') {
    // Its subscription is indexed by the event it waits for: the one its node names, as written.
    const waited = eventOf((was as typeof now | undefined) ?? now);
    const there = eventOf(now);
    if (waited !== there) return ['EVENT_CHANGED', `${id} waits for ${waited}; in version ${toVersion} for ${there}`];
  }
  if (wait?.kind === 'job' && now.type === 'domainTask') {
    const job = `${wait.domain}.${wait.action}`;
    const there = `${now.domain}.${now.action}`;
    if (job !== there) return ['JOB_CHANGED', `${id}'s job is ${job}; in version ${toVersion} ${there}`];
  }
  if (wait?.kind === 'loop' && now.type === 'loopNode') {
    const collection = wait.state.items !== null;
    if (collection !== (now.collection !== undefined))
      return [
        'LOOP_CHANGED',
        `${id} iterates ${collection ? 'over a collection' : 'on a condition'}; in version ${toVersion} ${collection ? 'on a condition' : 'over a collection'}`,
      ];
  }
  return null;
}

/** The event a catch event waits for, as its definition writes it: `timer`, `message "ref"`. */
function eventOf(node: Extract<FlowNode, { type: 'intermediateCatchEvent' }>): string {
  return node.eventType === 'timer' ? 'timer' : `${node.eventType} "${node.messageRef ?? ''}"`;
}

/** The keys of the connections leading to `gatewayId` among `nodes` (Execution `joins`). */
function incomingKeys(nodes: Nodes, gatewayId: string): Set<string> {
  const keys = new Set<string>();
  for (const [id, node] of Object.entries(nodes))
    for (const e of edgesOf(id, node)) if (e.to === gatewayId) keys.add(edgeKey(e));
  return keys;
}

/** The node instances of `inst` that are Active or Waiting. */
function liveNodes(inst: Execution): NodeInstance[] {
  return Object.values(inst.nodes).filter((n) => n.statusCd === STATUS.ACTIVE || n.statusCd === STATUS.WAITING);
}

/**
 * Whether `inst` runs a body of its parent's flow (a loop iteration, an embedded subProcess):
 * it moves with its parent, never alone. A child running a flow of its own (a called
 * subProcess, a callAgent's tool, callProcess) moves on its own.
 */
export function movesWithParent(inst: Execution): boolean {
  return inst.scope !== undefined && inst.parentInstanceId !== null;
}

/** The running children of node `ni` of `inst` that run a body of its flow version. */
function movingChildren(state: WfxState, inst: Execution, ni: NodeInstance): Execution[] {
  const moving: Execution[] = [];
  for (const id of ni.children ?? []) {
    const child = execution(state, id);
    if (
      child?.stateCd === STATE.RUNNING &&
      child.scope !== undefined &&
      child.processId === inst.processId &&
      child.processVersion === inst.processVersion
    )
      moving.push(child);
  }
  return moving;
}

/** Every running child under `inst` that runs a body of its flow, parents before their children. */
function bodyChildren(state: WfxState, inst: Execution): Execution[] {
  const out: Execution[] = [];
  for (const ni of liveNodes(inst))
    for (const child of movingChildren(state, inst, ni)) out.push(child, ...bodyChildren(state, child));
  return out;
}
