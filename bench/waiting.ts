/**
 * Many waiting executions (`npm run bench:waiting`, part of `npm run bench`): the figures issue
 * #60 is judged by (docs/decisions/068-waiting-executions-out-of-memory.md). A data directory
 * holds BENCH_WAITING executions (default 1,000,000), a third waiting at an input node with a
 * timeout (some already past it), a third for a message under a correlation key of its own, a
 * third on a timer due over the next week. They are written in-process by an engine in a child
 * process (a heap of its own, sized for them), then checkpointed, and the store closed (which
 * leaves a directory image, as a daemon's stop does). A real daemon is then started on that
 * directory with `wfx daemon start`, and measured: the time until its API answers and until its
 * recovery (which arms every timer) ended, its RSS at rest, answers to input waits nothing
 * touched since the start (just after the durable neighbour served the same requests: the floor
 * of a durable answer's latency on this host), and starts at 50 connections in turns with the
 * bare Fastify neighbour (bench/neighbour.ts); then a restart, and a start with the image removed.
 *
 * The daemon is killed, and the run aborted, if its RSS passes BENCH_WAITING_MAX_RSS_GIB
 * (default 12).
 */
import { fork } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { validateFlowSource } from '../src/shared/flow/validate.js';
import { publishFlow } from '../src/daemon/flows/publish.js';
import { newApiKey } from '../src/daemon/auth/api-keys.js';
import { Engine } from '../src/daemon/engine/engine.js';
import { wfxJsonStore } from '../src/daemon/engine/executions-at-rest.js';
import type { WfxRecord } from '../src/daemon/state/records.js';
import type { WfxState } from '../src/daemon/state/state.js';
import { History } from '../src/daemon/store/history.js';
import { IMAGE_NAME } from '../src/daemon/at-rest/segments/directory-image.js';
import { Store } from '../src/daemon/store/store.js';
import { inCallers } from './callers.js';
import { startBenchDaemon, UNPACED, type BenchDaemon, UNPACED_LIMITS } from './daemon.js';
import { FIVE_NODE_FLOW } from './engine.js';
import {
  collectGarbage,
  figures,
  interleavedLoad,
  mainThreadCpuMs,
  percentile,
  post,
  rss,
  settle,
  runLoad,
  SECONDS,
  SLICES,
  startNeighbour,
  type Load,
} from './http.js';
import { machineLine, writeSection } from './report.js';

/** Waiting executions in the data directory (BENCH_WAITING overrides, e.g. 100000 for a quicker run). */
const WAITING = Number(process.env.BENCH_WAITING ?? 1_000_000);
/** `--execution-cache` for the daemon measured (BENCH_WAITING_CACHE; unset: the daemon's default). */
const CACHE = process.env.BENCH_WAITING_CACHE;
/** The daemon's RSS past which the run is aborted (the host's other work needs its memory too). */
const MAX_RSS = Number(process.env.BENCH_WAITING_MAX_RSS_GIB ?? 12) * 2 ** 30;
/** Answers measured (a third more before them, as a warm-up). */
const ANSWERS = 6_000;
const DAY = 86_400_000;
const THIS = fileURLToPath(import.meta.url);

/** One flow, three kinds of waits, chosen by `kind`. */
const MIX = `processId: 2e7c9a4b-3f1d-4c6e-8a5b-9d0f1e2a3b4c
name: Waits for input, a message or a timer
nodes:
  start: { type: startEvent, next: route }
  route: { type: ifElse, condition: "\${kind == 'task'}", then: ask, else: other }
  other: { type: ifElse, condition: "\${kind == 'event'}", then: hear, else: nap }
  ask: { type: inputNode, inputType: textbox, timeout: 1d, timeoutFlow: after, next: after }
  hear: { type: intermediateCatchEvent, eventType: message, messageRef: paid, next: after }
  nap: { type: intermediateCatchEvent, eventType: timer, until: "{dueAt}", next: after }
  after: { type: setVariable, variables: { done: true }, next: end }
  end: { type: endEvent }
`;

