/**
 * Long file: the flow validator, one pass per concern (schema, graph, expressions, durations,
 * node-specific rules) that all report into one list of problems with positions; the rules of
 * one node type are easier to check when they sit together.
 */
import { DurationError, formatDuration, parseDuration } from '../duration.js';
import { Schedule, ScheduleError } from '../schedule.js';
import { compileCondition, ExpressionError } from '../expr/juel.js';
import { edgesOf, FlowGraph } from './graph.js';
import { parseFlowSource, type ParsedSource, type SourcePosition } from './parse.js';
import { scriptSyntaxError } from './script-syntax.js';
import { NODE_TYPES } from './schema.js';
import { describeViolation, schemaViolations } from './schema-check.js';
import { limitProblems, type LimitProblemCode } from './limits.js';
import { compileJsonSchema } from './json-schema.js';
import { inputsProblem } from './inputs.js';
import { timeoutCeiling } from './timeouts.js';
import {
  CONTAINER_TYPES,
  MEMORY_ACTIONS,
  SEED_NODE_TYPES,
  type FlowDefinition,
  type FlowNode,
  type MemoryAction,
} from './types.js';

/** Stable codes of flow problems (tests and tools match on them). */
export type FlowProblemCode =
  | 'SYNTAX'
  | 'SCHEMA'
  | 'UNKNOWN_NODE_TYPE'
  | 'NODE_TYPE_UNSUPPORTED'
  | 'START_EVENT_COUNT'
  | 'UNKNOWN_TARGET'
  | 'DEAD_END'
  | 'UNREACHABLE'
  | 'BAD_CONDITION'
  | 'BAD_SCRIPT'
  | 'BAD_DURATION'
  | 'MISSING_PROPERTY'
  | 'BAD_SCHEDULE'
  | 'UNKNOWN_CONNECTION'
  | 'BAD_PATTERN'
  | 'UNKNOWN_WEBHOOK'
  | 'UNKNOWN_TOOL'
  | 'TOOL_WITHOUT_INPUTS'
  | 'UNKNOWN_DOMAIN'
  | 'JOB_INPUT_MISMATCH'
  | LimitProblemCode;

/** One thing wrong with a flow, located as precisely as the file allows. */
export interface FlowProblem {
  readonly code: FlowProblemCode;
  readonly message: string;
  readonly nodeId?: string;
  /** Dotted property path inside the node (or the flow, when there is no node). */
  readonly property?: string;
  readonly line?: number;
  readonly column?: number;
}

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
  const nodes = isRecord(flow.nodes) ? (flow.nodes as Record<string, FlowNode>) : {};

  // Node types first: a node of a type the engine cannot run is reported by name, not by schema noise.
  const maps = nodeMaps(nodes, ['nodes']);
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
        at('UNKNOWN_NODE_TYPE', [...path, id, 'type'], `unknown node type "${type}"; one of: ${NODE_TYPES.join(', ')}`);
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

type At = (
  code: FlowProblemCode,
  path: readonly (string | number)[],
  message: string,
  posPath?: readonly (string | number)[],
  /** A place inside the scalar at `posPath` (a script's line and column), for the position. */
  inner?: { readonly line: number; readonly column: number },
) => void;

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

