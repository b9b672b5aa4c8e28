/*
 * What a diagram node says of itself: the line under its name and its accessible name. The
 * accessible name starts with the words the node shows, in the same order (WCAG's label in
 * name), then says the rest: its type, its state, its boundary events. Pure.
 */
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

/** What a circle's or diamond's label says under it: its name, and its visits when more than one. */
export function roundLabel(node: ModelNode): string {
  return node.instances.length > 1 ? `${node.name} ×${node.instances.length}` : node.name;
}

/** The line under an opened container's title: its iterations, or its type. */
export function openedLine(node: ModelNode): string {
  return iterationWords(node) || node.type;
}

/**
 * A node's accessible name: what it shows (name, then its state line or type; under a circle or
 * diamond, its name and visits), then what it does not (type, state, not reached), then its
 * boundary events.
 */
export function nodeLabel(node: ModelNode, hasRun: boolean, open: boolean): string {
  const state = node.state === null ? (hasRun ? 'not reached' : null) : NODE_STATE_WORDS[node.state];
  const parts: string[] = [];
  if (node.shape === 'event' || node.shape === 'gateway') parts.push(roundLabel(node), node.type);
  else if (open) parts.push(node.name, ...new Set([openedLine(node), node.type]));
  else parts.push(node.name, stateLine(node), ...(node.state === null ? [] : [node.type]));
  // A closed box's state line says its state already.
  const shown = !open && (node.shape === 'task' || node.shape === 'container') && node.state !== null;
  if (state !== null && !shown) parts.push(state);
  for (const b of node.boundaries) parts.push(boundaryLabel(b, hasRun));
  return parts.join(', ');
}

/** A boundary event's accessible name: `timer boundary event Timeout, fired`. */
export function boundaryLabel(b: ModelBoundary, hasRun: boolean): string {
  const fired = hasRun ? (b.fired ? ', fired' : ', not fired') : '';
  return `${b.event} boundary event ${b.name}${fired}`;
}
