/**
 * aiTask benchmark (part of `npm run bench`): the engine's overhead of a model call against an
 * OpenAI-compatible provider that answers at once (a local HTTP server streaming a two-token
 * answer), durable and in-process. The same flow with a plain task in place of the aiTask is the
 * baseline: the difference in latency is what one model call adds besides the model's own time.
 */
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { createAiRunner } from '../src/daemon/ai/runner.js';
import { Engine } from '../src/daemon/engine/engine.js';
import { publishFlow } from '../src/daemon/flows/publish.js';
import { applyRecord, WFX_STORE, type WfxRecord } from '../src/daemon/state/records.js';
import type { WfxState } from '../src/daemon/state/state.js';
import { History } from '../src/daemon/store/history.js';
import { Store } from '../src/daemon/store/store.js';
import { validateFlowSource } from '../src/shared/flow/validate.js';
import { inCallers } from './callers.js';
import { machineLine, writeSection } from './report.js';
import { UNPACED_LIMITS } from './daemon.js';

const flow = (id: string, middle: string) => `processId: ${id}
name: Bench ${id.slice(0, 4)}
nodes:
  start: { type: startEvent, next: middle }
  middle: ${middle}
  done: { type: endEvent }
`;
const AI_FLOW = flow('a1a1a1a1-0000-4000-8000-000000000001', '{ type: aiTask, prompt: "Answer {n}", next: done }');
const BASE_FLOW = flow('b2b2b2b2-0000-4000-8000-000000000002', '{ type: task, next: done }');

export interface AiBenchRun {
  readonly executions: number;
  readonly concurrency: number;
  readonly perSecond: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  /** CPU time (user + system, the whole process: the provider stand-in's share included) per execution, in microseconds. */
  readonly cpuMicros: number;
}

export interface AiBenchResult {
  /** Throughput: many concurrent starters. */
  readonly ai: AiBenchRun;
  readonly baseline: AiBenchRun;
  /** Latency: one execution at a time, so no queueing hides in it. */
  readonly aiAlone: AiBenchRun;
  readonly baselineAlone: AiBenchRun;
}

/** An OpenAI-compatible chat endpoint that streams the same short answer at once. */
async function instantProvider() {
  const answer = [
    { choices: [{ index: 0, delta: { role: 'assistant', content: 'ok' } }] },
    { choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] },
    { choices: [], usage: { prompt_tokens: 5, completion_tokens: 1, total_tokens: 6 } },
  ]
    .map(
      (c) =>
        `data: ${JSON.stringify({ id: 'b', object: 'chat.completion.chunk', created: 1, model: 'bench', ...c })}\n\n`,
    )
    .join('');
  const srv = createServer((req, res) => {
    req.resume();
    req.on('end', () => res.writeHead(200, { 'content-type': 'text/event-stream' }).end(`${answer}data: [DONE]\n\n`));
  });
  srv.keepAliveTimeout = 60_000;
  srv.listen(0, '127.0.0.1');
  await once(srv, 'listening');
  return { url: `http://127.0.0.1:${(srv.address() as AddressInfo).port}/v1`, close: () => srv.close() };
}

