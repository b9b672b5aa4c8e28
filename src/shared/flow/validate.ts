/**
 * The flow validator: the source parsed with positions, its limits, the JSON Schema, the graph
 * (one start, known targets, no dead ends, everything reachable), the rules of each node type
 * (node-rules.ts) and the triggers, all reported into one list of problems (problems.ts) with
 * the line and column of each.
 */
import { Schedule, ScheduleError } from '../schedule.js';
import { edgesOf, FlowGraph } from './graph.js';
import { parseFlowSource, type ParsedSource, type SourcePosition } from './parse.js';
import { NODE_TYPES } from './schema.js';
import { describeViolation, schemaViolations } from './schema-check.js';
import { closestName } from '../suggest.js';
import { limitProblems } from './limits.js';
import { checkNodes } from './node-rules.js';
import { isRecord } from '../json-object.js';
import type { At, FlowProblem } from './problems.js';
import { inputsProblem } from './inputs.js';
import { triggerInputsProblem } from './trigger-data.js';
import { CONTAINER_TYPES, SEED_NODE_TYPES, type FlowDefinition, type FlowNode } from './types.js';

export type { FlowProblem, FlowProblemCode } from './problems.js';

export type FlowValidation =
  | { readonly ok: true; readonly flow: FlowDefinition; readonly problems: readonly [] }
  | { readonly ok: false; readonly problems: readonly FlowProblem[] };

/**
 * Validates a flow file's text (YAML or JSON) and lists every problem at once, each with node
 * id, property and line:column. Pure; never throws. A flow that validates runs: every node
 * type has a handler, every connection names a node, every node is reachable and leads on.
 * A flow past FLOW_LIMITS (limits.ts) gets only those problems, found before the costly steps.
 */
export function validateFlowSource(text: string): FlowValidation {
  const parsed = parseFlowSource(text);
  if (parsed.syntaxErrors.length > 0) {
    return {
      ok: false,
      problems: parsed.syntaxErrors.map((e) => ({ code: e.code ?? 'SYNTAX', message: e.message, ...e.position })),
    };
  }
  return validateFlowValue(parsed.value, parsed.positionOf, parsed.positionInScalar);
}

/**
 * Gives problems found outside the validator (the daemon's checks at publish: tools, triggers,
 * domains) the line:column of what they name in `text`, the flow's source. Pure.
 */
export function locateProblems(text: string, problems: readonly FlowProblem[]): FlowProblem[] {
  const parsed = parseFlowSource(text);
  return problems.map((p) => {
    if (p.line !== undefined) return p;
    const rest = (p.property ?? '')
      .split('.')
      .filter(Boolean)
      .map((k) => (/^[0-9]+$/.test(k) ? Number(k) : k));
    const position = parsed.positionOf(p.nodeId === undefined ? rest : ['nodes', p.nodeId, ...rest]);
    return position ? { ...p, ...position } : p;
  });
}

/**
 * Validates an already parsed flow (for instance the body of an API call), held to FLOW_LIMITS
 * but the source's bytes. Pure; never throws.
 */
