/**
 * The subscription index (subscriptions.ts) as node records keep it: a node that starts waiting
 * on an event is added to its bucket, one that stops waiting is removed, and recovery rebuilds
 * the index from the waits of live nodes.
 */
import { STATUS, type Execution, type NodeInstance, type Wait, type WfxState } from '../state.js';
import { subscriptionBucket, type Subscription } from '../subscriptions.js';

const subKey = (instanceId: string, nodeInstanceId: string) => `${instanceId}|${nodeInstanceId}`;

/** Drops the subscription of a node that stops waiting on an event. */
export function unsubscribe(state: WfxState, inst: Execution, node: NodeInstance): void {
  if (node.wait?.kind !== 'event') return;
  const bucket = subscriptionBucket(
    inst.organization,
    node.wait.messageRef,
    node.wait.eventType,
    node.wait.correlationKey,
  );
  const held = state.subscriptions[bucket];
  if (held === undefined) return;
  if (!(held instanceof Map)) {
    if (isNode(held, inst.processInstanceId, node.id)) delete state.subscriptions[bucket];
    return;
  }
  held.delete(subKey(inst.processInstanceId, node.id));
  // Back to the compact form once one is left.
  if (held.size === 1) state.subscriptions[bucket] = held.values().next().value!;
  else if (held.size === 0) delete state.subscriptions[bucket];
}

/**
 * Writes the subscription of a node waiting on an event: the bucket itself while it is the only
 * one there, a Map of them once another comes (SubscriptionBucket). Every subscription is built
 * by the one object literal below, so all share a hidden class (a `{}` given a key of its own
 * per bucket took a class each, which cost every scavenge:
 * docs/decisions/007-subscription-index-shape.md).
 */
export function subscribe(
  state: WfxState,
  inst: Execution,
  node: NodeInstance,
  wait: Extract<Wait, { kind: 'event' }>,
): void {
  const bucket = subscriptionBucket(inst.organization, wait.messageRef, wait.eventType, wait.correlationKey);
  subscribeIn(state, bucket, inst.processInstanceId, node.id, node.nodeId);
}

/**
 * Writes the subscription of node `nodeInstanceId` (flow node `nodeId`) of execution
 * `instanceId` to `bucket` (subscriptionBucket): a cold execution's, from its summary.
 */
export function subscribeIn(
  state: WfxState,
  bucket: string,
  instanceId: string,
  nodeInstanceId: string,
  nodeId: string,
): void {
  const sub: Subscription = { instanceId, nodeInstanceId, nodeId };
  const held = state.subscriptions[bucket];
  if (held instanceof Map) held.set(subKey(sub.instanceId, sub.nodeInstanceId), sub);
  else if (held === undefined || isNode(held, sub.instanceId, sub.nodeInstanceId)) state.subscriptions[bucket] = sub;
  else {
    state.subscriptions[bucket] = new Map([
      [subKey(held.instanceId, held.nodeInstanceId), held],
      [subKey(sub.instanceId, sub.nodeInstanceId), sub],
    ]);
  }
}

/** Whether `sub` is the subscription of node `nodeInstanceId` of execution `instanceId`. */
const isNode = (sub: Subscription, instanceId: string, nodeInstanceId: string): boolean =>
  sub.instanceId === instanceId && sub.nodeInstanceId === nodeInstanceId;

/**
 * Adds node `node` of running execution `inst` to the subscription index if it waits on an
 * event. The index is derived: recovery rebuilds it from the waits of live nodes (so a snapshot
 * written by an older layout of it comes back right), in the engine's one walk over them.
 */
export function indexEventWait(state: WfxState, inst: Execution, node: NodeInstance): void {
  if (node.statusCd === STATUS.WAITING && node.wait?.kind === 'event') subscribe(state, inst, node, node.wait);
}