/** What the fill wrote: the input waits to answer, an API key, and how long it took. */
interface Filled {
  readonly apiKey: string;
  readonly answerIds: readonly string[];
  readonly overdue: number;
  readonly seconds: number;
  readonly snapshotBytes: number;
  /** The execution segments' bytes after the fill. */
  readonly segmentBytes: number;
  /** Two checkpoints, each after a log line added to another 1 % of the executions: the bytes each wrote, its ms. */
  readonly changes: ReadonlyArray<{ readonly bytes: number; readonly ms: number }>;
}

/**
 * Fills `dataDir` with `n` waiting executions of MIX, in this process, and closes the store with
 * a checkpoint. Input waits are started on a clock set back by up to 1.01 days, the oldest
 * first, so that about 1 % of their 1-day timeouts are past at the daemon's start.
 */
async function fill(dataDir: string, n: number): Promise<Filled> {
  const t0 = performance.now();
  const store = await Store.open<WfxState, WfxRecord>({ dir: dataDir, ...wfxJsonStore() });
  const history = await History.open(join(dataDir, 'history'));
  let backMs = 0;
  const engine = new Engine({ store, history, now: () => new Date(Date.now() - backMs), limits: UNPACED_LIMITS });
  await store.commit({ type: 'organization.created', name: 'default', at: new Date().toISOString() });
  const made = newApiKey({ name: 'bench', organization: null, role: 'admin', at: new Date() });
  await store.commit({ type: 'apiKey.created', key: made.key });
  let processId = '';
  for (const source of [FIVE_NODE_FLOW, MIX]) {
    const v = validateFlowSource(source);
    if (!v.ok) throw new Error('bench flow does not validate');
    ({ processId } = await publishFlow(store, {
      definition: v.flow,
      organization: 'default',
      environment: 'PRODUCTION',
    }));
  }
  const third = Math.floor(n / 3);
  const start = (data: Record<string, unknown>, correlationKey?: string) =>
    engine.start({ processId, organization: 'default', data, ...(correlationKey && { correlationKey }) });
  const now = Date.now();
  const timers = n - 2 * third;
  await inCallers(timers, 500, (i) =>
    start({ kind: 'timer', i, dueAt: new Date(now + ((i + 1) / timers) * 7 * DAY).toISOString() }),
  );
  await inCallers(third, 500, (i) => start({ kind: 'event', i }, `k-${i}`));
  // The input waits in batches, each on a clock set back a little less than the one before.
  const batch = Math.max(1, Math.min(1_000, Math.floor(third / 200)));
  const ids: string[] = [];
  let overdue = 0;
  for (let from = 0; from < third; from += batch) {
    const size = Math.min(batch, third - from);
    backMs = (1 - from / third) * 1.01 * DAY;
    if (backMs > DAY) overdue += size;
    await inCallers(size, 500, async (i) => {
      ids[from + i] = (await start({ kind: 'task', i: from + i })).processInstanceId;
    });
  }
  backMs = 0;
  await engine.close();
  await store.checkpoint();
  // Twice, on other executions: the first may also compact the segments the fill left.
  const changes = [
    await changeOnePercent(store, dataDir, ids, n, 0),
    await changeOnePercent(store, dataDir, ids, n, 1),
  ];
  await store.close();
  await history.close();
  // The newest input waits: the furthest from their timeouts, none of them past it.
  const answerIds = ids.slice(Math.max(overdue, third - Math.round(ANSWERS * 1.5)));
  const snapshotBytes = (await stat(join(dataDir, 'snapshot.json')).catch(() => ({ size: 0 }))).size;
  const segmentBytes = (await filesIn(join(dataDir, 'executions'))).reduce((sum, f) => sum + f.bytes, 0);
  return {
    apiKey: made.apiKey,
    answerIds,
    overdue,
    seconds: (performance.now() - t0) / 1000,
    snapshotBytes,
    segmentBytes,
    changes,
  };
}

/** The files of `dir` and their sizes. */
async function filesIn(dir: string): Promise<Array<{ name: string; bytes: number }>> {
  const names = await readdir(dir).catch(() => [] as string[]);
  return Promise.all(names.map(async (name) => ({ name, bytes: (await stat(join(dir, name))).size })));
}

