/**
 * Runs one case of a flow test (test-file.ts) on the engine's step in memory (memory-engine.ts):
 * its start, its steps in order (answers, events, the clock moved, expectations at that point),
 * then its expected end. Work nodes get their answers from the case's mocks; a scriptTask with
 * none runs in the real sandbox; a serviceTask with none is refused unless the network is
 * allowed. A case stops at its first failure, which says where, what was expected, what was
 * found, and the path so far.
 */
import { createHash } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import { EXECUTION_STATES } from '../../shared/api/index.js';
import { errorMessage, isWfxError } from '../../shared/errors.js';
import { nodesAt, type FlowDefinition, type FlowNode } from '../../shared/flow/types.js';
import type { WorkOrder } from '../engine/step/context.js';
import type { WorkResult } from '../outbound/result.js';
import { domainNamed } from '../jobs/domains.js';
import { STATE, STATUS, type Domain, type Execution } from '../state/state.js';
import { fileIdsInText, type StoredFile } from '../state/stored-file.js';
import type { FlowCoverage } from './coverage.js';
import { CaseStop, CaseWork, type CaseWorkSetting } from './mocks.js';
import { MemoryEngine } from './memory-engine.js';
import type { CaseStep, Expectation, StartTrigger, TestCase } from './test-file.js';
import { passesFilters } from '../triggers/email-filters.js';

/** The fixed time a case starts at: cron and date expressions give the same answers run after run. */
export const CASE_EPOCH = Date.parse('2026-01-05T09:00:00.000Z');

/** What a case ran into: where, what was expected and what was found. */
export interface CaseFailure {
  /** `file:line:column` of the step or expectation that failed (the case's own for its end). */
  readonly at: string;
  readonly message: string;
  readonly expected?: unknown;
  readonly actual?: unknown;
  /** The execution's node ids in the order they started, up to the failure. */
  readonly path: readonly string[];
}

/** A case's outcome. */
export interface CaseResult {
  readonly name: string;
  readonly ok: boolean;
  readonly failure?: CaseFailure;
  readonly ms: number;
}

/** What running a case needs beside the case. */
export interface CaseSetting extends CaseWorkSetting {
  readonly flow: FlowDefinition;
  /** Flows published before it, in order (an agent's tools, flows it calls). */
  readonly flows: readonly FlowDefinition[];
  /** Domains registered before the flows (domainTasks'). */
  readonly domains: readonly Domain[];
  /** Where the case's executions of the flow are recorded as it ends (`--coverage`). */
  readonly coverage?: FlowCoverage;
}

/**
 * The files a case names (a fileId in its start data, answers, events or mocks: an upload, an
 * attachment), held as a daemon would hold them, so that a node given one finds it: empty, of
 * no particular type.
 */
function namedFiles(c: TestCase, now: Date): StoredFile[] {
  const ids = new Set<string>();
  fileIdsInText(JSON.stringify([c.start, c.steps, c.mocks]), ids);
  const at = now.toISOString();
  return [...ids].map((fileId) => ({
    fileId,
    organization: 'default',
    name: fileId,
    mimeType: 'application/octet-stream',
    bytes: 0,
    sha256: createHash('sha256').digest('hex'),
    createdAt: at,
    expiresAt: at,
  }));
}

/** Runs `c` (see the top of this file). Never throws: a problem is the case's failure. */
export async function runCase(c: TestCase, setting: CaseSetting): Promise<CaseResult> {
  const began = performance.now();
  let engine: MemoryEngine | null = null;
  let root: string | null = null;
  const mocks = new CaseWork(c.mocks, c.at, setting, () => engine?.now ?? new Date(CASE_EPOCH), c.secrets);
  const work = (order: WorkOrder): Promise<WorkResult> =>
    mocks.run(order, engine!.state.instances[order.instanceId]?.nodes[order.nodeInstanceId]?.nodeId ?? '?');
  const jobs = (): Promise<boolean> => Promise.resolve(takeUpJobs(engine!, mocks));

  try {
    engine = new MemoryEngine({ now: CASE_EPOCH, work, jobs });
    const e = engine;
    for (const [name, value] of Object.entries(c.env))
      e.apply({ type: 'env.set', organization: 'default', environment: c.start.environment, name, value });
    if (c.start.trigger !== undefined) checkTrigger(c.start.trigger, setting.flow, c.at);
    for (const domain of setting.domains) e.apply({ type: 'domain.saved', domain });
    for (const file of namedFiles(c, e.now)) e.apply({ type: 'file.stored', file });
    for (const other of setting.flows) await e.publish(other, c.start.environment);
    for (const stub of calledStubs(setting.flow, c)) await e.publish(stub, c.start.environment);
    const processId = await e.publish(setting.flow, c.start.environment);
    const started = e.run({
      kind: 'start',
      request: {
        organization: 'default',
        processId,
        environment: c.start.environment,
        data: c.start.data,
        correlationKey: c.start.correlationKey,
      },
    });
    root = started.processInstanceId;
    await e.settle();
    const id = root;
    for (const step of c.steps) await runStep(e, id, step);
    check(c.expect, e.state.instances[id]!, c.at);
    return { name: c.name, ok: true, ms: performance.now() - began };
  } catch (err) {
    const inst = engine !== null && root !== null ? engine.state.instances[root] : undefined;
    const path = inst ? pathOf(inst) : [];
    const failure: CaseFailure =
      err instanceof CaseStop
        ? {
            at: err.at,
            message: err.message,
            ...(err.expected !== undefined && { expected: err.expected }),
            ...(err.actual !== undefined && { actual: err.actual }),
            path,
          }
        : {
            at: c.at,
            message: `${root === null ? 'the start failed: ' : ''}${isWfxError(err) ? `${err.code}: ` : ''}${errorMessage(err)}`,
            path,
          };
    return { name: c.name, ok: false, failure, ms: performance.now() - began };
  } finally {
    if (setting.coverage !== undefined && engine !== null) recordCoverage(engine, setting.coverage, setting.flow);
  }
}

