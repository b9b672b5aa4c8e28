/**
 * `npm run bench:compare [REV]`: this working tree's build against REV's, side by side in one
 * run on this host, the two alternated so that both see the same host as its load drifts. The
 * core figures of docs/performance.md's budget: durable starts of the 5-node flow (start to
 * completion) at 1, 10 and 50 connections, in turns slice by slice; task and message answers at
 * 10 connections; a restart over waiting executions, after a clean stop and after a SIGKILL.
 * Each figure is given as both builds' medians over the rounds and the ratio of this tree's to
 * REV's, round by round (median, and its spread).
 *
 * REV defaults to main's commit where this branch left it (`git merge-base HEAD main`), or on
 * main itself to HEAD when the working tree has changes and to HEAD~1 when it has none. It is
 * built in a worktree under the OS's temp dir, kept for the next run of the same commit; its
 * node_modules is this tree's when its lockfile is the same, else installed (`npm ci`).
 * BENCH_ROUNDS (default 3), BENCH_SECONDS (a load's length, default 8), BENCH_ANSWERS (the
 * executions one answer load answers, default 9,000) and BENCH_WAITING (the restarts' waiting
 * executions, default 20,000) set the run's length; BENCH_FIGURES (starts, answers, restarts,
 * comma-separated) measures some of the figures only.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { WfxClient } from '../src/client/client.js';
import { inCallers } from './callers.js';
import { UNPACED } from './daemon.js';
import { FIVE_NODE_FLOW, WAITS } from './engine.js';
import { figures, mainThreadCpuMs, percentile, post, runLoad, SECONDS, SLICES, type Load } from './http.js';
import { machineLine } from './report.js';

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const WAITING = Number(process.env.BENCH_WAITING ?? 20_000);
/** Executions answered in one answer load, the first third a warm-up (BENCH_ANSWERS). */
const ANSWERS = Number(process.env.BENCH_ANSWERS ?? 9_000);
/** Which figures to measure (BENCH_FIGURES, comma-separated): starts, answers, restarts; default all. */
const FIGURES = new Set((process.env.BENCH_FIGURES ?? 'starts,answers,restarts').split(','));
const START_BODY = { processId: '7f3e2d1c-0b9a-4876-9543-210fedcba987', data: { orderId: 1, amount: 150 } };
const WAITS_ID = '1d2c3b4a-5e6f-4a7b-8c9d-0e1f2a3b4c5d';

/** One build: where its `bin/wfx.js` is, and what its daemons are started with. */
interface Build {
  readonly name: string;
  readonly wfx: string;
  readonly args: readonly string[];
}

/** A daemon of a build on a data directory of its own. */
interface Daemon {
  readonly url: string;
  readonly key: string;
  readonly pid: number;
  readonly dataDir: string;
}

/** One figure's value per round, of each build; `higher`: whether more is better (a rate). */
interface Figure {
  readonly what: string;
  readonly unit: string;
  readonly higher: boolean;
  readonly base: number[];
  readonly head: number[];
}

const git = async (...args: string[]) => (await run('git', args, { cwd: ROOT })).stdout.trim();

/** REV as the caller gave it, or the default (see the top of this file), as a full commit. */
async function baseCommit(asked: string | undefined): Promise<string> {
  if (asked !== undefined) return git('rev-parse', '--verify', `${asked}^{commit}`);
  const branch = await git('rev-parse', '--abbrev-ref', 'HEAD');
  if (branch !== 'main') return git('merge-base', 'HEAD', 'main');
  const dirty = (await git('status', '--porcelain', '--untracked-files=no')) !== '';
  return git('rev-parse', dirty ? 'HEAD' : 'HEAD~1');
}

