/**
 * The rules of each node type that the flow's JSON Schema cannot say: conditions that parse,
 * scripts that compile, durations within their ceilings, form fields, and what the composite
 * and work nodes need together (a loop's collection or condition, a model node's prompt or
 * messages, a voiceTask's operation). Each reports into the validator's list (validate.ts).
 */
import { DurationError, formatDuration, parseDuration } from '../duration.js';
import { compileCondition, ExpressionError } from '../expr/juel.js';
import { compileJsonSchema } from './json-schema.js';
import { isRecord } from '../json-object.js';
import { taskDataProblems } from '../input-data.js';
import type { At } from './problems.js';
import { scriptSyntaxError } from './script-syntax.js';
import { checkSecretRefs } from './secret-refs.js';
import { timeoutCeiling } from './timeouts.js';
import { MEMORY_ACTIONS, type FlowNode, type FormField, type MemoryAction } from './types.js';

/** Checks the nodes of one map (the flow's, or a body's at `prefix`); those of `badType` have an unknown type. */
export function checkNodes(
  nodes: Record<string, FlowNode>,
  prefix: (string | number)[],
  badType: Set<string>,
  at: At,
): void {
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
        const reference = typeof f.default === 'string' && /\{[^}]+\}/.test(f.default);
        if (typeof f.name === 'string' && Object.hasOwn(f, 'default') && !reference) {
          // A default is what the form starts with: the check an answer gets says whether it fits
          // (one naming a variable is known only when the node is reached).
          const field = f as unknown as FormField;
          const wrong = taskDataProblems(
            { inputType: 'form', options: null, fields: [field] },
            { [f.name]: f.default },
          );
          if (f.default === null || wrong.length > 0)
            at(
              'SCHEMA',
              [...prefix, id, 'fields', i, 'default'],
              `the default of field "${f.name}" does not fit it: ${f.default === null ? 'null' : wrong[0]!.message}`,
            );
        }
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
    checkSecretRefs(node, [...prefix, id], at);
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
  const servers = new Set<string>();
  n.tools.forEach((spec: unknown, i) => {
    if (!(typeof spec === 'string' || isRecord(spec))) return;
    if (isRecord(spec) && isRecord(spec.mcp)) {
      const url = spec.mcp.url;
      if (typeof url !== 'string') return;
      if (servers.has(url))
        at('SCHEMA', [...path, 'tools', i, 'mcp', 'url'], `MCP server ${url} is a tool entry of this agent already`);
      servers.add(url);
      return;
    }
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
