/* What a diagram node says of itself: its second line and its accessible name. Pure. */
import { NODE_STATE_WORDS } from '../model/states.js';
import type { ModelBoundary, ModelNode } from './graph-model.js';

/** A loop's iterations in words: `3 iterations`, `2 of 5 iterations`; '' for other nodes. */
export function iterationWords(node: ModelNode): string {
  if (node.iterations === null) return '';
  const n = node.iterations;
  const of = node.loopItems !== null ? ` of ${node.loopItems}` : '';
  return `${n}${of} iteration${n === 1 && of === '' ? '' : 's'}`;
}

/** A node's state line: `completed ×2`, `waiting · 2 of 5 iterations`; its type when not reached. */
export function stateLine(node: ModelNode): string {
  if (node.state === null) return node.type;
  const visits = node.instances.length > 1 ? ` ×${node.instances.length}` : '';
  const loop = iterationWords(node);
  return `${NODE_STATE_WORDS[node.state]}${visits}${loop ? ` · ${loop}` : ''}`;
}

/** A node's accessible name: its name, type, state (or that it was not reached), visits, iterations, boundary events. */
export function nodeLabel(node: ModelNode, hasRun: boolean): string {
  const parts = [node.name, node.type];
  if (hasRun) parts.push(node.state === null ? 'not reached' : stateLine(node));
  else if (node.iterations !== null) parts.push(iterationWords(node));
  for (const b of node.boundaries) parts.push(boundaryLabel(b, hasRun));
  return parts.join(', ');
}

/** A boundary event's accessible name: `timer boundary event Timeout, fired`. */
export function boundaryLabel(b: ModelBoundary, hasRun: boolean): string {
  const fired = hasRun ? (b.fired ? ', fired' : ', not fired') : '';
  return `${b.event} boundary event ${b.name}${fired}`;
}
