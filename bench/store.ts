/**
 * Store benchmark (`npm run bench:store`): durable commits per second with group commit, the
 * time to reopen a store with 100,000 records in its journal, and what a checkpoint of 100,000
 * waiting executions costs: whole (a snapshot loaded without a layout), and incremental (the
 * first after a start, from the snapshot loaded). Every commit is fsynced before it counts.
 * Prints a table and writes it to docs/benchmarks/store.md.
 */
import { randomUUID } from 'node:crypto';
import { mkdtemp, readFile, rm, stat, readdir, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { adoptDataDir, checkDataDir } from '../src/daemon/ops/check.js';
import { WFX_STORE, type WfxRecord } from '../src/daemon/state/records.js';
import type { WfxState } from '../src/daemon/state/state.js';
import { Store } from '../src/daemon/store/store.js';
import { inCallers } from './callers.js';
import { fillWaiting } from './http.js';
import { machineLine, writeSection } from './report.js';

interface S {
  count: number;
  last: Record<string, string>;
}
interface R {
  readonly type: 'node.completed';
  readonly instanceId: string;
  readonly nodeId: string;
  readonly at: string;
  readonly variables: Record<string, unknown>;
}

const open = (dir: string) =>
  Store.open<S, R>({
    dir,
    initialState: () => ({ count: 0, last: {} }),
    apply: (s, r) => {
      s.count++;
      s.last[r.instanceId] = r.nodeId;
    },
    checkpointEvery: Number.MAX_SAFE_INTEGER,
  });

/** A record the size of an engine transition (about 200 bytes of JSON). */
function record(i: number, instances: string[]): R {
  return {
    type: 'node.completed',
    instanceId: instances[i % instances.length]!,
    nodeId: `task_${i % 7}`,
    at: new Date(1_790_000_000_000 + i).toISOString(),
    variables: { orderId: i, approved: i % 2 === 0, customer: 'ACME Corp' },
  };
}

export interface StoreBenchResult {
  readonly writers: number;
  readonly records: number;
  readonly seconds: number;
  readonly recordsPerSecond: number;
  readonly fsyncs: number;
  readonly reopenRecords: number;
  readonly reopenMs: number;
  readonly journalBytes: number;
  /** Commits/s and mean commit latency with fewer writers: what one request sees. */
  readonly smaller: ReadonlyArray<{ writers: number; recordsPerSecond: number; meanLatencyMs: number }>;
  readonly checkpoints: CheckpointFigures;
}

/** Checkpoints of the daemon's state with many executions waiting (WFX_STORE, no load meanwhile). */
interface CheckpointFigures {
  readonly waiting: number;
  readonly changed: number;
  /** After a start on a snapshot without a layout (written before layouts): every execution serialized. */
  readonly whole: Checkpoint;
  /** After the next start: indexing the snapshot loaded (its layout checked against its bytes). */
  readonly index: { readonly ms: number; readonly cpuMs: number };
  /** The first checkpoint after that start, `changed` executions changed: the others copied as bytes of the snapshot loaded. */
  readonly first: Checkpoint;
  /** One more like `first`, with 4 writers committing all along: what a request sees meanwhile. */
  readonly underLoad: Checkpoint & {
    readonly commits: number;
    readonly p99Ms: number;
    readonly maxMs: number;
    readonly loopBlockMs: number;
  };
}
interface Checkpoint {
  readonly ms: number;
  /** CPU time of this process (the event loop's thread and the rest) while it ran. */
  readonly cpuMs: number;
  readonly bytes: number;
  readonly reusedBytes: number;
}

/** Cuts the layout off a snapshot, as one written before layouts was. */
async function dropLayout(path: string): Promise<void> {
  const bytes = await readFile(path);
  const at = bytes.lastIndexOf(',"layout":');
  if (at < 0) throw new Error(`${path} has no layout`);
  await writeFile(path, Buffer.concat([bytes.subarray(0, at), Buffer.from('}')]));
  // A snapshot from before layouts is also from before manifests: adopted (wfx daemon check --adopt).
  const dir = dirname(path);
  await rm(join(dir, 'store.manifest'), { force: true });
  if ((await adoptDataDir(dir, await checkDataDir(dir))) === null) throw new Error(`${dir} cannot be adopted`);
}

async function checkpointFigures(dir: string, waiting: number, changed: number): Promise<CheckpointFigures> {
  await fillWaiting(dir, waiting);
  await dropLayout(join(dir, 'snapshot.json'));
  const logged: Array<{ bytes: number; reusedBytes: number }> = [];
  const openStore = () =>
    Store.open<WfxState, WfxRecord>({
      dir,
      ...WFX_STORE,
      checkpointEvery: Number.MAX_SAFE_INTEGER,
      logger: { info: (o) => void ('reusedBytes' in o && logged.push(o as never)), warn() {}, error() {} },
    });
  let store = await openStore();
  const ids = Object.keys(store.state.instances);
  let round = 0;
  const measure = async (): Promise<Checkpoint> => {
    // A log line on `changed` executions (a different set each round): something to checkpoint.
    const touched = ids.slice(round * changed, ++round * changed);
    const at = new Date().toISOString();
    await store.commit(
      ...touched.map((instanceId) => ({
        type: 'instance.logged' as const,
        instanceId,
        entry: {
          nodeId: 'ask',
          nodeName: 'ask',
          nodeType: 'inputNode',
          message: 'reminder sent',
          level: 'INFO' as const,
          timestamp: at,
        },
      })),
    );
    const cpu = process.cpuUsage();
    const t0 = process.hrtime.bigint();
    await store.checkpoint();
    const ms = Number(process.hrtime.bigint() - t0) / 1e6;
    const used = process.cpuUsage(cpu);
    return { ms, cpuMs: (used.user + used.system) / 1000, ...logged.at(-1)! };
  };
  const whole = await measure();
  await store.close({ checkpoint: false });
  // A start on the snapshot that checkpoint wrote, with its layout: indexed after the open.
  store = await openStore();
  const indexCpu = process.cpuUsage();
  const indexStarted = process.hrtime.bigint();
  await store.indexed();
  const indexUsed = process.cpuUsage(indexCpu);
  const index = {
    ms: Number(process.hrtime.bigint() - indexStarted) / 1e6,
    cpuMs: (indexUsed.user + indexUsed.system) / 1000,
  };
  const first = await measure();
  // Commits while the checkpoint runs: their latencies, and the longest the event loop was held.
  const latencies: number[] = [];
  let loading = true;
  let nextKey = 0;
  const writers = Array.from({ length: 4 }, async () => {
    while (loading) {
      const t0 = performance.now();
      await store.commit({ type: 'messageId.seen', key: `bench-${nextKey++}`, until: '2099-01-01T00:00:00.000Z' });
      latencies.push(performance.now() - t0);
    }
  });
  let loopBlockMs = 0;
  let tick = performance.now();
  const ticker = setInterval(() => {
    const now = performance.now();
    loopBlockMs = Math.max(loopBlockMs, now - tick);
    tick = now;
  }, 1);
  await new Promise((resolve) => setTimeout(resolve, 100));
  // Both figures from the checkpoint's start, not the warm-up's.
  latencies.length = 0;
  loopBlockMs = 0;
  const loaded = await measure();
  loading = false;
  await Promise.all(writers);
  clearInterval(ticker);
  latencies.sort((a, b) => a - b);
  const underLoad = {
    ...loaded,
    commits: latencies.length,
    p99Ms: latencies[Math.floor(latencies.length * 0.99)]!,
    maxMs: latencies.at(-1)!,
    loopBlockMs,
  };
  await store.close({ checkpoint: false });
  return { waiting, changed, whole, index, first, underLoad };
}

async function throughput(dir: string, writers: number, total: number) {
  const store = await open(dir);
  const instances = Array.from({ length: 1000 }, () => randomUUID());
  const start = process.hrtime.bigint();
  await inCallers(total, writers, (i) => store.commit(record(i, instances)));
  const seconds = Number(process.hrtime.bigint() - start) / 1e9;
  // Reach into the journal's file for its fsync count (bench only).
  const fsyncs = (store as unknown as { journal: { file: { syncs: number } } }).journal.file.syncs;
  await store.close({ checkpoint: false });
  return { seconds, fsyncs };
}

export async function runStoreBench(): Promise<StoreBenchResult> {
  const root = await mkdtemp(join(tmpdir(), 'wfx-bench-store-'));
  try {
    const writers = 1000;
    const records = 300_000;
    await throughput(join(root, 'warmup'), writers, 20_000);
    const { seconds, fsyncs } = await throughput(join(root, 'tp'), writers, records);

    const reopenRecords = 100_000;
    const dir = join(root, 'reopen');
    await throughput(dir, writers, reopenRecords);
    const seg = join(dir, 'journal', (await readdir(join(dir, 'journal')))[0]!);
    const journalBytes = (await stat(seg)).size;
    const t0 = process.hrtime.bigint();
    const store = await open(dir);
    const reopenMs = Number(process.hrtime.bigint() - t0) / 1e6;
    if (store.state.count !== reopenRecords) throw new Error(`reopen found ${store.state.count} records`);
    await store.close({ checkpoint: false });

    const smaller = [];
    for (const [w, n] of [
      [1, 2_000],
      [64, 50_000],
    ] as const) {
      const r = await throughput(join(root, `w${w}`), w, n);
      smaller.push({ writers: w, recordsPerSecond: n / r.seconds, meanLatencyMs: (r.seconds * 1000 * w) / n });
    }
    const checkpoints = await checkpointFigures(join(root, 'checkpoint'), 100_000, 1_000);
    return {
      writers,
      records,
      seconds,
      recordsPerSecond: records / seconds,
      fsyncs,
      reopenRecords,
      reopenMs,
      journalBytes,
      smaller,
      checkpoints,
    };
  } finally {
    await rm(root, { recursive: true, force: true });
  }
}

export function formatStoreBench(r: StoreBenchResult): string {
  const c = r.checkpoints;
  const fmt = (n: number) => Math.round(n).toLocaleString('en-US');
  return [
    '| figure | value | target |',
    '|---|---|---|',
    `| durable commits/s (${fmt(r.writers)} concurrent writers, ${fmt(r.records)} commits of one ~200-byte record, each fsynced before it counts) | **${fmt(r.recordsPerSecond)}** | ≥ 50,000 |`,
    `| fdatasync calls for those commits (group commit) | ${fmt(r.fsyncs)} (${fmt(r.records / r.fsyncs)} commits per fsync) | |`,
    ...r.smaller.map(
      (x) =>
        `| durable commits/s with ${x.writers} concurrent writer${x.writers === 1 ? '' : 's'} (mean commit latency) | ${fmt(x.recordsPerSecond)} (${x.meanLatencyMs.toFixed(2)} ms) | |`,
    ),
    `| reopen with ${fmt(r.reopenRecords)} records in the journal (${(r.journalBytes / 2 ** 20).toFixed(1)} MiB, no snapshot) | **${r.reopenMs.toFixed(0)} ms** | < 1,000 ms |`,
    `| checkpoint of ${fmt(c.waiting)} waiting executions (${(c.whole.bytes / 2 ** 20).toFixed(0)} MiB), ${fmt(c.changed)} changed, after a start on a snapshot without a layout (as written before layouts): every execution serialized | ${fmt(c.whole.ms)} ms (${fmt(c.whole.cpuMs)} ms of CPU) | |`,
    `| after a start on the snapshot it wrote: indexing it (its layout checked against its bytes, a slice at a time after the open) | ${fmt(c.index.ms)} ms (${fmt(c.index.cpuMs)} ms of CPU) | |`,
    `| the first checkpoint after that start, ${fmt(c.changed)} changed: the others copied as bytes of the snapshot loaded (${((100 * c.first.reusedBytes) / c.first.bytes).toFixed(1)} % of the file) | **${fmt(c.first.ms)} ms** (${fmt(c.first.cpuMs)} ms of CPU) | |`,
    `| the same again with 4 writers committing all along: ${fmt(c.underLoad.commits)} commits meanwhile, their latency; the longest the event loop was held | ${fmt(c.underLoad.ms)} ms; commits p99 ${c.underLoad.p99Ms.toFixed(2)} ms, max ${c.underLoad.maxMs.toFixed(1)} ms; loop held ${c.underLoad.loopBlockMs.toFixed(0)} ms | |`,
  ].join('\n');
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const result = await runStoreBench();
  const table = formatStoreBench(result);
  console.log(table);
  await writeSection('store', `${machineLine()}\n\n${table}`);
  console.log('\nwritten to docs/benchmarks/');
}
