/**
 * Engine benchmark (part of `npm run bench`, no HTTP): executions per second of a 5-node flow
 * with durability on (every step fsynced with group commit, every finished execution written to
 * history and archived), and the journal entries and records written per execution.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { setFlagsFromString } from 'node:v8';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Engine } from '../src/daemon/engine/engine.js';
import { turnOffPretenuring } from '../src/daemon/process/v8-flags.js';
import { publishFlow } from '../src/daemon/flows/publish.js';
import { applyRecord, WFX_STORE, type WfxRecord } from '../src/daemon/state/records.js';
import type { WfxState } from '../src/daemon/state/state.js';
import { History } from '../src/daemon/store/history.js';
import type { HistoryStore } from '../src/daemon/store/history-store.js';
import type { RecordStore } from '../src/daemon/store/record-store.js';
import { Store } from '../src/daemon/store/store.js';
import { validateFlowSource } from '../src/shared/flow/validate.js';
import { inCallers } from './callers.js';
import { machineLine, writeSection } from './report.js';
import { UNPACED_LIMITS } from './daemon.js';

/** The 5-node flow every execution benchmark runs (start, ifElse on JUEL, setVariable with templates, task, end). */
export const FIVE_NODE_FLOW = `processId: 7f3e2d1c-0b9a-4876-9543-210fedcba987
name: Five nodes
nodes:
  start: { type: startEvent, next: check }
  check: { type: ifElse, condition: "\${amount > 100}", then: big, else: big }
  big: { type: setVariable, variables: { label: "order {orderId}", total: "{amount}" }, next: work }
  work: { type: task, next: done }
  done: { type: endEvent }
`;

/** The flow of the resume figures: waits for input or a message (by `kind`), then two more nodes. */
export const WAITS = `processId: 1d2c3b4a-5e6f-4a7b-8c9d-0e1f2a3b4c5d
name: Waits for input or a message
nodes:
  start: { type: startEvent, next: route }
  route: { type: ifElse, condition: "\${kind == 'task'}", then: ask, else: hear }
  ask: { type: inputNode, inputType: textbox, next: after }
  hear: { type: intermediateCatchEvent, eventType: message, messageRef: paid, next: after }
  after: { type: setVariable, variables: { done: true }, next: end }
  end: { type: endEvent }
`;

export interface EngineBenchResult {
  readonly executions: number;
  readonly concurrency: number;
  readonly seconds: number;
  readonly perSecond: number;
  readonly entriesPerExecution: number;
  readonly recordsPerExecution: number;
  readonly rssMiB: number;
  /** CPU time (user + system, all threads) per execution, in microseconds. */
  readonly cpuMicrosPerExecution: number;
  /** Task answers to executions waiting for input, the engine alone (no HTTP). */
  readonly answers: AnswerBenchResult;
}

export interface AnswerBenchResult {
  readonly waiting: number;
  readonly concurrency: number;
  readonly perSecond: number;
  /** CPU time (user + system, all threads) per answer, in microseconds. */
  readonly cpuMicrosPerAnswer: number;
}

