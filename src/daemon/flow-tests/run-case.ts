/**
 * Runs one case of a flow test (test-file.ts) on the engine's step in memory (memory-engine.ts):
 * its start, its steps in order (answers, events, the clock moved, expectations at that point),
 * then its expected end. Work nodes get their answers from the case's mocks; a scriptTask with
 * none runs in the real sandbox; a serviceTask with none is refused unless the network is
 * allowed. A case stops at its first failure, which says where, what was expected, what was
 * found, and the path so far.
 */
import { isDeepStrictEqual } from 'node:util';
import { EXECUTION_STATES } from '../../shared/api/index.js';
import { errorMessage, isWfxError } from '../../shared/errors.js';
import { nodesAt, type FlowDefinition } from '../../shared/flow/types.js';
import type { WorkOrder } from '../engine/step/context.js';
import { callHttp, type HttpReply } from '../engine/work/http.js';
import type { ScriptRunner } from '../engine/work/script.js';
import type { WorkResult } from '../outbound/result.js';
import { STATUS, type Execution } from '../state/state.js';
import type { FlowCoverage } from './coverage.js';
import { MemoryEngine } from './memory-engine.js';
import type { CaseStep, Expectation, MockAnswer, TestCase } from './test-file.js';

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
export interface CaseSetting {
  readonly flow: FlowDefinition;
  /** The scriptTask sandbox, shared by the run's cases. */
  readonly scripts: () => ScriptRunner;
  /** Unmocked serviceTasks call the network (`--allow-network`). */
  readonly allowNetwork: boolean;
  /** Where the case's executions of the flow are recorded as it ends (`--coverage`). */
  readonly coverage?: FlowCoverage;
}

/** Stops a case: thrown from anywhere in it, caught once by runCase. */
class Stop extends Error {
  constructor(
    readonly at: string,
    message: string,
    readonly expected?: unknown,
    readonly actual?: unknown,
  ) {
    super(message);
  }
}

const WORK_TYPES: Readonly<Record<string, string>> = {
  http: 'serviceTask',
  script: 'scriptTask',
  ai: 'aiTask or callAgent',
  voice: 'voiceTask',
};

/** Runs `c` (see the top of this file). Never throws: a problem is the case's failure. */
export async function runCase(c: TestCase, setting: CaseSetting): Promise<CaseResult> {
  const began = performance.now();
  const calls = new Map<string, number>();
  let engine: MemoryEngine | null = null;
  let root: string | null = null;
  /** The work of a node: its mock's next answer, the sandbox, or the network. */
  const work = async (order: WorkOrder): Promise<WorkResult> => {
    const nodeId = engine!.state.instances[order.instanceId]?.nodes[order.nodeInstanceId]?.nodeId ?? '?';
    const request = order.request;
    const mock = c.mocks[nodeId];
    if (mock === undefined) {
      if (request.kind === 'script') return setting.scripts().run(request.run);
      if (request.kind === 'http' && setting.allowNetwork) return callHttp(request.call);
      throw new Stop(
        c.at,
        `NO_MOCK: ${WORK_TYPES[request.kind] ?? 'work node'} "${nodeId}" has no mock: give it one under mocks` +
          (request.kind === 'http' ? ', or run with --allow-network' : ''),
      );
    }
    const next = (): MockAnswer => {
      const n = (calls.get(nodeId) ?? 0) + 1;
      calls.set(nodeId, n);
      if (!Array.isArray(mock)) return mock as MockAnswer;
      const answer = (mock as readonly MockAnswer[])[n - 1];
      if (answer === undefined)
        throw new Stop(
          c.at,
          `MOCK_EXHAUSTED: "${nodeId}" was called ${n} times; its mock has ${mock.length} answer${mock.length === 1 ? '' : 's'}`,
        );
      return answer;
    };
    if (request.kind === 'http') {
      let stopped: Stop | null = null;
      const reply = (): HttpReply => {
        try {
          const a = next();
          if ('fail' in a)
            throw new Stop(c.at, `"${nodeId}" is a serviceTask: mock it with status, timeout or network, not fail`);
          return a;
        } catch (err) {
          stopped = err as Stop;
          return { network: 'the case stopped' };
        }
      };
      const result = await callHttp(request.call, { reply, wait: () => Promise.resolve(true) });
      if (stopped !== null) throw stopped;
      return result;
    }
    const a = next();
    if ('fail' in a) return { ok: false, code: a.fail.code as never, message: a.fail.message };
    throw new Stop(
      c.at,
      `"${nodeId}" is a ${WORK_TYPES[request.kind]}: its mock can only fail it (fail: {code, message})`,
    );
  };

  try {
    engine = new MemoryEngine({ now: CASE_EPOCH, work });
    const e = engine;
    for (const [name, value] of Object.entries(c.env))
      e.apply({ type: 'env.set', organization: 'default', environment: c.start.environment, name, value });
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
      err instanceof Stop
        ? {
            at: err.at,
            message: err.message,
            ...(err.expected !== undefined && { expected: err.expected }),
            ...(err.actual !== undefined && { actual: err.actual }),
            path,
          }
        : { at: c.at, message: errorMessage(err), path };
    return { name: c.name, ok: false, failure, ms: performance.now() - began };
  } finally {
    if (setting.coverage !== undefined && engine !== null) recordCoverage(engine, setting.coverage, setting.flow);
  }
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
    if (err instanceof Stop) throw err;
    throw new Stop(step.at, `${step.kind} failed: ${isWfxError(err) ? `${err.code}: ` : ''}${errorMessage(err)}`);
  }
}

/** Throws a Stop at `at` for the first of `expect` that `inst` does not meet. */
function check(expect: Expectation, inst: Execution, at: string): void {
  const state = EXECUTION_STATES[inst.stateCd];
  if (expect.state !== undefined && expect.state !== state)
    throw new Stop(
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
      throw new Stop(
        at,
        `expected the execution waiting at "${expect.waitingAt}", ${waiting.length > 0 ? `it waits at ${waiting.map((w) => `"${w}"`).join(', ')}` : `it waits at no node (${state}${failedWith(inst)})`}`,
        expect.waitingAt,
        waiting,
      );
  }
  if (expect.path !== undefined) {
    const path = pathOf(inst);
    if (!isDeepStrictEqual(path, expect.path)) throw new Stop(at, 'the path differs', expect.path, path);
  }
  if (expect.variables !== undefined)
    for (const [name, value] of Object.entries(expect.variables)) {
      const actual = inst.variables[name];
      if (!isDeepStrictEqual(actual, value))
        throw new Stop(at, `variable "${name}" differs`, value, actual === undefined ? '(not set)' : actual);
    }
  if (expect.errorCode !== undefined && inst.error?.code !== expect.errorCode)
    throw new Stop(
      at,
      `expected error code ${expect.errorCode}, ${inst.error ? `it failed with ${inst.error.code}` : `it is ${state} with no error`}`,
      expect.errorCode,
      inst.error?.code ?? null,
    );
}

/** The node ids of `inst` in the order their instances started. */
function pathOf(inst: Execution): string[] {
  return Object.values(inst.nodes).map((n) => n.nodeId);
}

function failedWith(inst: Execution): string {
  return inst.error ? ` (${inst.error.code}: ${inst.error.message})` : '';
}