async function run(source: string, executions: number, concurrency: number, baseUrl: string): Promise<AiBenchRun> {
  const dir = await mkdtemp(join(tmpdir(), 'wfx-bench-ai-'));
  const ai = createAiRunner();
  try {
    const store = await Store.open<WfxState, WfxRecord>({ dir, ...WFX_STORE, apply: applyRecord });
    const history = await History.open(join(dir, 'history'));
    const engine = new Engine({ store, history, ai, limits: UNPACED_LIMITS });
    const at = new Date().toISOString();
    await store.commit({
      type: 'aiProvider.saved',
      provider: {
        providerId: 'bench',
        name: 'bench',
        organization: 'default',
        kind: 'openai-compatible',
        baseUrl,
        model: 'bench',
        isDefault: true,
        createdAt: at,
        updatedAt: at,
      },
    });
    const v = validateFlowSource(source);
    if (!v.ok) throw new Error(`bench flow does not validate: ${JSON.stringify(v.problems)}`);
    const { processId } = await publishFlow(store, {
      definition: v.flow,
      organization: 'default',
      environment: 'PRODUCTION',
    });
    const began = new Map<string, bigint>();
    const latencies: number[] = [];
    let finished = 0;
    const allFinished = new Promise<void>((resolve) =>
      engine.on('finished', (id) => {
        const t0 = began.get(id);
        if (t0 !== undefined) latencies.push(Number(process.hrtime.bigint() - t0) / 1e6);
        if (++finished === executions) resolve();
      }),
    );
    const cpu0 = process.cpuUsage();
    const start = process.hrtime.bigint();
    await inCallers(executions, concurrency, async (n) => {
      const t0 = process.hrtime.bigint();
      const inst = await engine.start({ processId, organization: 'default', data: { n } });
      // A start that finished within its own step was counted before its id was known.
      if (inst.stateCd === 0) began.set(inst.processInstanceId, t0);
      else latencies.push(Number(process.hrtime.bigint() - t0) / 1e6);
    });
    await allFinished;
    const seconds = Number(process.hrtime.bigint() - start) / 1e9;
    const cpu = process.cpuUsage(cpu0);
    await engine.close();
    await store.close({ checkpoint: false });
    await history.close();
    latencies.sort((a, b) => a - b);
    const at_ = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? 0;
    return {
      executions,
      concurrency,
      perSecond: executions / seconds,
      p50Ms: at_(0.5),
      p99Ms: at_(0.99),
      cpuMicros: (cpu.user + cpu.system) / executions,
    };
  } finally {
    await ai.close();
    await rm(dir, { recursive: true, force: true });
  }
}

export async function runAiBench(): Promise<AiBenchResult> {
  const provider = await instantProvider();
  try {
    await run(AI_FLOW, 500, 50, provider.url); // warm-up
    const ai = await run(AI_FLOW, 5_000, 50, provider.url);
    const aiAlone = await run(AI_FLOW, 500, 1, provider.url);
    await run(BASE_FLOW, 500, 50, provider.url); // warm-up
    const baseline = await run(BASE_FLOW, 5_000, 50, provider.url);
    const baselineAlone = await run(BASE_FLOW, 500, 1, provider.url);
    return { ai, baseline, aiAlone, baselineAlone };
  } finally {
    provider.close();
  }
}

export function formatAiBench(r: AiBenchResult): string {
  const fmt = (n: number) => Math.round(n).toLocaleString('en-US');
  const ms = (n: number) => `${n.toFixed(2)} ms`;
  return [
    '| figure | with the aiTask | with a task instead | target |',
    '|---|---|---|---|',
    `| executions/s, start → node → end, durable (${fmt(r.ai.executions)} executions, ${r.ai.concurrency} concurrent starters) | **${fmt(r.ai.perSecond)}** | ${fmt(r.baseline.perSecond)} | ≥ 500 with the aiTask |`,
    `| CPU time per execution (the provider stand-in's included) | ${fmt(r.ai.cpuMicros)} µs | ${fmt(r.baseline.cpuMicros)} µs | |`,
    `| latency start → finished, p50 / p99, one execution at a time | ${ms(r.aiAlone.p50Ms)} / ${ms(r.aiAlone.p99Ms)} | ${ms(r.baselineAlone.p50Ms)} / ${ms(r.baselineAlone.p99Ms)} | |`,
    `| added by one model call, p50 (the provider's own time is nil here) | **${ms(r.aiAlone.p50Ms - r.baselineAlone.p50Ms)}** | | ≤ 10 ms |`,
    `| latency start → finished, p50 / p99, ${r.ai.concurrency} concurrent | ${ms(r.ai.p50Ms)} / ${ms(r.ai.p99Ms)} | ${ms(r.baseline.p50Ms)} / ${ms(r.baseline.p99Ms)} | |`,
  ].join('\n');
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const table = formatAiBench(await runAiBench());
  console.log(table);
  await writeSection('ai', `${machineLine()}\n\n${table}`);
  console.log('\nwritten to docs/benchmarks/');
}