function checkNodes(nodes: Record<string, FlowNode>, prefix: (string | number)[], badType: Set<string>, at: At): void {
  for (const [id, node] of Object.entries(nodes)) {
    if (!isRecord(node) || badType.has(id)) continue;
    const n = node as unknown as Record<string, unknown>;
    const conditions: Array<[unknown, (string | number)[]]> = [[n.condition, ['condition']]];
    if (Array.isArray(n.branches))
      n.branches.forEach((b, i) =>
        conditions.push([isRecord(b) ? b.condition : undefined, ['branches', i, 'condition']]),
      );
    for (const [cond, path] of conditions) {
      if (typeof cond !== 'string') continue;
      try {
        compileCondition(cond);
      } catch (err) {
        if (err instanceof ExpressionError)
          at('BAD_CONDITION', [...prefix, id, ...path], `condition does not parse: ${err.message}`);
        else throw err;
      }
    }
    if (node.type === 'scriptTask' && typeof n.script === 'string') {
      const bad = scriptSyntaxError(n.script);
      if (bad) at('BAD_SCRIPT', [...prefix, id, 'script'], `script does not parse: ${bad.message}`, undefined, bad);
    }
    for (const key of ['timeout', 'duration', 'ttl'] as const) {
      if (typeof n[key] !== 'string') continue;
      try {
        const ms = parseDuration(n[key] as string);
        const ceiling = key === 'timeout' ? timeoutCeiling(node.type) : undefined;
        if (ceiling !== undefined && ms > ceiling)
          at(
            'BAD_DURATION',
            [...prefix, id, key],
            `a ${node.type}'s timeout is at most ${formatDuration(ceiling)}, not ${JSON.stringify(n[key])}`,
          );
      } catch (err) {
        if (err instanceof DurationError) at('BAD_DURATION', [...prefix, id, key], err.message);
        else throw err;
      }
    }
    if (node.type === 'inputNode') {
      const needsOptions = ['select', 'radio', 'checkbox'].includes(node.inputType);
      if (needsOptions && !Array.isArray(n.options))
        at('MISSING_PROPERTY', [...prefix, id, 'options'], `inputType ${node.inputType} needs options`, [
          ...prefix,
          id,
        ]);
      if (node.inputType === 'form' && !Array.isArray(n.fields))
        at('MISSING_PROPERTY', [...prefix, id, 'fields'], 'inputType form needs fields', [...prefix, id]);
      if (node.inputType !== 'form' && n.fields !== undefined)
        at('SCHEMA', [...prefix, id, 'fields'], 'fields apply only to inputType form');
    }
    if ((node.type === 'inputNode' || node.type === 'userTask') && Array.isArray(n.fields)) {
      const seen = new Set<string>();
      (n.fields as unknown[]).forEach((f, i) => {
        if (!isRecord(f)) return;
        if (typeof f.name === 'string' && seen.has(f.name))
          at('SCHEMA', [...prefix, id, 'fields', i, 'name'], `field "${f.name}" is defined twice`);
        if (typeof f.name === 'string') seen.add(f.name);
        if (f.type === 'select' && !Array.isArray(f.options))
          at('MISSING_PROPERTY', [...prefix, id, 'fields', i, 'options'], 'a select field needs options', [
            ...prefix,
            id,
            'fields',
            i,
          ]);
      });
    }
    checkComposite(node, [...prefix, id], at);
    if (node.type === 'intermediateCatchEvent') {
      if (node.eventType !== 'timer' && typeof n.messageRef !== 'string') {
        at('MISSING_PROPERTY', [...prefix, id, 'messageRef'], `a ${node.eventType} catch event needs messageRef`, [
          ...prefix,
          id,
        ]);
      }
      if (node.eventType === 'timer' && (n.duration === undefined) === (n.until === undefined)) {
        at(
          'MISSING_PROPERTY',
          [...prefix, id, 'duration'],
          'a timer catch event needs exactly one of duration and until',
          [...prefix, id],
        );
      }
    }
  }
}

/** Rules of the composite and work nodes the schema cannot say. */
function checkComposite(node: FlowNode, path: (string | number)[], at: At): void {
  const n = node as unknown as Record<string, unknown>;
  switch (node.type) {
    case 'loopNode':
      if ((n.collection === undefined) === (n.condition === undefined)) {
        at(
          'MISSING_PROPERTY',
          [...path, 'collection'],
          'a loopNode needs exactly one of collection and condition',
          path,
        );
      }
      if (n.parallel === true && n.collection === undefined)
        at('SCHEMA', [...path, 'parallel'], 'parallel applies to a collection loop only');
      if (n.concurrency !== undefined && n.parallel !== true)
        at('SCHEMA', [...path, 'concurrency'], 'concurrency applies to a parallel loop only');
      return;
    case 'subProcess':
      if ((n.nodes === undefined) === (n.processId === undefined)) {
        at(
          'MISSING_PROPERTY',
          [...path, 'nodes'],
          'a subProcess needs exactly one of nodes (embedded) and processId',
          path,
        );
      }
      if (n.versionNumber !== undefined && n.processId === undefined)
        at('SCHEMA', [...path, 'versionNumber'], 'versionNumber applies with processId only');
      return;
    case 'boundaryEvent':
      if (node.event === 'timer' && n.duration === undefined)
        at('MISSING_PROPERTY', [...path, 'duration'], 'a timer boundary event needs duration', path);
      if (node.event !== 'timer' && n.duration !== undefined)
        at('SCHEMA', [...path, 'duration'], 'duration applies to a timer boundary event only');
      if (node.event !== 'error' && n.errorCode !== undefined)
        at('SCHEMA', [...path, 'errorCode'], 'errorCode applies to an error boundary event only');
      return;
    case 'serviceTask':
      checkRetry(n, path, at);
      return;
    case 'aiTask':
      checkRetry(n, path, at);
      checkModelNode(n, path, at);
      return;
    case 'callAgent':
      checkRetry(n, path, at);
      checkModelNode(n, path, at);
      checkAgentTools(n, path, at);
      return;
    case 'memoryAction':
      checkMemoryAction(n, path, at);
      return;
    case 'voiceTask':
      checkRetry(n, path, at);
      checkVoiceTask(n, path, at);
      return;
    case 'domainTask':
      checkRetry(n, path, at);
      return;
    default:
      return;
  }
}

function checkRetry(n: Record<string, unknown>, path: (string | number)[], at: At): void {
  const retry = n.retry as Record<string, unknown> | undefined;
  for (const key of ['initialInterval', 'maxInterval']) {
    if (typeof retry?.[key] !== 'string') continue;
    try {
      parseDuration(retry[key] as string);
    } catch (err) {
      if (err instanceof DurationError) at('BAD_DURATION', [...path, 'retry', key], err.message);
      else throw err;
    }
  }
}