export function validateFlowValue(
  value: unknown,
  positionOf: (path: readonly (string | number)[]) => SourcePosition | undefined = () => undefined,
  positionInScalar: ParsedSource['positionInScalar'] = () => undefined,
): FlowValidation {
  const problems: FlowProblem[] = [];
  const at: At = (code, path, message, posPath = path, inner) => {
    const nodeId = path[0] === 'nodes' && path.length > 1 ? String(path[1]) : undefined;
    const rest = nodeId === undefined ? path : path.slice(2);
    const property = rest.length > 0 ? rest.join('.') : undefined;
    const position = (inner && positionInScalar(posPath, inner.line, inner.column)) ?? positionOf(posPath);
    problems.push({ code, message, ...(nodeId && { nodeId }), ...(property && { property }), ...position });
  };

  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    at('SCHEMA', [], 'a flow must be a mapping with processId, name and nodes');
    return { ok: false, problems };
  }
  // Beyond its limits, a flow is not looked at further: what follows is linear, but in a flow
  // of a bounded size only.
  const excess = limitProblems(value);
  if (excess.length > 0) {
    for (const p of excess) at(p.code, p.path, p.message);
    return { ok: false, problems: dedupe(problems) };
  }
  const flow = value as Record<string, unknown>;
  // A list's graph is not looked at: its "0 startEvents" would hide what is wrong (said below).
  const nodes = isRecord(flow.nodes) ? (flow.nodes as Record<string, FlowNode>) : null;

  // Node types first: a node of a type the engine cannot run is reported by name, not by schema noise.
  const maps = nodes === null ? [] : nodeMaps(nodes, ['nodes']);
  const badType = new Set<string>();
  for (const { path, nodes: map } of maps) {
    for (const [id, node] of Object.entries(map)) {
      const type = isRecord(node) ? (node as { type?: unknown }).type : undefined;
      if (typeof type !== 'string' || (NODE_TYPES as string[]).includes(type)) continue;
      badType.add([...path, id].join('/'));
      if ((SEED_NODE_TYPES as readonly string[]).includes(type)) {
        at(
          'NODE_TYPE_UNSUPPORTED',
          [...path, id, 'type'],
          `node type "${type}" has no engine handler in this version of wfx`,
        );
      } else {
        const near = typeof type === 'string' ? closestName(type, NODE_TYPES) : undefined;
        const hint = near ? `did you mean "${near}"?` : `one of: ${NODE_TYPES.join(', ')}`;
        at('UNKNOWN_NODE_TYPE', [...path, id, 'type'], `unknown node type "${String(type)}"; ${hint}`);
      }
    }
  }
  const underBadType = (path: readonly (string | number)[]) => {
    for (let i = 2; i <= path.length; i += 2) if (badType.has(path.slice(0, i).join('/'))) return true;
    return false;
  };

  for (const { path, error: err } of schemaViolations(value, maps.slice(1))) {
    if (err.propertyName !== undefined && path.at(-1) === 'nodes') {
      at(
        'SCHEMA',
        [...path, err.propertyName],
        `node id "${err.propertyName}" must start with a letter or _ and go on with letters, digits, _ or -, and not be a reserved name`,
      );
      continue;
    }
    if (underBadType(path)) continue;
    const { code, message, extra } = describeViolation(err);
    at(code, [...path, ...extra], message, path.concat(code === 'SCHEMA' && extra.length ? extra : []));
  }

  if (Array.isArray(flow.nodes))
    // After the schema's "must be object" at the same place, which it replaces.
    at(
      'SCHEMA',
      ['nodes'],
      'nodes must be a mapping of node ids to nodes, not a list: write "start: { type: startEvent, ... }", not "- start: ..."',
    );
  for (const { path, nodes: map } of maps) {
    const bad = new Set(Object.keys(map).filter((id) => badType.has([...path, id].join('/'))));
    checkGraph(map, path, bad, at);
    checkNodes(map, path, bad, at);
  }
  if (isRecord(flow.inputs)) {
    const problem = inputsProblem(flow.inputs);
    if (problem) at('SCHEMA', ['inputs', ...problem.path], problem.message);
  }
  if (Array.isArray(flow.triggers)) {
    flow.triggers.forEach((trigger, i) => {
      const type = isRecord(trigger) ? (trigger as { type?: unknown }).type : undefined;
      const unmet = isRecord(flow.inputs) ? triggerInputsProblem(type, flow.inputs) : null;
      if (unmet !== null) at('TRIGGER_INPUTS_UNMET', ['triggers', i], unmet);
      const sender = isRecord(trigger) && isRecord(trigger.filters) ? trigger.filters.senderMatches : undefined;
      if (type === 'email' && typeof sender === 'string') {
        try {
          new RegExp(sender, 'i');
        } catch (err) {
          at(
            'BAD_PATTERN',
            ['triggers', i, 'filters', 'senderMatches'],
            `not a regular expression: ${(err as Error).message}`,
          );
        }
      }
      if (type === 'schedule' && isRecord(trigger) && typeof trigger.cron === 'string') {
        try {
          new Schedule(trigger.cron, typeof trigger.timezone === 'string' ? trigger.timezone : 'UTC');
        } catch (err) {
          if (!(err instanceof ScheduleError)) throw err;
          at(
            'BAD_SCHEDULE',
            ['triggers', i, /zone/.test(err.message) && !/does not parse/.test(err.message) ? 'timezone' : 'cron'],
            err.message,
          );
        }
      }
    });
  }

  const unique = dedupe(problems);
  if (unique.length > 0) return { ok: false, problems: unique };
  return { ok: true, flow: value as unknown as FlowDefinition, problems: [] };
}

/**
 * The flow's node map and the bodies of its containers (loopNode, embedded subProcess), with
 * their paths, depth first in file order. Iterative: no body depth costs it stack.
 */
