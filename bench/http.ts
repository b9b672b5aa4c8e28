/**
 * HTTP benchmarks (part of `npm run bench`): a real daemon process started with `wfx daemon
 * start`, loaded with autocannon from this process, on the same machine. Every figure is also
 * given as a ratio to the physical neighbour (bench/neighbour.ts: a bare Fastify route parsing
 * the same body), measured in the same run, since absolute numbers on a shared machine move.
 * Each resume load follows the neighbour serving its requests twice: the bare route, then the
 * durable neighbour (the same route, plus a durable append before it answers). They are the
 * floors of any answer's latency, and of a durable one's, here and now: a resume p99 over 5 ms
 * on a host where the bare route alone misses 5 ms is the host's.
 */
import { execFile, fork, spawn, type ChildProcess } from 'node:child_process';
import { UNPACED } from './daemon.js';
import { mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { WfxClient } from '../src/client/client.js';
import { wfxJsonStore } from '../src/daemon/engine/executions-at-rest.js';
import type { WfxRecord } from '../src/daemon/state/records.js';
import type { WfxState } from '../src/daemon/state/state.js';
import { History } from '../src/daemon/store/history.js';
import { Store } from '../src/daemon/store/store.js';
import { inCallers } from './callers.js';
import { FIVE_NODE_FLOW, openWaiting, WAITS } from './engine.js';
import type { InterleavedOutcome, InterleavedSpec, LoadOutcome, LoadPart, LoadSpec } from './load-worker.js';
import { machineLine, writeSection } from './report.js';

const run = promisify(execFile);
const WFX = fileURLToPath(new URL('../../bin/wfx.js', import.meta.url));
const NEIGHBOUR = fileURLToPath(new URL('./neighbour.js', import.meta.url));
const LOAD_WORKER = fileURLToPath(new URL('./load-worker.js', import.meta.url));
/** Seconds each load runs (BENCH_SECONDS overrides, e.g. 2 for a quick look). */
export const SECONDS = Number(process.env.BENCH_SECONDS ?? 8);
/** Waiting executions for the restart figure (BENCH_WAITING overrides). */
const WAITING = Number(process.env.BENCH_WAITING ?? 100_000);

/** The figures of one HTTP load. */
export interface Load {
  readonly perSecond: number;
  /** Every 2xx response's latency in ms, ascending. */
  readonly latencies: Float64Array;
  readonly p50: number;
  readonly p99: number;
  readonly total: number;
  readonly failed: number;
}

/** Data dirs of the daemons this run started: every one is stopped at the end, whatever failed. */
const startedDirs = new Set<string>();
const stopDaemon = (dataDir: string) =>
  run(process.execPath, [WFX, 'daemon', 'stop', '--data-dir', dataDir]).then(
    () => startedDirs.delete(dataDir),
    () => undefined,
  );

/** A daemon process on `dataDir`: its URL, key and pid; `stop()` stops it. */
async function startDaemon(
  dataDir: string,
): Promise<{ url: string; key: string; pid: number; startMs: number; stop: () => Promise<void> }> {
  const t0 = process.hrtime.bigint();
  startedDirs.add(dataDir);
  const { stdout } = await run(
    process.execPath,
    [WFX, 'daemon', 'start', '--port', '0', '--data-dir', dataDir, '--json', ...UNPACED],
    { maxBuffer: 1 << 20 },
  );
  const startMs = Number(process.hrtime.bigint() - t0) / 1e6;
  const info = JSON.parse(stdout) as { url: string; pid: number };
  // A data dir filled in-process has no bootstrap key (none is needed there).
  const key = (await readFile(join(dataDir, 'bootstrap.key'), 'utf8').catch(() => '')).trim();
  return {
    ...info,
    key,
    startMs,
    stop: async () => {
      await stopDaemon(dataDir);
    },
  };
}

/** The neighbour process and its URL; `dir` holds the durable neighbour's file. */
export async function startNeighbour(dir: string): Promise<{ url: string; child: ChildProcess }> {
  await mkdir(dir, { recursive: true });
  const child = spawn(process.execPath, ['--max-semi-space-size=64', NEIGHBOUR, dir], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  for await (const line of createInterface({ input: child.stdout! })) {
    if (line.startsWith('listening ')) return { url: `http://127.0.0.1:${line.slice('listening '.length)}`, child };
  }
  throw new Error('the neighbour did not start');
}

/** Runs one load from a fresh client process (bench/load-worker.ts), and its warm-up before it. */
export async function runLoad(spec: LoadSpec): Promise<LoadOutcome>;
export async function runLoad(spec: InterleavedSpec): Promise<InterleavedOutcome>;
export async function runLoad(spec: LoadSpec | InterleavedSpec): Promise<LoadOutcome | InterleavedOutcome> {
  collectGarbage(); // what setting up this load left in the bench process, now rather than during it
  const worker = fork(LOAD_WORKER, [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  try {
    const outcome = new Promise<LoadOutcome | InterleavedOutcome>((resolve, reject) => {
      worker.once('message', (m: LoadOutcome | InterleavedOutcome) => resolve(m));
      worker.once('exit', (code) => reject(new Error(`the load worker exited with ${code}`)));
    });
    worker.send(spec);
    return await outcome;
  } finally {
    worker.kill();
  }
}

/** The figures of a load part: rate, percentiles, failures. */
export function figures(p: LoadPart): Load {
  const sorted = Float64Array.from(p.latencies).sort();
  return {
    // Not autocannon's requests.average: that averages whole-second buckets, so a run of a fixed
    // amount (the resume loads) that takes 3.2 s counted as 4 s.
    perSecond: p.total / p.seconds,
    latencies: sorted,
    p50: percentile(sorted, 50),
    p99: percentile(sorted, 99),
    total: p.total,
    failed: p.failed,
  };
}

/** A load of SECONDS, after one second of warm-up (the client's code compiled, the daemon's too). */
async function load(spec: ReturnType<typeof post>): Promise<Load> {
  return withWarmup(await runLoad({ ...spec, seconds: SECONDS, warmupSeconds: 1 }));
}

/** The figures of a load's measured part, its warm-up's failures counted too. */
function withWarmup({ warmup, measured }: LoadOutcome): Load {
  const figs = figures(measured);
  return { ...figs, failed: figs.failed + (warmup?.failed ?? 0) };
}

/** Slices an interleaved load takes of each side. */
export const SLICES = 4;

/**
 * Two loads measured in turns, SECONDS of each in SLICES slices (after a second's warm-up of
 * each), from one client process. On this shared host the load drifts within minutes: the
 * neighbour measured 27,000-63,000 req/s on one evening, and 40,000 and 53,000 half a minute
 * apart in one run. Measured before and after the daemon's loads instead, the ratio carried
 * that drift; in turns, both sides see the same host.
 */
export async function interleavedLoad(a: ReturnType<typeof post>, b: ReturnType<typeof post>): Promise<[Load, Load]> {
  const [first, second] = await runLoad({
    interleave: [a, b],
    slices: SLICES,
    sliceSeconds: SECONDS / SLICES,
    warmupSeconds: 1,
  });
  return [withWarmup(first), withWarmup(second)];
}

/** The nearest-rank percentile `p` of ascending `sorted` (NaN when empty). */
export function percentile(sorted: Float64Array, p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.max(0, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

/** An autocannon target: POST `body` as JSON to `url` with `key` (if any), `connections` at a time. */
export const post = (url: string, key: string | null, body: object, connections: number) => ({
  url,
  method: 'POST' as const,
  connections,
  headers: { 'content-type': 'application/json', ...(key && { 'x-api-key': key }) },
  body: JSON.stringify(body),
});

/** The typed client for the bench's setup calls (the measured load is autocannon's own raw requests). */
const clientOf = (url: string, key: string) => new WfxClient({ url, apiKey: key, credentialSource: 'bench' });

/** Starts `n` executions of `processId` over HTTP (50 at a time); their ids. */
async function startMany(
  url: string,
  key: string,
  processId: string,
  n: number,
  data: (i: number) => object,
): Promise<string[]> {
  const ids: string[] = [];
  const client = clientOf(url, key);
  await inCallers(n, 50, async (i) => {
    ids[i] = (
      await client.process.startAny({ processId, data: data(i) as Record<string, unknown>, correlationKey: `k-${i}` })
    ).processInstanceId;
  });
  return ids;
}

/** A resume load: the measured part, and the same figures counting the warm-up before it. */
interface ResumeLoad extends Load {
  readonly warmup: number;
  readonly withWarmup: { readonly p99: number };
}

/**
 * Answers each of `ids` once, `connections` at a time. The first third is a warm-up, not
 * measured: the code this load runs has not run before in the daemon (V8 still compiles it),
 * and the fill just before grew the heap, so a full GC is under way. In the first 1-2 s of a
 * cold load the daemon serves a third of what it does after, which is a start-up cost and not
 * the latency a running daemon gives. Its figures are kept (`withWarmup`) and reported too.
 */
async function resumeLoad(
  base: ReturnType<typeof post>,
  ids: readonly string[],
  body: (id: string, i: number) => object,
): Promise<ResumeLoad> {
  const warm = Math.floor(ids.length / 3);
  const bodies = ids.map((id, i) => JSON.stringify(body(id, i)));
  const { body: _one, ...target } = base; // a body per request here
  const { warmup, measured } = await runLoad({ ...target, bodies, warmupCount: warm });
  const figs = figures(measured);
  const all = Float64Array.from([...(warmup?.latencies ?? []), ...measured.latencies]).sort();
  return {
    ...figs,
    failed: figs.failed + (warmup?.failed ?? 0),
    warmup: warm,
    withWarmup: { p99: percentile(all, 99) },
  };
}

/** Resident memory of a process, in bytes (Linux). */
export async function rss(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1] ?? 0) * 1024;
}

/** How long `settle` waits at most for the RSS to fall, and how often it samples it. */
const SETTLE_MS = 90_000;
const SETTLE_EVERY_MS = 5_000;

/**
 * The RSS of `pid` at rest once it has settled: sampled every SETTLE_EVERY_MS from `first` on,
 * until it fell by a fifth and the next sample is within 2 % of the one before, or SETTLE_MS
 * passed (then the lowest seen). Nothing else runs meanwhile.
 */
export async function settle(pid: number, first: number): Promise<{ bytes: number; afterMs: number }> {
  let last = first;
  let lowest = first;
  for (let waited = SETTLE_EVERY_MS; waited <= SETTLE_MS; waited += SETTLE_EVERY_MS) {
    await new Promise((r) => setTimeout(r, SETTLE_EVERY_MS));
    const now = await rss(pid);
    lowest = Math.min(lowest, now);
    if (last < first * 0.8 && Math.abs(now - last) <= last * 0.02) return { bytes: now, afterMs: waited };
    last = now;
  }
  return { bytes: lowest, afterMs: SETTLE_MS };
}

/**
 * CPU time a process's main thread has used so far, in ms (Linux: user and system, in the
 * kernel's ticks of 10 ms), or null where /proc has no such file.
 */
export async function mainThreadCpuMs(pid: number): Promise<number | null> {
  try {
    const stat = await readFile(`/proc/${pid}/task/${pid}/stat`, 'utf8');
    // The fields after the command's name, which is in parentheses and may hold spaces.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return null;
  }
}

/**
 * Fills `dataDir` with `n` executions waiting at an input node (`task`) or for a message, each
 * under a correlation key of its own (`event`), written by the engine in-process into one
 * store with every execution in the state (the store benchmark's checkpoints), and closed with
 * a checkpoint.
 */
export async function fillWaiting(dataDir: string, n: number, kind: 'task' | 'event' = 'task'): Promise<void> {
  await (await openWaiting(dataDir, n, kind)).close();
}

/**
 * The same, written into the daemon's own store (executions in segments, as a daemon leaves
 * them; bench:waiting's fill does the same) and closed as a stop closes it: what a daemon
 * restarts on (exported for profiling restarts).
 */
export async function fillAsDaemon(dataDir: string, n: number, kind: 'task' | 'event' = 'task'): Promise<void> {
  const filled = await openWaiting(dataDir, n, kind, async () => ({
    store: await Store.open<WfxState, WfxRecord>({ dir: dataDir, ...wfxJsonStore() }),
    history: await History.open(join(dataDir, 'history')),
  }));
  await filled.close();
}

/** A full garbage collection of this process, now. */
export function collectGarbage(): void {
  setFlagsFromString('--expose-gc');
  (runInNewContext('gc') as () => void)();
}

export interface HttpBenchResult {
  /** The neighbour, measured in turns with the daemon's start load at 50 connections (see interleavedLoad). */
  readonly neighbour: Load;
  readonly starts: ReadonlyArray<{ connections: number; load: Load }>;
  /** Starts at 10 connections while `waiting` executions wait for a message. */
  readonly startsWhileWaiting: { waiting: number; load: Load };
  readonly completed: { perSecond: number; p99: number; checked: number; allCompleted: boolean };
  readonly task: ResumeLoad;
  readonly event: ResumeLoad;
  /**
   * The durable neighbour (bench/neighbour.ts) serving the same requests as each resume load,
   * just before it: the floor of the resume latency on this host at that moment.
   */
  readonly durable: { readonly task: ResumeLoad; readonly event: ResumeLoad };
  /** The bare neighbour serving those requests too, before the durable one: the floor of any answer's latency. */
  readonly bare: { readonly task: ResumeLoad; readonly event: ResumeLoad };
  readonly restart: {
    waiting: number;
    startMs: number;
    /** An empty daemon's RSS just after its start. */
    emptyRssBytes: number;
    /** The daemon's RSS at rest, settled, over `waiting` executions at an input node. */
    rssBytes: number;
    /** The same over executions waiting for a message, each under its own correlation key. */
    rssBytesMessages: number;
  };
}

export async function runHttpBench(): Promise<HttpBenchResult> {
  const dir = await mkdtemp(join(tmpdir(), 'wfx-bench-http-'));
  const neighbourProc = await startNeighbour(join(dir, 'neighbour'));
  try {
    let neighbour: Load;

    const d = await startDaemon(join(dir, 'load'));
    const starts: Array<{ connections: number; load: Load }> = [];
    let completed: HttpBenchResult['completed'];
    let task: ResumeLoad;
    let event: ResumeLoad;
    let startsWhileWaiting: HttpBenchResult['startsWhileWaiting'];
    const durable: Partial<Record<'task' | 'event', ResumeLoad>> = {};
    const bare: Partial<Record<'task' | 'event', ResumeLoad>> = {};
    try {
      const client = clientOf(d.url, d.key);
      await client.flows.publish({ source: FIVE_NODE_FLOW });
      await client.flows.publish({ source: WAITS });
      const body = { processId: '7f3e2d1c-0b9a-4876-9543-210fedcba987', data: { orderId: 1, amount: 150 } };
      for (const connections of [1, 10])
        starts.push({ connections, load: await load(post(`${d.url}/process/start`, d.key, body, connections)) });
      // At 50 connections, in turns with the neighbour: every ratio is to this neighbour figure.
      const [neighbourLoad, fiftyLoad] = await interleavedLoad(
        post(`${neighbourProc.url}/process/start`, null, body, 50),
        post(`${d.url}/process/start`, d.key, body, 50),
      );
      neighbour = neighbourLoad;
      starts.push({ connections: 50, load: fiftyLoad });
      // The 5-node flow has no wait: its start call answers once the whole run is durable, so a
      // start is a completion. Check that every execution of the run did complete.
      const fifty = starts.find((s) => s.connections === 50)!.load;
      const list = await client.instances.list('7f3e2d1c-0b9a-4876-9543-210fedcba987', { limit: 200 });
      completed = {
        perSecond: fifty.perSecond,
        p99: fifty.p99,
        checked: list.items.length,
        allCompleted: list.items.every((i) => i.stateCd === 1),
      };

      // Resume: executions waiting at an input node (task) or a catch event (message); one call
      // each, the first third of them as a warm-up.
      const n = Math.max(3000, Math.round(starts[1]!.load.perSecond * SECONDS * 0.75));
      const waitingTasks = await startMany(d.url, d.key, '1d2c3b4a-5e6f-4a7b-8c9d-0e1f2a3b4c5d', n, () => ({
        kind: 'task',
      }));
      const taskBody = (id: string) => ({
        processInstanceId: id,
        nodeId: 'ask',
        action: 'COMPLETE',
        data: { inputValue: 'ok' },
      });
      // Each resume load comes just after the bare and the durable neighbour served the same
      // requests: the floors of its latency on this host now.
      bare.task = await resumeLoad(post(`${neighbourProc.url}/process/start`, null, {}, 10), waitingTasks, taskBody);
      durable.task = await resumeLoad(post(`${neighbourProc.url}/durable`, null, {}, 10), waitingTasks, taskBody);
      task = await resumeLoad(post(`${d.url}/process/task`, d.key, {}, 10), waitingTasks, taskBody);
      const waitingEvents = await startMany(d.url, d.key, '1d2c3b4a-5e6f-4a7b-8c9d-0e1f2a3b4c5d', n, () => ({
        kind: 'event',
      }));
      // Starts again, now with those executions waiting: what a daemon in use serves (its heap
      // holds them; see src/daemon/process/v8-flags.ts and newBucket in src/daemon/state/records.ts).
      startsWhileWaiting = { waiting: n, load: await load(post(`${d.url}/process/start`, d.key, body, 10)) };
      // Their correlation keys are k-0..k-(n-1): message i resumes execution i.
      const eventBody = (_id: string, i: number) => ({
        eventType: 'paid',
        correlationKey: `k-${i}`,
        data: { paid: true },
      });
      bare.event = await resumeLoad(post(`${neighbourProc.url}/process/start`, null, {}, 10), waitingEvents, eventBody);
      durable.event = await resumeLoad(post(`${neighbourProc.url}/durable`, null, {}, 10), waitingEvents, eventBody);
      event = await resumeLoad(post(`${d.url}/process/event`, d.key, {}, 10), waitingEvents, eventBody);
    } finally {
      await d.stop();
    }

    // Restart with many waiting executions: time `wfx daemon start` until the API answers, then
    // its RSS at rest once settled, over an empty daemon's: what a daemon users run holds (its
    // executions at rest on disk, the execution cache's default), as bench:waiting measures it.
    const emptyDir = join(dir, 'empty');
    const empty = await startDaemon(emptyDir);
    await new Promise((r) => setTimeout(r, 5_000));
    // Settled as the full ones are: what V8 gives back after a start is not theirs to count.
    const emptyRssBytes = (await settle(empty.pid, await rss(empty.pid))).bytes;
    await empty.stop();
    /** Starts a daemon on `dataDir`: how long until it answered, and its RSS settled. */
    const restartOn = async (dataDir: string) => {
      // Filling left this process with the executions' garbage: collect it now, so V8's
      // background sweeping here does not take a core from the daemon being timed.
      collectGarbage();
      const again = await startDaemon(dataDir);
      try {
        await new Promise((r) => setTimeout(r, 5_000));
        const settled = await settle(again.pid, await rss(again.pid));
        return { startMs: again.startMs, rssBytes: settled.bytes };
      } finally {
        await again.stop();
      }
    };
    const full = join(dir, 'full');
    await fillAsDaemon(full, WAITING);
    const tasks = await restartOn(full);
    const messages = join(dir, 'messages');
    await fillAsDaemon(messages, WAITING, 'event');
    const events = await restartOn(messages);
    return {
      neighbour: neighbour!,
      starts,
      startsWhileWaiting: startsWhileWaiting!,
      completed: completed!,
      task: task!,
      event: event!,
      durable: { task: durable.task!, event: durable.event! },
      bare: { task: bare.task!, event: bare.event! },
      restart: {
        waiting: WAITING,
        startMs: tasks.startMs,
        emptyRssBytes,
        rssBytes: tasks.rssBytes,
        rssBytesMessages: events.rssBytes,
      },
    };
  } finally {
    neighbourProc.child.kill('SIGTERM');
    for (const d of [...startedDirs]) await stopDaemon(d);
    await rm(dir, { recursive: true, force: true });
  }
}

const fmt = (n: number) => Math.round(n).toLocaleString('en-US');
const ms = (n: number) => `${n.toFixed(n < 10 ? 2 : 0)} ms`;
const pct = (a: number, b: number) => `${Math.round((a / b) * 100)} %`;

export function formatHttpBench(r: HttpBenchResult): string {
  const n = r.neighbour.perSecond;
  const perWaiting = (r.restart.rssBytes - r.restart.emptyRssBytes) / r.restart.waiting;
  const perMessage = (r.restart.rssBytesMessages - r.restart.emptyRssBytes) / r.restart.waiting;
  const rows = [
    `| neighbour: bare Fastify route parsing the same body, 50 connections (in turns with the daemon's start load at 50 connections: ${SLICES} slices of ${SECONDS / SLICES} s each) | **${fmt(n)} req/s**, p99 ${ms(r.neighbour.p99)} | 100 % | |`,
    ...r.starts.map(
      (s) =>
        `| POST /process/start, 5-node flow, ${s.connections} connection${s.connections > 1 ? 's' : ''} | ${fmt(s.load.perSecond)}/s, p50 ${ms(s.load.p50)}, p99 ${ms(s.load.p99)}, ${s.load.failed} failed | ${pct(s.load.perSecond, n)} | ${s.connections === 50 ? 'p99 < 10 ms' : ''} |`,
    ),
    `| executions started and completed (durable), 50 connections | **${fmt(r.completed.perSecond)}/s**, p99 start to completion ${ms(r.completed.p99)}; ${r.completed.allCompleted ? 'every one checked completed' : 'NOT ALL COMPLETED'} | **${pct(r.completed.perSecond, n)}** | ≥ 35 % of the neighbour, no failed calls |`,
    `| POST /process/start, 5-node flow, 10 connections, with ${fmt(r.startsWhileWaiting.waiting)} executions waiting for a message | ${fmt(r.startsWhileWaiting.load.perSecond)}/s, p50 ${ms(r.startsWhileWaiting.load.p50)}, p99 ${ms(r.startsWhileWaiting.load.p99)}, ${r.startsWhileWaiting.load.failed} failed | ${pct(r.startsWhileWaiting.load.perSecond, n)} | |`,
    ...(['task', 'event'] as const).flatMap((kind) => {
      const l = r[kind];
      const floor = r.durable[kind];
      const bare = r.bare[kind];
      const what = kind === 'task' ? 'POST /process/task' : 'POST /process/event (message)';
      return [
        `| bare neighbour: the route parsing the body and answering, nothing else, 10 connections, the requests of the next rows, just before them | ${fmt(bare.perSecond)}/s, p50 ${ms(bare.p50)}, p99 ${ms(bare.p99)}, ${bare.failed} failed | ${pct(bare.perSecond, n)} | |`,
        `| durable neighbour: the bare route plus one durable append of the body it parsed (group commit, O_DSYNC: the writes of wfx's journal), 10 connections, the requests of the next row, just before it | ${fmt(floor.perSecond)}/s, p50 ${ms(floor.p50)}, p99 ${ms(floor.p99)}, ${floor.failed} failed | ${pct(floor.perSecond, n)} | |`,
        `| resume: ${what} to the next node's completion, 10 connections, after a warm-up of ${fmt(l.warmup)} | ${fmt(l.perSecond)}/s, p50 ${ms(l.p50)}, **p99 ${ms(l.p99)}** (${(l.p99 / floor.p99).toFixed(2)} × the durable neighbour's, ${(l.p99 / bare.p99).toFixed(2)} × the bare one's; ${ms(l.withWarmup.p99)} counting the warm-up), ${l.failed} failed (warm-up included) | ${pct(l.perSecond, n)} | p99 < 5 ms |`,
      ];
    }),
    `| restart: \`wfx daemon start\` on ${fmt(r.restart.waiting)} waiting executions until the API answers | **${ms(r.restart.startMs)}** | | < 2,000 ms |`,
    `| RSS at rest per waiting execution: the daemon's, settled after that start, over an empty daemon's (settled too), ÷ ${fmt(r.restart.waiting)} (at an input node; the execution cache's default) | **${fmt(perWaiting)} B** (RSS ${fmt(r.restart.rssBytes / 2 ** 20)} MiB vs ${fmt(r.restart.emptyRssBytes / 2 ** 20)} MiB) | | ≤ 300 B (as bench:waiting's) |`,
    `| the same for ${fmt(r.restart.waiting)} executions waiting for a message, each under its own correlation key | **${fmt(perMessage)} B** (RSS ${fmt(r.restart.rssBytesMessages / 2 ** 20)} MiB) | | ≤ 300 B |`,
  ];
  return ['| figure | value | of the neighbour | target |', '|---|---|---|---|', ...rows].join('\n');
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  console.log(machineLine({ commit: true }));
  const text = formatHttpBench(await runHttpBench());
  console.log(text);
  await writeSection('http', `${machineLine()}\n\n${text}`);
  console.log('\nwritten to docs/benchmarks/');
}