/** Stops the case unless `flow` has a trigger that takes the start `trigger` (as the daemon's would). */
function checkTrigger(trigger: StartTrigger, flow: FlowDefinition, at: string): void {
  const triggers = flow.triggers ?? [];
  if (trigger.type === 'webhook') {
    const takes = triggers.some(
      (t) =>
        t.type === 'webhook' && (t.eventType === undefined || t.eventType === '' || t.eventType === trigger.eventType),
    );
    if (!takes)
      throw new CaseStop(
        at,
        `TRIGGER_NOT_MATCHED: no webhook trigger of the flow takes ${trigger.eventType === null ? 'an event with no type' : `event ${trigger.eventType}`}`,
      );
    return;
  }
  if (!triggers.some((t) => t.type === 'email' && passesFilters(t.filters, trigger)))
    throw new CaseStop(
      at,
      `TRIGGER_NOT_MATCHED: no email trigger of the flow takes this email (its filters refuse it)`,
    );
}

/**
 * The flows that stand in for those `flow`'s callProcess and subProcess nodes call, where the case
 * mocks the node with `output`: each ends at once with those variables.
 */
function calledStubs(flow: FlowDefinition, c: TestCase): FlowDefinition[] {
  const out: FlowDefinition[] = [];
  const walk = (nodes: Readonly<Record<string, FlowNode>>): void => {
    for (const [id, def] of Object.entries(nodes)) {
      if (def.type === 'loopNode' || (def.type === 'subProcess' && def.nodes)) walk(def.nodes!);
      const called = (def.type === 'callProcess' || def.type === 'subProcess') && def.processId;
      const mock = c.mocks[id];
      if (!called || mock === undefined || Array.isArray(mock) || !('output' in (mock as object))) continue;
      const output = (mock as { output: Record<string, unknown> }).output;
      const hasOutput = Object.keys(output).length > 0;
      out.push({
        processId: called,
        name: `mock of ${id}`,
        nodes: {
          start: { type: 'startEvent', next: hasOutput ? 'set' : 'end' },
          ...(hasOutput && { set: { type: 'setVariable', variables: output, next: 'end' } }),
          end: { type: 'endEvent' },
        },
      } as FlowDefinition);
    }
  };
  walk(flow.nodes);
  return out;
}

/** The worker a case's jobs are locked to. */
const WORKER = 'wfx test';

/**
 * Takes up the jobs that wait for a worker as one would: locks them (`job.activate`), then
 * completes or fails each with its node's mock (`job.complete` checks the output against the
 * action's schema). True when it took any.
 */
function takeUpJobs(e: MemoryEngine, mocks: CaseWork): boolean {
  const now = e.now.toISOString();
  const domains = new Set<string>();
  for (const inst of Object.values(e.state.instances)) {
    if (inst === undefined || inst.stateCd !== STATE.RUNNING) continue;
    for (const ni of Object.values(inst.nodes)) {
      const wait = ni.wait;
      if (ni.statusCd !== STATUS.WAITING || wait?.kind !== 'job') continue;
      if ((wait.lock === null || wait.lock.expiresAt <= now) && (wait.notBefore === null || wait.notBefore <= now))
        domains.add(wait.domain);
    }
  }
  let took = false;
  for (const domain of domains) {
    const actions = Object.keys(domainNamed(e.state, 'default', domain)?.actions ?? {});
    const req = { organization: 'default', domain, worker: WORKER, maxJobs: 1000, lockDurationMs: 60_000 };
    for (const job of e.run({ kind: 'job.activate', req, actions })) {
      took = true;
      const answer = mocks.job(job.nodeId);
      const call = { organization: 'default', key: job.key, worker: WORKER };
      if ('result' in answer) e.run({ kind: 'job.complete', req: { ...call, output: answer.result } });
      else
        e.run({ kind: 'job.fail', req: { ...call, errorCode: answer.fail.code, errorMessage: answer.fail.message } });
    }
  }
  return took;
}

