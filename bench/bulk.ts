/**
 * Live traffic while a bulk operation runs (part of `npm run bench`; alone: `npm run
 * bench:bulk`): a real daemon on the JSON store, its default `--bulk-rate`, 10,000 executions
 * waiting at an input node. Live traffic is an open loop of `POST /process/start` (a 5-node flow
 * that ends at once) at a steady rate, each start timed from when it was due (so a stall is
 * counted whole): alone for SECONDS (half before the operation, half after), and while a bulk
 * operation over the 10,000 runs, until it ends. The figure is the ratio of the two p99s (and p50s), and the operation's own pace.
 * Each operation of OPERATIONS is measured on its own 10,000: cancel of waiting executions, and
 * retry of failed ones (read back from history).
 */
import { startBenchDaemon } from './daemon.js';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { WfxClient } from '../src/client/client.js';
import type { BulkOperationName, BulkQuery, BulkView } from '../src/shared/api/index.js';
import { DEFAULT_BULK_RATE } from '../src/daemon/engine/bulk/runner.js';
import { FIVE_NODE_FLOW } from './engine.js';
import { percentile } from './http.js';
import { machineLine, writeSection } from './report.js';

/** Executions each operation is applied to (BENCH_BULK_EXECUTIONS overrides). */
const EXECUTIONS = Number(process.env.BENCH_BULK_EXECUTIONS ?? 10_000);
/** Seconds of live traffic measured alone (BENCH_SECONDS overrides). */
const SECONDS = Number(process.env.BENCH_SECONDS ?? 8);
/** Live starts a second (BENCH_BULK_TRAFFIC overrides). */
const TRAFFIC = Number(process.env.BENCH_BULK_TRAFFIC ?? 200);
/** `--bulk-rate` of the daemon (BENCH_BULK_RATE overrides; default the daemon's). */
const RATE = Number(process.env.BENCH_BULK_RATE ?? DEFAULT_BULK_RATE);
/** Starts in flight at once while seeding. */
const SEED_CONCURRENCY = 64;

const FIVE_NODES = '7f3e2d1c-0b9a-4876-9543-210fedcba987';
const WAITS = `processId: 3e4f5a6b-7c8d-4e9f-a0b1-c2d3e4f5a6b7
name: Waits for input
nodes:
  start: { type: startEvent, next: ask }
  ask: { type: inputNode, inputType: textbox, next: done }
  done: { type: endEvent }
`;

const FAILS_ID = '4f5a6b7c-8d9e-4fa0-b1c2-d3e4f5a6b7c8';
/** Fails at its gateway (NO_BRANCH_MATCHED) until `ok` is set: what a bulk retry fixes. */
const FAILS = `processId: ${FAILS_ID}
name: Fails until ok
nodes:
  start: { type: startEvent, next: check }
  check:
    type: exclusiveGateway
    branches:
      - { condition: "\${ok == true}", next: done }
  done: { type: endEvent }
`;

/** An operation measured: how its executions are made, and the query that selects them. */
interface Measured {
  readonly operation: BulkOperationName;
  /** Makes the executions (EXECUTIONS of them) the operation will be applied to. */
  readonly seed: (client: WfxClient) => Promise<void>;
  readonly query: BulkQuery;
  readonly params?: Record<string, unknown>;
}

const OPERATIONS: readonly Measured[] = [
  {
    operation: 'cancel',
    seed: (client) => startMany(client, '3e4f5a6b-7c8d-4e9f-a0b1-c2d3e4f5a6b7', EXECUTIONS),
    query: { processId: '3e4f5a6b-7c8d-4e9f-a0b1-c2d3e4f5a6b7', state: 'RUNNING' },
  },
  {
    // Failed executions are in history (each failed in the step that started it): read back.
    operation: 'retry',
    seed: (client) => startMany(client, FAILS_ID, EXECUTIONS),
    query: { processId: FAILS_ID, state: 'FAILED' },
    params: { data: { ok: true } },
  },
];

/** Latencies of the live starts of one phase, in ms. */
export interface Latencies {
  readonly count: number;
  readonly failed: number;
  readonly p50: number;
  readonly p99: number;
  readonly max: number;
}

export interface BulkBenchResult {
  readonly rate: number;
  readonly runs: ReadonlyArray<{
    readonly operation: BulkOperationName;
    readonly alone: Latencies;
    readonly during: Latencies;
    /** Seconds the operation ran, and executions it applied a second. */
    readonly seconds: number;
    readonly perSecond: number;
  }>;
}

/** Starts `n` executions of `processId`, SEED_CONCURRENCY at a time. */
async function startMany(client: WfxClient, processId: string, n: number): Promise<void> {
  let next = 0;
  const lane = async (): Promise<void> => {
    while (next < n) {
      next++;
      await client.process.startAny({ processId, data: {} });
    }
  };
  await Promise.all(Array.from({ length: SEED_CONCURRENCY }, lane));
}

/**
 * Live starts, TRAFFIC a second, each timed from when it was due, until `until` resolves. An
 * open loop: a slow answer does not slow the sending, so a stall shows whole in the latencies.
 */