/** aiTask, callAgent: exactly one of prompt and messages; a `schema` that compiles (the runner compiles it the same way). */
function checkModelNode(n: Record<string, unknown>, path: (string | number)[], at: At): void {
  if ((n.prompt === undefined) === (n.messages === undefined))
    at('MISSING_PROPERTY', [...path, 'prompt'], `a ${String(n.type)} needs exactly one of prompt and messages`, path);
  if (n.schema === undefined) return;
  if (n.responseFormat === 'text')
    at('SCHEMA', [...path, 'responseFormat'], 'a schema asks for JSON: responseFormat text does not go with it');
  if (!isRecord(n.schema)) return; // the flow schema reports it
  const compiled = compileJsonSchema(n.schema);
  if (!compiled.ok) at('SCHEMA', [...path, 'schema', ...compiled.path], compiled.message);
}

/**
 * callAgent: each tool flow named once, and no two tools with the same explicit name (names
 * made from flow names, and whether each flow is published with inputs, are checked at publish).
 */
function checkAgentTools(n: Record<string, unknown>, path: (string | number)[], at: At): void {
  if (!Array.isArray(n.tools)) return; // the flow schema reports it
  const processIds = new Set<string>();
  const names = new Set<string>();
  n.tools.forEach((spec: unknown, i) => {
    if (!(typeof spec === 'string' || isRecord(spec))) return;
    const processId = typeof spec === 'string' ? spec : spec.processId;
    if (typeof processId !== 'string') return;
    if (processIds.has(processId))
      at('SCHEMA', [...path, 'tools', i], `flow ${processId} is a tool of this agent already`);
    processIds.add(processId);
    const name = isRecord(spec) && typeof spec.name === 'string' ? spec.name : undefined;
    if (name === undefined) return;
    if (names.has(name)) at('SCHEMA', [...path, 'tools', i, 'name'], `two tools are named ${name}`);
    names.add(name);
  });
}

/** The properties of a voiceTask that apply to one operation only. */
const VOICE_OPERATION_ONLY: ReadonlyArray<readonly [string, 'speak' | 'transcribe']> = [
  ['text', 'speak'],
  ['voice', 'speak'],
  ['rate', 'speak'],
  ['format', 'speak'],
  ['audio', 'transcribe'],
  ['language', 'transcribe'],
  ['vocabulary', 'transcribe'],
];

function checkVoiceTask(n: Record<string, unknown>, path: (string | number)[], at: At): void {
  const op = n.operation;
  if (op !== 'speak' && op !== 'transcribe') return; // the flow schema reports it
  const needs = op === 'speak' ? 'text' : 'audio';
  if (n[needs] === undefined) at('MISSING_PROPERTY', [...path, needs], `voiceTask ${op} needs ${needs}`, path);
  for (const [property, only] of VOICE_OPERATION_ONLY)
    if (Object.hasOwn(n, property) && only !== op)
      at('SCHEMA', [...path, property], `${property} applies to ${only} only`);
  if (n.provider === undefined && n.format !== undefined && n.format !== 'wav')
    at(
      'SCHEMA',
      [...path, 'format'],
      'the local engine (espeak-ng) writes wav only: name a provider for other formats',
    );
  if (n.provider !== undefined && n.vocabulary !== undefined)
    at('SCHEMA', [...path, 'vocabulary'], 'vocabulary applies to the local engine only (no provider)');
}

/** The properties of a memoryAction that apply to its action only. */
const MEMORY_ACTION_ONLY: ReadonlyArray<readonly [string, readonly MemoryAction[]]> = [
  ['value', ['store', 'append']],
  ['ttl', ['store', 'append']],
  ['window', ['retrieve']],
  ['default', ['retrieve']],
  ['maxItems', ['append']],
];

function checkMemoryAction(n: Record<string, unknown>, path: (string | number)[], at: At): void {
  const action = n.action as MemoryAction;
  if (!(MEMORY_ACTIONS as readonly unknown[]).includes(action)) return; // the flow schema reports it
  if (action === 'list' && n.key !== undefined) at('SCHEMA', [...path, 'key'], 'key does not apply to list');
  if (action !== 'list' && n.key === undefined)
    at('MISSING_PROPERTY', [...path, 'key'], `memoryAction ${action} needs key`, path);
  if ((action === 'store' || action === 'append') && !Object.hasOwn(n, 'value'))
    at('MISSING_PROPERTY', [...path, 'value'], `memoryAction ${action} needs value`, path);
  for (const [property, actions] of MEMORY_ACTION_ONLY) {
    if (Object.hasOwn(n, property) && !actions.includes(action))
      at('SCHEMA', [...path, property], `${property} applies to ${actions.join(' and ')} only`);
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

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** `file:line:column: node.property: message`, the form editors and terminals link. */
export function formatProblem(file: string, p: FlowProblem): string {
  const where = p.line === undefined ? file : `${file}:${p.line}:${p.column}`;
  const what = [p.nodeId, p.property].filter(Boolean).join('.');
  return `${where}: ${what ? `${what}: ` : ''}${p.message} [${p.code}]`;
}