/**
 * Adds a log line to 1 % of the executions (input waits), checkpoints: the bytes that
 * checkpoint wrote (the new segment files and the snapshot) and how long it took.
 */
async function changeOnePercent(
  store: Store<WfxState, WfxRecord>,
  dataDir: string,
  ids: readonly string[],
  n: number,
  round: number,
): Promise<{ bytes: number; ms: number }> {
  const before = new Set((await filesIn(join(dataDir, 'executions'))).map((f) => f.name));
  const timestamp = new Date().toISOString();
  const count = Math.round(n / 100);
  const records = ids.slice(round * count, (round + 1) * count).map((instanceId): WfxRecord => ({
    type: 'instance.logged',
    instanceId,
    entry: { nodeId: 'ask', nodeName: 'ask', nodeType: 'inputNode', message: 'bench', level: 'INFO', timestamp },
  }));
  for (let i = 0; i < records.length; i += 1_000) await store.commit(...records.slice(i, i + 1_000));
  const t0 = performance.now();
  await store.checkpoint();
  const ms = performance.now() - t0;
  const added = (await filesIn(join(dataDir, 'executions'))).filter((f) => !before.has(f.name));
  const snapshot = (await stat(join(dataDir, 'snapshot.json'))).size;
  return { bytes: snapshot + added.reduce((sum, f) => sum + f.bytes, 0), ms };
}