function nodeMaps(
  nodes: Record<string, FlowNode>,
  path: (string | number)[],
): Array<{ path: (string | number)[]; nodes: Record<string, FlowNode> }> {
  const maps: Array<{ path: (string | number)[]; nodes: Record<string, FlowNode> }> = [];
  const stack = [{ path, nodes }];
  while (stack.length > 0) {
    const map = stack.pop()!;
    maps.push(map);
    const inner: typeof maps = [];
    for (const [id, node] of Object.entries(map.nodes)) {
      const body =
        isRecord(node) && (CONTAINER_TYPES as readonly unknown[]).includes(node.type)
          ? (node as { nodes?: unknown }).nodes
          : undefined;
      if (isRecord(body)) inner.push({ path: [...map.path, id, 'nodes'], nodes: body as Record<string, FlowNode> });
    }
    for (let i = inner.length - 1; i >= 0; i--) stack.push(inner[i]!);
  }
  return maps;
}

function checkGraph(nodes: Record<string, FlowNode>, prefix: (string | number)[], badType: Set<string>, at: At): void {
  const starts = Object.entries(nodes).filter(([, n]) => isRecord(n) && n.type === 'startEvent');
  if (starts.length !== 1) {
    const path = starts.length > 1 ? [...prefix, starts[1]![0]] : prefix;
    const where = prefix.length > 1 ? `the body of ${String(prefix.at(-2))}` : 'a flow';
    at('START_EVENT_COUNT', path, `${where} has exactly one startEvent; this one has ${starts.length}`);
  }
  for (const [id, node] of Object.entries(nodes)) {
    if (!isRecord(node)) continue;
    const edges = edgesOf(id, node);
    for (const edge of edges) {
      if (!Object.hasOwn(nodes, edge.to))
        at(
          'UNKNOWN_TARGET',
          [...prefix, id, ...edge.path],
          `connects to "${edge.to}", which is not a node of ${prefix.length > 1 ? 'this body' : 'this flow'}`,
        );
    }
    if (node.type === 'boundaryEvent' && typeof node.attachedTo === 'string') {
      const host = nodes[node.attachedTo];
      if (!host)
        at(
          'UNKNOWN_TARGET',
          [...prefix, id, 'attachedTo'],
          `is attached to "${node.attachedTo}", which is not a node of ${prefix.length > 1 ? 'this body' : 'this flow'}`,
        );
      else if (isRecord(host) && ['startEvent', 'endEvent', 'boundaryEvent'].includes(String(host.type))) {
        at('SCHEMA', [...prefix, id, 'attachedTo'], `a boundary event cannot be attached to a ${String(host.type)}`);
      }
    }
    const leadsOn = edges.some((e) => e.kind !== 'errorFlow' && e.kind !== 'timeoutFlow');
    if (!leadsOn && node.type !== 'endEvent' && !badType.has(id)) {
      at('DEAD_END', [...prefix, id], `node "${id}" leads nowhere: only an endEvent may end a path`);
    }
  }
  if (starts.length === 1) {
    const graph = new FlowGraph(nodes);
    const start = starts[0]![0];
    const reached = graph.reachableFrom(start);
    for (const [id, node] of Object.entries(nodes)) {
      const detached =
        isRecord(node) && node.type === 'boundaryEvent' && !Object.hasOwn(nodes, String(node.attachedTo)); // reported above
      if (id !== start && !reached.has(id) && !detached)
        at('UNREACHABLE', [...prefix, id], `node "${id}" cannot be reached from the startEvent "${start}"`);
    }
  }
}

/**
 * One problem per node property: the semantic checks run after the schema and say more (a bad
 * duration's own message beats the schema's pattern), so a later problem replaces an earlier
 * one on the same property. Then in file order.
 */
function dedupe(problems: FlowProblem[]): FlowProblem[] {
  const byPlace = new Map<string, FlowProblem>();
  problems.forEach((p, i) => {
    const key =
      p.nodeId === undefined && p.property === undefined
        ? `#${i}`
        : `${p.nodeId ?? ''}|${p.property ?? ''}|${p.code === 'DEAD_END' || p.code === 'UNREACHABLE' ? p.code : ''}`;
    byPlace.delete(key);
    byPlace.set(key, p);
  });
  return [...byPlace.values()].sort(
    (a, b) => (a.line ?? Infinity) - (b.line ?? Infinity) || (a.column ?? 0) - (b.column ?? 0),
  );
}

/** `file:line:column: node.property: message`, the form editors and terminals link. */
export function formatProblem(file: string, p: FlowProblem): string {
  const where = p.line === undefined ? file : `${file}:${p.line}:${p.column}`;
  const what = [p.nodeId, p.property].filter(Boolean).join('.');
  return `${where}: ${what ? `${what}: ` : ''}${p.message} [${p.code}]`;
}