/** REV's build, in its worktree (made and built if it is not there yet). */
async function buildOf(commit: string): Promise<Build> {
  const dir = join(tmpdir(), `wfx-compare-${commit.slice(0, 12)}`);
  const wfx = join(dir, 'bin', 'wfx.js');
  if (!existsSync(join(dir, 'dist', 'src', 'cli', 'main.js'))) {
    if (existsSync(dir)) await git('worktree', 'remove', '--force', dir).catch(() => rm(dir, { recursive: true }));
    console.error(`building ${commit.slice(0, 12)} in ${dir} ...`);
    await git('worktree', 'add', '--detach', dir, commit);
    const [ours, theirs] = await Promise.all([
      readFile(join(ROOT, 'package-lock.json'), 'utf8'),
      readFile(join(dir, 'package-lock.json'), 'utf8'),
    ]);
    if (ours === theirs) await symlink(join(ROOT, 'node_modules'), join(dir, 'node_modules'), 'dir');
    else await run('npm', ['ci', '--no-audit', '--no-fund', '--ignore-scripts'], { cwd: dir, maxBuffer: 64 << 20 });
    await run(process.execPath, ['scripts/build.mjs'], { cwd: dir, maxBuffer: 64 << 20 });
  }
  return { name: commit.slice(0, 8), wfx, args: await unpaced(wfx) };
}

/** UNPACED for a build that has the org-starts-per-second limit, else nothing (it paces nothing). */
async function unpaced(wfx: string): Promise<readonly string[]> {
  const { stdout } = await run(process.execPath, [wfx, 'daemon', 'start', '--help']);
  return stdout.includes('org-starts-per-second') ? UNPACED : [];
}

/** Starts a daemon of `build` on `dataDir` (its own, new or kept) and publishes the bench's flows; ms `wfx daemon start` took. */
async function startDaemon(build: Build, dataDir: string): Promise<{ daemon: Daemon; ms: number }> {
  const t0 = performance.now();
  const { stdout } = await run(process.execPath, [
    build.wfx,
    'daemon',
    'start',
    '--port',
    '0',
    '--data-dir',
    dataDir,
    '--json',
    ...build.args,
  ]);
  const ms = performance.now() - t0;
  const { url, pid } = JSON.parse(stdout) as { url: string; pid: number };
  const key = (await readFile(join(dataDir, 'bootstrap.key'), 'utf8')).trim();
  return { daemon: { url, key, pid, dataDir }, ms };
}

async function stopDaemon(build: Build, d: Daemon): Promise<void> {
  await run(process.execPath, [build.wfx, 'daemon', 'stop', '--data-dir', d.dataDir]).catch(() => undefined);
}

/** A fresh daemon of `build` with the bench's two flows published. */
async function freshDaemon(build: Build, dir: string, name: string): Promise<Daemon> {
  const { daemon } = await startDaemon(build, join(dir, name));
  const client = clientOf(daemon);
  await client.flows.publish({ source: FIVE_NODE_FLOW });
  await client.flows.publish({ source: WAITS });
  return daemon;
}

const clientOf = (d: Daemon) => new WfxClient({ url: d.url, apiKey: d.key, credentialSource: 'bench' });

/** Starts `n` executions of WAITS waiting for `kind` (50 at a time), correlation keys `k-<from + i>`; their ids. */
async function waiting(d: Daemon, n: number, kind: 'task' | 'event', from = 0): Promise<string[]> {
  const client = clientOf(d);
  const ids: string[] = [];
  await inCallers(n, 50, async (i) => {
    ids[i] = (
      await client.process.startAny({ processId: WAITS_ID, data: { kind }, correlationKey: `k-${from + i}` })
    ).processInstanceId;
  });
  return ids;
}

/** Answers `ids` once each at 10 connections (tasks or messages), the first third as a warm-up. */
async function answers(d: Daemon, ids: readonly string[], kind: 'task' | 'event', from: number): Promise<Load> {
  const bodies = ids.map((id, i) =>
    JSON.stringify(
      kind === 'task'
        ? { processInstanceId: id, nodeId: 'ask', action: 'COMPLETE', data: { inputValue: 'ok' } }
        : { eventType: 'paid', correlationKey: `k-${from + i}`, data: { paid: true } },
    ),
  );
  const { body: _one, ...target } = post(`${d.url}/process/${kind}`, d.key, {}, 10);
  const { measured } = await runLoad({ ...target, bodies, warmupCount: Math.floor(ids.length / 3) });
  return figures(measured);
}

/** The daemon's main-thread CPU so far, in ms (Linux; 0 elsewhere, which makes the CPU rows say nothing). */
async function cpuOf(d: Daemon): Promise<number> {
  return (await mainThreadCpuMs(d.pid)) ?? 0;
}