/** Runs `fill` in a child process with a heap for `n` executions; what it wrote. */
async function fillInChild(dataDir: string, n: number, out: string): Promise<Filled> {
  const heapMiB = Math.max(4096, Math.ceil((n * 8192) / 2 ** 20));
  const child = fork(THIS, ['fill', dataDir, String(n), out], {
    execArgv: [`--max-old-space-size=${heapMiB}`, '--max-semi-space-size=32'],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  if (code !== 0) throw new Error(`the fill exited with ${code}`);
  return JSON.parse(await readFile(out, 'utf8')) as Filled;
}

/** A line of the daemon log (pino JSON): its time and message. */
interface LogLine {
  readonly time: number;
  readonly msg: string;
  readonly level?: number;
  readonly err?: { readonly message?: string };
  /** `engine: recovered`'s count of armed timers. */
  readonly timers?: number;
  /** `store: execution directory opened`: whether the directory image was used, or why not. */
  readonly image?: string;
}

async function daemonLog(dataDir: string): Promise<LogLine[]> {
  const text = await readFile(join(dataDir, 'logs', 'daemon.log'), 'utf8').catch(() => '');
  return text
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as LogLine);
}

/** Kills `pid` (and says so) if its RSS passes MAX_RSS; stop the watch with the returned function. */
function watchRss(pid: number, peak: { bytes: number; killed: boolean }): () => void {
  const timer = setInterval(() => {
    rss(pid).then(
      (bytes) => {
        peak.bytes = Math.max(peak.bytes, bytes);
        if (bytes > MAX_RSS && !peak.killed) {
          peak.killed = true;
          process.kill(pid, 'SIGKILL');
        }
      },
      () => undefined,
    );
  }, 250);
  return () => clearInterval(timer);
}

/** What was measured: the data directory, and the daemon on it (null when it did not start: `startFailure` says why). */
export interface WaitingBenchResult {
  readonly waiting: number;
  readonly overdue: number;
  readonly fillSeconds: number;
  readonly snapshotBytes: number;
  readonly segmentBytes: number;
  readonly changes: ReadonlyArray<{ readonly bytes: number; readonly ms: number }>;
  /** The host's 1-minute load average when the daemon was started (the host is shared). */
  readonly loadAverage: number;
  readonly daemon: DaemonFigures | null;
  readonly startFailure: { readonly ms: number; readonly error: string } | null;
}

/** The figures of the daemon started on the data directory. */
export interface DaemonFigures {
  /** From `wfx daemon start` until it returned (the daemon answers then), and until GET /health gave 200. */
  readonly startMs: number;
  readonly healthMs: number;
  /**
   * From `wfx daemon start` to the log lines `store: recovered` and `engine: recovered` (every
   * timer armed, waiting work resumed), with the timers it counted.
   */
  readonly storeRecoveredMs: number | null;
  readonly engineRecoveredMs: number | null;
  readonly timersArmed: number | null;
  readonly rssBytes: number;
  /**
   * RSS once settled: V8 gives back to the system what the start's parse left only when its
   * memory reducer runs, a while after (SETTLE_MS at most), and how long after the 5 s sample.
   */
  readonly settledRssBytes: number;
  readonly settledAfterMs: number;
  /** Live executions in memory and on disk only, at rest (the daemon's gauges). */
  readonly resident: number;
  readonly cold: number;
  readonly emptyRssBytes: number;
  readonly peakRssBytes: number;
  readonly answers: Load & {
    readonly warmup: number;
    readonly withWarmupP99: number;
    /**
     * The daemon's main-thread CPU per answer, warm-up included, in µs (null off Linux). With 10
     * connections always waiting, an answer waits for the others' turns: about 10 times this is
     * its p50, and the p99 adds the host's stalls to it (decision 078).
     */
    readonly cpuUsPerAnswer: number | null;
  };
  /**
   * The durable neighbour (bench/neighbour.ts: a bare Fastify route and one group-committed
   * O_DSYNC append per request) serving the answers' requests just before them: the floor of a
   * durable answer's latency on this host at the time.
   */
  readonly durableFloor: Load & { readonly cpuUsPerAnswer: number | null };
  readonly neighbour: Load;
  readonly starts: Load;
  /** Checkpoints the daemon logged from its start to the end of the loads. */
  readonly checkpoints: number;
  /**
   * Stopped after the loads and started again on its directory image (decision 076): until
   * `wfx daemon start` returned, and until `engine: recovered`.
   */
  readonly restart: Restart;
  /** Whether the first start used the image the fill's close left (`used`), or why not. */
  readonly image: string;
  /**
   * Started once more with the image removed first (a directory of a version before it, or one
   * whose image a compaction outdated since): every index loaded, a new image written.
   */
  readonly withoutImage: Restart;
}

/** A start again on the same directory: until `wfx daemon start` returned, until `engine: recovered`. */
interface Restart {
  readonly startMs: number;
  readonly engineRecoveredMs: number | null;
  readonly image: string;
}

export async function runWaitingBench(n = WAITING): Promise<WaitingBenchResult> {
  const dir = await mkdtemp(join(tmpdir(), 'wfx-bench-waiting-'));
  const daemons: BenchDaemon[] = [];
  let neighbourProc: Awaited<ReturnType<typeof startNeighbour>> | null = null;
  let unwatch = () => {};
  try {
    const empty = await startBenchDaemon(join(dir, 'empty'));
    daemons.push(empty);
    await new Promise((r) => setTimeout(r, 1000));
    const emptyRssBytes = await rss(empty.pid);
    await empty.stop();

    const dataDir = join(dir, 'full');
    const filled = await fillInChild(dataDir, n, join(dir, 'filled.json'));
    collectGarbage();
    const loadAverage = loadavg()[0]!;
    const base = {
      waiting: n,
      overdue: filled.overdue,
      fillSeconds: filled.seconds,
      snapshotBytes: filled.snapshotBytes,
      segmentBytes: filled.segmentBytes,
      changes: filled.changes,
      loadAverage,
    };
    const t0 = performance.now();
    const wallT0 = Date.now();
    let d: BenchDaemon;
    try {
      d = await startBenchDaemon(dataDir, [...UNPACED, ...(CACHE === undefined ? [] : ['--execution-cache', CACHE])]);
    } catch (err) {
      // Today's design has limits a large directory passes: what stopped the start is the figure.
      const failedMs = performance.now() - t0;
      const failed = (await daemonLog(dataDir)).filter((l) => (l.level ?? 0) >= 50).map((l) => l.err?.message ?? l.msg);
      const error = failed[0] ?? (err as Error).message.split('\n').slice(0, 3).join(' ');
      return { ...base, daemon: null, startFailure: { ms: failedMs, error } };
    }
    const startMs = performance.now() - t0;
    daemons.push(d);
    const peak = { bytes: 0, killed: false };
    unwatch = watchRss(d.pid, peak);
    const health = await fetch(`${d.url}/health`);
    const healthMs = performance.now() - t0;
    if (health.status !== 200) throw new Error(`GET /health answered ${health.status}`);
    // At rest: what the start left, with the overdue timeouts fired and a few seconds to settle.
    await new Promise((r) => setTimeout(r, 5000));
    const rssBytes = await rss(d.pid);
    const settled = await settle(d.pid, rssBytes);
    const resident = await gauge(d.url, filled.apiKey, 'wfx_executions_resident');
    const cold = await gauge(d.url, filled.apiKey, 'wfx_executions_cold');
    // Read now: the daemon writes its log lines in batches.
    const log = await daemonLog(dataDir);
    const at = (msg: string) => {
      const line = log.find((l) => l.msg === msg);
      return line ? line.time - wallT0 : null;
    };

    const key = filled.apiKey;
    const bodies = filled.answerIds.map((id) =>
      JSON.stringify({ processInstanceId: id, nodeId: 'ask', action: 'COMPLETE', data: { inputValue: 'ok' } }),
    );
    const warm = Math.floor(bodies.length / 3);
    // The floor of a durable answer's latency on this host now: the durable neighbour serves the
    // same requests just before the answers (its first third a warm-up too).
    neighbourProc = await startNeighbour(join(dir, 'neighbour'));
    const { body: _none, ...floorTarget } = post(`${neighbourProc.url}/durable`, null, {}, 10);
    const floorCpuBefore = await mainThreadCpuMs(neighbourProc.child.pid!);
    const floorLoad = figures((await runLoad({ ...floorTarget, bodies, warmupCount: warm })).measured);
    const floor = {
      ...floorLoad,
      cpuUsPerAnswer: perAnswer(floorCpuBefore, await mainThreadCpuMs(neighbourProc.child.pid!), bodies.length),
    };
    const { body: _one, ...target } = post(`${d.url}/process/task`, key, {}, 10);
    const cpuBefore = await mainThreadCpuMs(d.pid);
    const { warmup, measured } = await runLoad({ ...target, bodies, warmupCount: warm });
    const cpuAfter = await mainThreadCpuMs(d.pid);
    const all = Float64Array.from([...(warmup?.latencies ?? []), ...measured.latencies]).sort();
    const answers = {
      ...figures(measured),
      failed: measured.failed + (warmup?.failed ?? 0),
      warmup: warm,
      withWarmupP99: percentile(all, 99),
      cpuUsPerAnswer: perAnswer(cpuBefore, cpuAfter, bodies.length),
    };

    const body = { processId: '7f3e2d1c-0b9a-4876-9543-210fedcba987', data: { orderId: 1, amount: 150 } };
    const [neighbour, starts] = await interleavedLoad(
      post(`${neighbourProc.url}/process/start`, null, body, 50),
      post(`${d.url}/process/start`, key, body, 50),
    );
    if (peak.killed) throw new Error(`the daemon's RSS passed ${MAX_RSS / 2 ** 30} GiB: killed`);
    const checkpoints = (await daemonLog(dataDir)).filter((l) => l.msg === 'store: checkpoint written').length;
    const restart = await restartOn(dataDir, d);
    daemons.splice(daemons.indexOf(d), 1);
    await rm(join(dataDir, 'executions', IMAGE_NAME), { force: true });
    const withoutImage = await restartOn(dataDir, null);
    const daemon: DaemonFigures = {
      startMs,
      healthMs,
      storeRecoveredMs: at('store: recovered'),
      engineRecoveredMs: at('engine: recovered'),
      timersArmed: log.find((l) => l.msg === 'engine: recovered')?.timers ?? null,
      rssBytes,
      settledRssBytes: settled.bytes,
      settledAfterMs: settled.afterMs,
      resident,
      cold,
      emptyRssBytes,
      peakRssBytes: peak.bytes,
      answers,
      durableFloor: floor,
      neighbour,
      starts,
      checkpoints,
      restart,
      image: log.find((l) => l.msg === 'store: execution directory opened')?.image ?? '?',
      withoutImage,
    };
    return { ...base, daemon, startFailure: null };
  } finally {
    unwatch();
    neighbourProc?.child.kill('SIGTERM');
    for (const d of daemons) await d.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

/** Stops `d` (if any) and starts a daemon on `dataDir` again, then stops that one: how long its start took. */
async function restartOn(dataDir: string, d: BenchDaemon | null): Promise<Restart> {
  await d?.stop();
  const t0 = performance.now();
  const wallT0 = Date.now();
  const again = await startBenchDaemon(dataDir, [
    ...UNPACED,
    ...(CACHE === undefined ? [] : ['--execution-cache', CACHE]),
  ]);
  const startMs = performance.now() - t0;
  let log: LogLine[] = [];
  try {
    // Bounded: the log is written in batches, `engine: recovered` follows the start by moments.
    for (let i = 0; i < 100 && !log.some((l) => l.time >= wallT0 && l.msg === 'engine: recovered'); i++) {
      await new Promise((r) => setTimeout(r, 100));
      log = await daemonLog(dataDir);
    }
  } finally {
    await again.stop();
  }
  const since = log.filter((l) => l.time >= wallT0);
  const recovered = since.find((l) => l.msg === 'engine: recovered');
  const opened = since.find((l) => l.msg === 'store: execution directory opened');
  return { startMs, engineRecoveredMs: recovered ? recovered.time - wallT0 : null, image: opened?.image ?? '?' };
}

/** Gauge `name` of the daemon at `url` (NaN when absent). */
async function gauge(url: string, key: string, name: string): Promise<number> {
  const text = await (await fetch(`${url}/metrics`, { headers: { 'x-api-key': key } })).text();
  return Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(text)?.[1] ?? NaN);
}

/** µs of CPU per answer from two readings in ms (mainThreadCpuMs), or null without them. */
function perAnswer(beforeMs: number | null, afterMs: number | null, answers: number): number | null {
  return beforeMs === null || afterMs === null ? null : ((afterMs - beforeMs) * 1000) / answers;
}

const fmt = (n: number) => Math.round(n).toLocaleString('en-US');
const ms = (n: number | null) => (n === null ? 'not logged' : `${n.toFixed(n < 10 ? 2 : 0)} ms`);
const cpu = (us: number | null) => (us === null ? 'not measured' : `${fmt(us)} µs an answer`);
const mark = (ok: boolean) => (ok ? 'met' : '**missed**');

export function formatWaitingBench(r: WaitingBenchResult): string {
  const rows = [
    `| data directory: ${fmt(r.waiting)} waiting executions (a third at an input node with a 1-day timeout, ${fmt(r.overdue)} of them past it; a third for a message, each under its own correlation key; a third on a timer due over the next week), written in-process and checkpointed | snapshot ${(r.snapshotBytes / 2 ** 20).toFixed(2)} MiB, execution segments ${fmt(r.segmentBytes / 2 ** 20)} MiB; checkpoints after 1 % of the executions changed, twice, wrote ${r.changes.map((c) => `${(c.bytes / 2 ** 20).toFixed(1)} MiB in ${fmt(c.ms)} ms`).join(', then ')}; filled in ${r.fillSeconds.toFixed(0)} s; host load average ${r.loadAverage.toFixed(1)} at the start | | |`,
  ];
  const d = r.daemon;
  if (d === null) {
    const f = r.startFailure!;
    rows.push(
      `| \`wfx daemon start\` | **did not start** (failed after ${ms(f.ms)}: ${f.error.replaceAll('|', '\\|')}) | ≤ 1,000 ms | **missed** |`,
    );
  } else {
    const perWaiting = d.settledRssBytes / r.waiting;
    const overEmpty = (d.settledRssBytes - d.emptyRssBytes) / r.waiting;
    const a = d.answers;
    const f = d.durableFloor;
    const ratio = (l: Load) => `${Math.round((l.perSecond / d.neighbour.perSecond) * 100)} %`;
    rows.push(
      `| first start on the directory the fill wrote and closed (directory image: ${d.image}): \`wfx daemon start\` until it returns (the API answers) | **${ms(d.startMs)}** (GET /health 200 at ${ms(d.healthMs)}) | ≤ 1,000 ms | ${mark(d.startMs <= 1000)} |`,
      `| restart: \`wfx daemon stop\` after the loads below, then \`wfx daemon start\` until it returns (directory image: ${d.restart.image}) | **${ms(d.restart.startMs)}** (every timer armed at ${ms(d.restart.engineRecoveredMs)}) | ≤ 1,000 ms | ${mark(d.restart.startMs <= 1000)} |`,
      `| start with the directory image removed (a directory of a version before it, or a copy made without it; directory image: ${d.withoutImage.image}): once, then it has one | ${ms(d.withoutImage.startMs)} (every timer armed at ${ms(d.withoutImage.engineRecoveredMs)}) | | |`,
      `| every timer armed: \`wfx daemon start\` to the log line \`engine: recovered\` (${d.timersArmed ?? '?'} timers; \`store: recovered\` at ${ms(d.storeRecoveredMs)}) | **${ms(d.engineRecoveredMs)}** | ≤ 2,000 ms | ${mark(d.engineRecoveredMs !== null && d.engineRecoveredMs <= 2000)} |`,
      `| RSS at rest, settled (${ms(d.settledAfterMs)} after the 5 s sample) ÷ waiting executions | **${fmt(perWaiting)} B** (RSS ${fmt(d.settledRssBytes / 2 ** 20)} MiB; ${fmt(overEmpty)} B over an empty daemon's ${fmt(d.emptyRssBytes / 2 ** 20)} MiB; 5 s after the start ${fmt(d.rssBytes / 2 ** 20)} MiB; peak seen ${fmt(d.peakRssBytes / 2 ** 20)} MiB; ${fmt(d.resident)} executions in memory, ${fmt(d.cold)} on disk only) | ≤ 300 B | ${mark(perWaiting <= 300)} |`,
      `| durable neighbour: the bare route plus one durable append of the body it parsed (group commit, O_DSYNC: the writes of wfx's journal), 10 connections, the requests of the next row, just before it | ${fmt(f.perSecond)}/s, p50 ${ms(f.p50)}, p99 ${ms(f.p99)}, ${f.failed} failed; main-thread CPU ${cpu(f.cpuUsPerAnswer)} | | |`,
      `| POST /process/task to input waits untouched since the start, 10 connections, ${fmt(a.total)} after a warm-up of ${fmt(a.warmup)} (${d.cold > 0 ? 'read back from disk when cold' : 'all in memory'}) | ${fmt(a.perSecond)}/s, p50 ${ms(a.p50)}, **p99 ${ms(a.p99)}** (${(a.p99 / f.p99).toFixed(2)} × the durable neighbour's; ${ms(a.withWarmupP99)} counting the warm-up), ${a.failed} failed; main-thread CPU ${cpu(a.cpuUsPerAnswer)} | p99 ≤ 5 ms | ${mark(a.p99 <= 5)} |`,
      `| neighbour: bare Fastify route, POST /process/start body, 50 connections (in turns with the next row: ${SLICES} slices of ${SECONDS / SLICES} s each) | ${fmt(d.neighbour.perSecond)} req/s, p99 ${ms(d.neighbour.p99)} | | |`,
      `| POST /process/start, 5-node flow, 50 connections, beside ${fmt(r.waiting)} waiting | **${fmt(d.starts.perSecond)}/s** (${ratio(d.starts)} of the neighbour), p99 ${ms(d.starts.p99)}, ${d.starts.failed} failed; ${d.checkpoints} checkpoints written from the start to here | no worse than today's (step 1 of decision 068) | |`,
    );
  }
  return ['| figure | value | target (#60) | |', '|---|---|---|---|', ...rows].join('\n');
}

if (process.argv[2] === 'fill') {
  const [, , , dataDir, n, out] = process.argv;
  await writeFile(out!, JSON.stringify(await fill(dataDir!, Number(n))));
} else if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  console.log(machineLine({ commit: true }));
  const text = formatWaitingBench(await runWaitingBench());
  console.log(text);
  await writeSection('waiting', `${machineLine()}\n\n${text}`);
  console.log('\nwritten to docs/benchmarks/');
}
