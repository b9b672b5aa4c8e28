/**
 * The size and shape limits of a flow, checked before anything costly runs over it: the
 * validator, the schema check and the graph. They keep the worst flow a publish can carry small
 * and bounded (docs/decisions/047-flow-limits.md), and keep every recursive step after them far
 * from the stack's end.
 */
import { isRecord } from '../json-object.js';
import { DEFAULT_MAX_JSON_DEPTH } from '../json-shape.js';
import { CONTAINER_TYPES } from './types.js';

/** The limits a flow is held to; the daemon, `wfx flow validate` and `wfx dev` share them. */
export const FLOW_LIMITS = {
  /** UTF-8 bytes of a flow's source text, YAML or JSON (a `definition` body has the request's body limit). */
  sourceBytes: 512 * 1024,
  /** Nodes of a flow, those of every body included. */
  nodes: 5_000,
  /** How deep bodies (`nodes:` of a loopNode or an embedded subProcess) nest in bodies. */
  bodyDepth: 16,
  /** Keys of any one mapping of the flow: node ids of one level, a setVariable's variables... */
  mapKeys: 10_000,
  /** How deep the flow document nests mappings and lists (`{}` is 1 deep), as request data. */
  depth: DEFAULT_MAX_JSON_DEPTH,
} as const;

/** The problem codes of a flow beyond its limits. */
export type LimitProblemCode = 'TOO_LARGE' | 'TOO_DEEP';

/** A flow beyond one of its limits: what, and where (keys and indexes from the flow's root). */
export interface LimitProblem {
  readonly code: LimitProblemCode;
  readonly path: readonly (string | number)[];
  readonly message: string;
}

/**
 * What of `value` (a parsed flow) passes FLOW_LIMITS but the source's bytes: nesting depth
 * (the first excess only), mappings with too many keys, the number of nodes and how deep bodies
 * nest. Pure, iterative (it survives any depth itself) and linear in the size of `value`.
 */
export function limitProblems(value: unknown): LimitProblem[] {
  const problems = shapeProblems(value);
  if (isRecord(value) && isRecord(value.nodes)) problems.push(...nodeProblems(value.nodes));
  return problems;
}

interface Frame {
  readonly value: object;
  readonly depth: number;
  readonly parent: Frame | null;
  readonly key: string | number | null;
}

/** Nesting depth and keys per mapping, over the whole document. */
function shapeProblems(value: unknown): LimitProblem[] {
  const problems: LimitProblem[] = [];
  if (typeof value !== 'object' || value === null) return problems;
  const stack: Frame[] = [{ value, depth: 1, parent: null, key: null }];
  let tooDeep = false;
  while (stack.length > 0) {
    const frame = stack.pop()!;
    if (frame.depth > FLOW_LIMITS.depth) {
      // One problem says it; the rest of that subtree is not walked.
      if (!tooDeep)
        problems.push({
          code: 'TOO_DEEP',
          path: pathOf(frame),
          message: `mappings and lists nest more than ${FLOW_LIMITS.depth} deep here`,
        });
      tooDeep = true;
      continue;
    }
    const v = frame.value;
    if (Array.isArray(v)) {
      for (let i = 0; i < v.length; i++) push(stack, v[i], frame, i);
      continue;
    }
    const keys = Object.keys(v);
    if (keys.length > FLOW_LIMITS.mapKeys)
      problems.push({
        code: 'TOO_LARGE',
        path: pathOf(frame),
        message: `has ${keys.length} keys, more than ${FLOW_LIMITS.mapKeys}`,
      });
    for (const key of keys) push(stack, (v as Record<string, unknown>)[key], frame, key);
  }
  return problems;
}

function push(stack: Frame[], child: unknown, parent: Frame, key: string | number): void {
  if (typeof child === 'object' && child !== null) stack.push({ value: child, depth: parent.depth + 1, parent, key });
}

/** The number of nodes (bodies included) and how deep bodies nest. */
function nodeProblems(root: Record<string, unknown>): LimitProblem[] {
  const problems: LimitProblem[] = [];
  const stack: Array<{ nodes: Record<string, unknown>; path: (string | number)[]; depth: number }> = [
    { nodes: root, path: ['nodes'], depth: 0 },
  ];
  let count = 0;
  while (stack.length > 0) {
    const { nodes, path, depth } = stack.pop()!;
    for (const [id, node] of Object.entries(nodes)) {
      count++;
      const body =
        isRecord(node) && (CONTAINER_TYPES as readonly unknown[]).includes(node.type) ? node.nodes : undefined;
      if (!isRecord(body)) continue;
      const at = [...path, id, 'nodes'];
      if (depth + 1 > FLOW_LIMITS.bodyDepth)
        problems.push({
          code: 'TOO_DEEP',
          path: at,
          message: `bodies (nodes: of a loopNode or an embedded subProcess) nest more than ${FLOW_LIMITS.bodyDepth} deep here`,
        });
      else stack.push({ nodes: body, path: at, depth: depth + 1 });
    }
  }
  if (count > FLOW_LIMITS.nodes)
    problems.push({
      code: 'TOO_LARGE',
      path: ['nodes'],
      message: `the flow has ${count} nodes (bodies included), more than ${FLOW_LIMITS.nodes}`,
    });
  return problems;
}

/** The keys from the root to `frame`. */
function pathOf(frame: Frame): (string | number)[] {
  const path: (string | number)[] = [];
  for (let f: Frame | null = frame; f !== null && f.key !== null; f = f.parent) path.push(f.key);
  return path.reverse();
}