/** Waits until the daemon at `url` answers /health (a start after a SIGKILL returns once it listens). */
async function answering(url: string): Promise<void> {
  for (let i = 0; i < 600; i++) {
    const ok = await fetch(`${url}/health`).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`${url} never answered`);
}

/** The median of `xs`. */
function median(xs: readonly number[]): number {
  const s = Float64Array.from(xs).sort();
  return s.length % 2 === 1 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
}

/** Runs the comparison: each figure of each round, the builds in turns (the first alternating by round). */
export async function runCompare(baseBuild: Build, headBuild: Build): Promise<Figure[]> {
  const figure = (what: string, unit: string, higher: boolean): Figure => ({ what, unit, higher, base: [], head: [] });
  const starts = [1, 10, 50].map((c) => ({
    c,
    rate: figure(`starts/s at ${c} connection${c === 1 ? '' : 's'} (5-node flow, start to completion)`, '/s', true),
    p99: figure(`start p99 at ${c} connection${c === 1 ? '' : 's'}`, 'ms', false),
    cpu: figure(`main-thread CPU a start at ${c} connection${c === 1 ? '' : 's'}`, 'µs', false),
  }));
  const answerFigs = (['task', 'event'] as const).map((kind) => ({
    kind,
    rate: figure(`${kind === 'task' ? 'task' : 'message'} answers/s at 10 connections`, '/s', true),
    p99: figure(`${kind === 'task' ? 'task' : 'message'} answer p99 at 10 connections`, 'ms', false),
    cpu: figure(`main-thread CPU a ${kind === 'task' ? 'task' : 'message'} answer`, 'µs', false),
  }));
  const restartClean = figure(`restart over ${WAITING.toLocaleString('en')} waiting, after a stop`, 'ms', false);
  const restartKill = figure(
    `restart over ${WAITING.toLocaleString('en')} waiting, after a SIGKILL with ${(WAITING / 2).toLocaleString('en')} since the start`,
    'ms',
    false,
  );
  const dir = await mkdtemp(join(tmpdir(), 'wfx-bench-compare-'));
  const started: Array<[Build, Daemon]> = [];
  try {
    for (let round = 0; round < ROUNDS; round++) {
      const order: Array<['base' | 'head', Build]> = [
        ['base', baseBuild],
        ['head', headBuild],
      ];
      if (round % 2 === 1) order.reverse();
      console.error(`round ${round + 1} of ${ROUNDS}: ${order.map(([, b]) => b.name).join(' first, then ')}`);
      const daemons = new Map<'base' | 'head', Daemon>();
      for (const [side, build] of order) {
        const d = await freshDaemon(build, dir, `${side}-${round}`);
        started.push([build, d]);
        daemons.set(side, d);
      }
      const [first, second] = order.map(([side]) => side) as ['base' | 'head', 'base' | 'head'];
      for (const s of FIGURES.has('starts') ? starts : []) {
        const target = (side: 'base' | 'head') => {
          const d = daemons.get(side)!;
          return post(`${d.url}/process/start`, d.key, START_BODY, s.c);
        };
        const cpuBefore = await Promise.all([first, second].map((side) => cpuOf(daemons.get(side)!)));
        const outcome = await runLoad({
          interleave: [target(first), target(second)],
          slices: SLICES,
          sliceSeconds: SECONDS / SLICES,
          warmupSeconds: 1,
        });
        const cpuAfter = await Promise.all([first, second].map((side) => cpuOf(daemons.get(side)!)));
        for (const [i, side] of [first, second].entries()) {
          const { warmup, measured } = outcome[i]!;
          const load = figures(measured);
          s.rate[side].push(load.perSecond);
          s.p99[side].push(load.p99);
          // The CPU of every request the daemon served in that time, the warm-up's too.
          const served = measured.total + measured.failed + (warmup ? warmup.total + warmup.failed : 0);
          s.cpu[side].push(((cpuAfter[i]! - cpuBefore[i]!) * 1000) / Math.max(1, served));
        }
      }
      for (const f of FIGURES.has('answers') ? answerFigs : [])
        for (const [side] of order) {
          const d = daemons.get(side)!;
          const from = round * ANSWERS;
          const ids = await waiting(d, ANSWERS, f.kind, from);
          const before = await cpuOf(d);
          const load = await answers(d, ids, f.kind, from);
          f.rate[side].push(load.perSecond);
          f.p99[side].push(load.p99);
          f.cpu[side].push((((await cpuOf(d)) - before) * 1000) / ids.length);
        }
      for (const [side, build] of FIGURES.has('restarts') ? order : []) {
        const d = daemons.get(side)!;
        await waiting(d, WAITING, 'task', 1_000_000);
        await stopDaemon(build, d);
        const clean = await startDaemon(build, d.dataDir);
        restartClean[side].push(clean.ms);
        // Half as many again since that start (no checkpoint since), then killed.
        await waiting(clean.daemon, WAITING / 2, 'task', 2_000_000);
        process.kill(clean.daemon.pid, 'SIGKILL');
        const t0 = performance.now();
        const { daemon: back } = await startDaemon(build, d.dataDir);
        await answering(back.url);
        restartKill[side].push(performance.now() - t0);
        await stopDaemon(build, back);
      }
      for (const [side, build] of order) await stopDaemon(build, daemons.get(side)!);
    }
  } finally {
    for (const [build, d] of started) await stopDaemon(build, d);
    await rm(dir, { recursive: true, force: true });
  }
  return [
    ...starts.flatMap((s) => [s.rate, s.p99, s.cpu]),
    ...answerFigs.flatMap((f) => [f.rate, f.p99, f.cpu]),
    restartClean,
    restartKill,
  ].filter((f) => f.base.length > 0);
}