async function run(executions: number, concurrency: number): Promise<Omit<EngineBenchResult, 'answers'>> {
  const dir = await mkdtemp(join(tmpdir(), 'wfx-bench-engine-'));
  try {
    let records = 0;
    const store = await Store.open<WfxState, WfxRecord>({
      dir,
      ...WFX_STORE,
      apply: (s, r) => {
        records++;
        applyRecord(s, r);
      },
    });
    const history = await History.open(join(dir, 'history'));
    const engine = new Engine({ store, history, limits: UNPACED_LIMITS });
    const v = validateFlowSource(FIVE_NODE_FLOW);
    if (!v.ok) throw new Error('bench flow does not validate');
    const { processId } = await publishFlow(store, {
      definition: v.flow,
      organization: 'default',
      environment: 'PRODUCTION',
    });
    let archived = 0;
    const allArchived = new Promise<void>((resolve) =>
      engine.on('archived', () => {
        if (++archived === executions) resolve();
      }),
    );
    const seq0 = store.lastSeq;
    const records0 = records;
    const cpu0 = process.cpuUsage();
    const start = process.hrtime.bigint();
    await inCallers(executions, concurrency, (i) =>
      engine.start({ processId, organization: 'default', data: { orderId: i, amount: i % 200 } }),
    );
    await allArchived;
    const seconds = Number(process.hrtime.bigint() - start) / 1e9;
    const cpu = process.cpuUsage(cpu0);
    const result = {
      cpuMicrosPerExecution: (cpu.user + cpu.system) / executions,
      executions,
      concurrency,
      seconds,
      perSecond: executions / seconds,
      entriesPerExecution: (store.lastSeq - seq0) / executions,
      recordsPerExecution: (records - records0) / executions,
      rssMiB: process.memoryUsage().rss / 2 ** 20,
    };
    await engine.close();
    await store.close({ checkpoint: false });
    await history.close();
    return result;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/**
 * An engine on `dataDir` (in-process) with `n` executions of WAITS waiting at its input node
 * (`task`) or for a message, each under a correlation key of its own (`event`), and their ids;
 * `close()` closes it (the store with a checkpoint).
 */
export async function openWaiting(
  dataDir: string,
  n: number,
  kind: 'task' | 'event',
  openStores: () => Promise<{ store: RecordStore<WfxState, WfxRecord>; history: HistoryStore }> = async () => ({
    store: await Store.open<WfxState, WfxRecord>({ dir: dataDir, ...WFX_STORE }),
    history: await History.open(join(dataDir, 'history')),
  }),
) {
  const { store, history } = await openStores();
  const engine = new Engine({ store, history, limits: UNPACED_LIMITS });
  const v = validateFlowSource(WAITS);
  if (!v.ok) throw new Error('bench flow does not validate');
  await store.commit({ type: 'organization.created', name: 'default', at: new Date().toISOString() });
  const { processId } = await publishFlow(store, {
    definition: v.flow,
    organization: 'default',
    environment: 'PRODUCTION',
  });
  const ids: string[] = [];
  // Each start's latency, until it is durable, and the whole: what a caller of a start waits for.
  const startLatencies: number[] = [];
  const startedAt = performance.now();
  await inCallers(n, 500, async (i) => {
    const t0 = performance.now();
    ids[i] = (
      await engine.start({ processId, organization: 'default', data: { kind, i }, correlationKey: `k-${i}` })
    ).processInstanceId;
    startLatencies.push(performance.now() - t0);
  });
  const startSeconds = (performance.now() - startedAt) / 1000;
  const close = async (): Promise<void> => {
    await engine.close();
    await store.close();
    await history.close();
  };
  return { engine, store, ids, close, starts: { seconds: startSeconds, latencies: startLatencies } };
}

/**
 * `waiting` executions of WAITS wait for input, then each gets its task answer, `concurrency` at
 * a time, each answer resolving once its step is durable; measured until the last of them is
 * archived. The engine's part of the HTTP resume figure (bench/http.ts), without HTTP's cost or
 * its noise: what a change to the engine's resume path buys shows here first.
 */
async function answerRun(waiting: number, concurrency: number): Promise<AnswerBenchResult> {
  const dir = await mkdtemp(join(tmpdir(), 'wfx-bench-answers-'));
  try {
    const { engine, ids, close } = await openWaiting(dir, waiting, 'task');
    let archived = 0;
    const allArchived = new Promise<void>((resolve) =>
      engine.on('archived', () => {
        if (++archived === waiting) resolve();
      }),
    );
    const cpu0 = process.cpuUsage();
    const start = process.hrtime.bigint();
    await inCallers(waiting, concurrency, (i) => {
      // Parsed per answer, as a request body is.
      const data = JSON.parse('{"inputValue":"ok"}') as Record<string, unknown>;
      return engine.submitTask({
        organization: 'default',
        processInstanceId: ids[i]!,
        nodeId: 'ask',
        action: 'COMPLETE',
        data,
      });
    });
    await allArchived;
    const seconds = Number(process.hrtime.bigint() - start) / 1e9;
    const cpu = process.cpuUsage(cpu0);
    await close();
    return {
      waiting,
      concurrency,
      perSecond: waiting / seconds,
      cpuMicrosPerAnswer: (cpu.user + cpu.system) / waiting,
    };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

export async function runEngineBench(concurrency = 1_000): Promise<EngineBenchResult> {
  // The daemon runs with this flag (src/daemon/process/launcher.ts); `npm run bench` passes it on the
  // command line, where it takes full effect; this covers running the file directly.
  setFlagsFromString('--max-semi-space-size=32');
  turnOffPretenuring(); // as the daemon does
  await run(5_000, 500); // warm-up
  const executions = await run(100_000, concurrency);
  await answerRun(3_000, 10); // warm-up
  return { ...executions, answers: await answerRun(20_000, 10) };
}

export function formatEngineBench(r: EngineBenchResult): string {
  const fmt = (n: number) => Math.round(n).toLocaleString('en-US');
  return [
    '| figure | value | target |',
    '|---|---|---|',
    `| executions/s, 5-node flow, started and completed and archived, durable (${fmt(r.executions)} executions, ${fmt(r.concurrency)} concurrent starters) | **${fmt(r.perSecond)}** | ≥ 20,000 |`,
    `| CPU time per execution (user + system) | ${r.cpuMicrosPerExecution.toFixed(0)} µs | |`,
    `| journal entries per execution (one fsync-able unit each; group commit shares the fsyncs) | ${r.entriesPerExecution.toFixed(2)} | |`,
    `| records per execution (applied; the journal holds a run of nodes as one) | ${r.recordsPerExecution.toFixed(1)} | |`,
    `| resident memory after the run | ${fmt(r.rssMiB)} MiB | |`,
    `| task answers, the engine alone (${fmt(r.answers.waiting)} executions waiting for input, answered ${r.answers.concurrency} at a time, each once the one before it on its caller is durable, until all are archived) | ${fmt(r.answers.perSecond)}/s, CPU ${r.answers.cpuMicrosPerAnswer.toFixed(0)} µs per answer | |`,
  ].join('\n');
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const table = formatEngineBench(await runEngineBench());
  console.log(table);
  await writeSection('engine', `${machineLine()}\n\n${table}`);
  console.log('\nwritten to docs/benchmarks/');
}