/** Records in `coverage` every execution of the case's flow (its own, its bodies' and those it called). */
function recordCoverage(e: MemoryEngine, coverage: FlowCoverage, flow: FlowDefinition): void {
  for (const inst of Object.values(e.state.instances)) {
    if (inst === undefined || inst.processId !== flow.processId) continue;
    const nodes = nodesAt(flow, inst.scope);
    if (nodes) coverage.record(inst, nodes);
  }
}

async function runStep(e: MemoryEngine, id: string, step: CaseStep): Promise<void> {
  try {
    switch (step.kind) {
      case 'expect':
        check(step.expect, e.state.instances[id]!, step.at);
        return;
      case 'answer':
        e.run({ kind: 'answer', instanceId: id, nodeId: step.node, action: step.action, data: step.data, by: 'test' });
        await e.settle();
        return;
      case 'advance':
        await e.advance(step.ms);
        return;
      case 'event':
        e.run({
          kind: 'event',
          organization: 'default',
          eventType: step.type,
          correlationKey: step.correlationKey,
          data: step.data,
          ttlSeconds: 0,
          messageId: null,
          dedupKey: null,
          elsewhere: [],
        });
        await e.settle();
        return;
    }
  } catch (err) {
    if (err instanceof CaseStop) throw err;
    throw new CaseStop(step.at, `${step.kind} failed: ${isWfxError(err) ? `${err.code}: ` : ''}${errorMessage(err)}`);
  }
}

/** Throws a Stop at `at` for the first of `expect` that `inst` does not meet. */
function check(expect: Expectation, inst: Execution, at: string): void {
  const state = EXECUTION_STATES[inst.stateCd];
  if (expect.state !== undefined && expect.state !== state)
    throw new CaseStop(
      at,
      `expected the execution ${expect.state}, it is ${state}${failedWith(inst)}`,
      expect.state,
      state,
    );
  if (expect.waitingAt !== undefined) {
    const waiting = Object.values(inst.nodes)
      .filter((n) => n.statusCd === STATUS.WAITING)
      .map((n) => n.nodeId);
    if (!waiting.includes(expect.waitingAt))
      throw new CaseStop(
        at,
        `expected the execution waiting at "${expect.waitingAt}", ${waiting.length > 0 ? `it waits at ${waiting.map((w) => `"${w}"`).join(', ')}` : `it waits at no node (${state}${failedWith(inst)})`}`,
        expect.waitingAt,
        waiting,
      );
  }
  if (expect.path !== undefined) {
    const path = pathOf(inst);
    if (!isDeepStrictEqual(path, expect.path)) throw new CaseStop(at, 'the path differs', expect.path, path);
  }
  if (expect.variables !== undefined)
    for (const [name, value] of Object.entries(expect.variables)) {
      const actual = inst.variables[name];
      if (!matches(value, actual))
        throw new CaseStop(at, `variable "${name}" differs`, value, actual === undefined ? '(not set)' : actual);
    }
  if (expect.errorCode !== undefined && inst.error?.code !== expect.errorCode)
    throw new CaseStop(
      at,
      `expected error code ${expect.errorCode}, ${inst.error ? `it failed with ${inst.error.code}` : `it is ${state} with no error`}`,
      expect.errorCode,
      inst.error?.code ?? null,
    );
}

/**
 * Whether `actual` has what `expected` names: a mapping matches one that has at least its keys,
 * each matching (so an expectation names only what it cares about), a list one of the same
 * length whose items match in order; anything else is equal.
 */
function matches(expected: unknown, actual: unknown): boolean {
  const isMap = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);
  if (Array.isArray(expected))
    return (
      Array.isArray(actual) && actual.length === expected.length && expected.every((e, i) => matches(e, actual[i]))
    );
  if (!isMap(expected)) return isDeepStrictEqual(expected, actual);
  return isMap(actual) && Object.entries(expected).every(([k, v]) => Object.hasOwn(actual, k) && matches(v, actual[k]));
}

/** The node ids of `inst` in the order their instances started. */
function pathOf(inst: Execution): string[] {
  return Object.values(inst.nodes).map((n) => n.nodeId);
}

function failedWith(inst: Execution): string {
  return inst.error ? ` (${inst.error.code}: ${inst.error.message})` : '';
}