/** The budget of docs/performance.md: a core figure worse than this fraction of REV's needs a decision record. */
export const BUDGET = 0.95;

/** The comparison as a table: each figure's medians, the ratio round by round, and whether it keeps the budget. */
export function formatCompare(base: Build, head: Build, figs: readonly Figure[]): string {
  const fmt = (n: number, unit: string) =>
    unit === 'ms'
      ? `${n.toFixed(n < 10 ? 2 : 0)} ms`
      : unit === 'µs'
        ? `${n.toFixed(1)} µs`
        : `${Math.round(n).toLocaleString('en')}${unit}`;
  const rows = figs.map((f) => {
    // As "this build is x of REV's": for a time, REV's over this one's, so that under 1 is worse either way.
    const ratios = f.base.map((b, i) => (f.higher ? f.head[i]! / b : b / f.head[i]!));
    const r = median(ratios);
    const sorted = Float64Array.from(ratios).sort();
    const spread = `${percentile(sorted, 0).toFixed(3)}-${percentile(sorted, 100).toFixed(3)}`;
    const verdict = r >= BUDGET ? 'kept' : `**under ${BUDGET}**`;
    return `| ${f.what} | ${fmt(median(f.base), f.unit)} | ${fmt(median(f.head), f.unit)} | ${r.toFixed(3)} (${spread}) | ${verdict} |`;
  });
  return [
    `This working tree against ${base.name}, ${ROUNDS} rounds, the builds alternated (each round's first alternating); loads of ${SECONDS} s (starts in turns, slice by slice). Medians over the rounds; the ratio is this tree's over ${base.name}'s (for a time, ${base.name}'s over this tree's), so under 1 is worse, and its spread over the rounds.`,
    '',
    `| figure | ${base.name} | this tree | ratio (spread) | budget ${BUDGET} |`,
    '|---|---|---|---|---|',
    ...rows,
  ].join('\n');
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const base = await buildOf(await baseCommit(process.argv[2]));
  const headWfx = join(ROOT, 'bin', 'wfx.js');
  const head: Build = { name: 'this tree', wfx: headWfx, args: await unpaced(headWfx) };
  console.log(machineLine({ commit: true }));
  // Warm the page cache and V8's code cache of both builds before anything is timed.
  for (const b of [base, head]) await run(process.execPath, [b.wfx, '--version']).catch(() => undefined);
  const figs = await runCompare(base, head);
  console.log(formatCompare(base, head, figs));
}