async function liveTraffic(url: string, key: string, until: Promise<void>): Promise<number[]> {
  const body = JSON.stringify({ processId: FIVE_NODES, data: { orderId: 1, amount: 5 } });
  const headers = { 'x-api-key': key, 'content-type': 'application/json' };
  const ms: number[] = [];
  let failed = 0;
  let over = false;
  void until.then(() => (over = true));
  const inFlight: Array<Promise<void>> = [];
  const started = performance.now();
  for (let i = 0; !over; i++) {
    const due = started + (i * 1000) / TRAFFIC;
    const wait = due - performance.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    inFlight.push(
      fetch(`${url}/process/start`, { method: 'POST', headers, body }).then(
        async (res) => {
          await res.arrayBuffer();
          if (res.ok) ms.push(performance.now() - due);
          else failed++;
        },
        () => void failed++,
      ),
    );
  }
  await Promise.all(inFlight);
  return Object.assign(ms, { failed });
}

/** The latencies of one or more windows of live traffic (their `failed` added up). */
function latencies(...windows: Array<number[] & { failed?: number }>): Latencies {
  const sorted = Float64Array.from(windows.flat()).sort();
  return {
    count: sorted.length,
    failed: windows.reduce((n, w) => n + (w.failed ?? 0), 0),
    p50: percentile(sorted, 50),
    p99: percentile(sorted, 99),
    max: sorted.at(-1) ?? Number.NaN,
  };
}

/** Resolves after `seconds`. */
const after = (seconds: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, seconds * 1000));

/** Resolves once the operation has ended, read every 100 ms. */
async function ended(client: WfxClient, bulkId: string): Promise<BulkView> {
  for (;;) {
    const v = await client.bulk.get(bulkId);
    if (v.state !== 'RUNNING') return v;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

export async function runBulkBench(): Promise<BulkBenchResult> {
  const runs: Array<BulkBenchResult['runs'][number]> = [];
  for (const m of OPERATIONS) {
    const dir = await mkdtemp(join(tmpdir(), 'wfx-bench-bulk-'));
    const dataDir = join(dir, 'data');
    const daemon = await startBenchDaemon(dataDir, ['--bulk-rate', String(RATE)]);
    try {
      const { url } = daemon;
      const key = (await readFile(join(dataDir, 'bootstrap.key'), 'utf8')).trim();
      const client = new WfxClient({ url, apiKey: key, credentialSource: 'bench' });
      await client.flows.publish({ source: FIVE_NODE_FLOW });
      await client.flows.publish({ source: WAITS });
      await client.flows.publish({ source: FAILS });
      await m.seed(client);
      // A warm-up, then the traffic alone: half before the operation, half after it, so that
      // what else the machine does weighs on both alike.
      await liveTraffic(url, key, after(1));
      const before = await liveTraffic(url, key, after(SECONDS / 2));
      const created = await client.bulk.create({
        operation: m.operation,
        query: m.query,
        ...(m.params && { params: m.params }),
      } as never);
      const t0 = performance.now();
      let view: BulkView | null = null;
      const duringMs = await liveTraffic(
        url,
        key,
        ended(client, created.bulkId).then((v) => void (view = v)),
      );
      const seconds = (performance.now() - t0) / 1000;
      const alone = latencies(before, await liveTraffic(url, key, after(SECONDS / 2)));
      const during = latencies(duringMs);
      const done = view as BulkView | null;
      if (done?.state !== 'COMPLETED' || done.done + done.skipped !== EXECUTIONS)
        throw new Error(`the bulk ${m.operation} did not complete: ${JSON.stringify(done)}`);
      runs.push({ operation: m.operation, alone, during, seconds, perSecond: EXECUTIONS / seconds });
    } finally {
      await daemon.stop();
      await rm(dir, { recursive: true, force: true });
    }
  }
  return { rate: RATE, runs };
}

const ms = (n: number) => (Number.isNaN(n) ? '-' : `${n.toFixed(n < 10 ? 2 : 1)} ms`);
const fmt = (n: number) => Math.round(n).toLocaleString('en-US');
const cell = (l: Latencies) => `${ms(l.p50)} / **${ms(l.p99)}** / ${ms(l.max)} (${fmt(l.count)}, ${l.failed} failed)`;

export function formatBulkBench(r: BulkBenchResult): string {
  return [
    `A daemon on the JSON store, \`--bulk-rate ${r.rate}\`${r.rate === DEFAULT_BULK_RATE ? ' (the default)' : ''}; ${fmt(EXECUTIONS)} executions waiting at an input node; live traffic: \`POST /process/start\` of a 5-node flow, ${TRAFFIC} a second, open loop, each timed from when it was due. Alone: ${SECONDS} s, half before the operation and half after; during: from its creation to its end.`,
    '',
    '| operation | starts alone: p50 / p99 / max | starts during: p50 / p99 / max | p99 ratio | p50 ratio | the operation took | its pace |',
    '|---|---|---|---|---|---|---|',
    ...r.runs.map(
      (x) =>
        `| ${x.operation} | ${cell(x.alone)} | ${cell(x.during)} | ${(x.during.p99 / x.alone.p99).toFixed(2)} | ${(x.during.p50 / x.alone.p50).toFixed(2)} | ${x.seconds.toFixed(1)} s | ${fmt(x.perSecond)} executions/s |`,
    ),
  ].join('\n');
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  console.log(machineLine({ commit: true }));
  const text = formatBulkBench(await runBulkBench());
  console.log(text);
  await writeSection('bulk', `${machineLine()}\n\n${text}`);
  console.log('\nwritten to docs/benchmarks/');
}
