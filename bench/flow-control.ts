/**
 * Flow control benchmark (part of `npm run bench`): starts of a flow with a concurrency limit,
 * its queue 1,000 deep, beside the same flow without one, in one run, the engine alone (store,
 * journal, fsync; no HTTP). Each execution waits at an input node, so the limited flow's starts
 * past its limit queue; then its tasks are answered, each end starting the next queued one.
 * Figures: starts per second and each start's p99 latency, and answers per second.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Engine } from '../src/daemon/engine/engine.js';
import { publishFlow } from '../src/daemon/flows/publish.js';
import { WFX_STORE, type WfxRecord } from '../src/daemon/state/records.js';
import type { WfxState } from '../src/daemon/state/state.js';
import { History } from '../src/daemon/store/history.js';
import { Store } from '../src/daemon/store/store.js';
import { validateFlowSource } from '../src/shared/flow/validate.js';
import { inCallers } from './callers.js';
import { UNPACED_LIMITS } from './daemon.js';
import { machineLine, writeSection } from './report.js';

const flow = (processId: string, concurrency: string) => `processId: ${processId}
name: Bench ${processId.slice(-1)}
${concurrency}
nodes:
  start: { type: startEvent, next: ask }
  ask: { type: inputNode, inputType: textbox, next: done }
  done: { type: endEvent }
`;

/** The limit of the limited flow: with QUEUED more, its queue is that deep when the measured starts begin. */
const LIMIT = 100;
const QUEUED = 1_000;

export interface FlowControlFigures {
  readonly starts: number;
  readonly startsPerSecond: number;
  readonly startP99Ms: number;
  readonly answersPerSecond: number;
}

export interface FlowControlBenchResult {
  readonly concurrency: number;
  readonly unlimited: FlowControlFigures;
  readonly limited: FlowControlFigures;
}

const quantile = (xs: number[], q: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))] ?? 0;
};

/** One flow's run: `prefill` starts first (not measured), then `starts` measured, then every task answered. */
async function run(limited: boolean, starts: number, concurrency: number): Promise<FlowControlFigures> {
  const dir = await mkdtemp(join(tmpdir(), 'wfx-bench-flow-control-'));
  try {
    const store = await Store.open<WfxState, WfxRecord>({ dir, ...WFX_STORE });
    const history = await History.open(join(dir, 'history'));
    const engine = new Engine({ store, history, limits: { ...UNPACED_LIMITS, organizationExecutions: 10_000_000 } });
    const source = flow(
      limited ? 'f10c0000-0000-4000-8000-00000000000b' : 'f10c0000-0000-4000-8000-00000000000a',
      limited ? `concurrency: { limit: ${LIMIT} }` : '',
    );
    const v = validateFlowSource(source);
    if (!v.ok) throw new Error('bench flow does not validate');
    const { processId } = await publishFlow(store, {
      definition: v.flow,
      organization: 'default',
      environment: 'PRODUCTION',
    });
    const start = () => engine.start({ processId, organization: 'default', data: {} });
    const ids: string[] = [];
    // The same prefill for both, so that each measured start meets the same number of executions.
    await inCallers(LIMIT + QUEUED, concurrency, async () => void ids.push((await start()).processInstanceId));
    const latencies: number[] = [];
    const t0 = process.hrtime.bigint();
    await inCallers(starts, concurrency, async () => {
      const s = process.hrtime.bigint();
      ids.push((await start()).processInstanceId);
      latencies.push(Number(process.hrtime.bigint() - s) / 1e6);
    });
    const startSeconds = Number(process.hrtime.bigint() - t0) / 1e9;
    // Answers, oldest first: under the limit each answer's end starts the next queued execution.
    const a0 = process.hrtime.bigint();
    let next = 0;
    await inCallers(ids.length, concurrency, async () => {
      const id = ids[next++]!;
      await engine.submitTask({
        organization: 'default',
        processInstanceId: id,
        nodeId: 'ask',
        action: 'COMPLETE',
        data: { inputValue: 'x' },
      });
    });
    const answerSeconds = Number(process.hrtime.bigint() - a0) / 1e9;
    await engine.close();
    await store.close({ checkpoint: false });
    await history.close();
    return {
      starts,
      startsPerSecond: starts / startSeconds,
      startP99Ms: quantile(latencies, 0.99),
      answersPerSecond: ids.length / answerSeconds,
    };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

export async function runFlowControlBench(starts = 10_000, concurrency = 100): Promise<FlowControlBenchResult> {
  await run(false, 1_000, concurrency); // warm-up
  await run(true, 1_000, concurrency);
  const unlimited = await run(false, starts, concurrency);
  const limited = await run(true, starts, concurrency);
  return { concurrency, unlimited, limited };
}

export function formatFlowControlBench(r: FlowControlBenchResult): string {
  const fmt = (n: number) => Math.round(n).toLocaleString('en-US');
  const row = (what: string, f: FlowControlFigures) =>
    `| ${what} | **${fmt(f.startsPerSecond)}** | ${f.startP99Ms.toFixed(1)} ms | ${fmt(f.answersPerSecond)}/s |`;
  return [
    `${fmt(r.unlimited.starts)} starts measured, ${r.concurrency} callers at a time, after ${fmt(LIMIT + QUEUED)} started; each execution waits at an input node, then every task is answered, oldest first.`,
    '',
    '| flow | starts/s | start p99 | answers (each end starts the next queued one) |',
    '|---|---|---|---|',
    row('no limit', r.unlimited),
    row(`concurrency limit ${LIMIT}, its queue ${fmt(QUEUED)} deep and growing`, r.limited),
  ].join('\n');
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const table = formatFlowControlBench(await runFlowControlBench());
  console.log(table);
  await writeSection('flow-control', `${machineLine()}\n\n${table}`);
  console.log('\nwritten to docs/benchmarks/');
}
