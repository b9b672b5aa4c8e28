/**
 * Script sandbox benchmark (`npm run bench:scripts`): how long organization B's script takes
 * while organization A's `while (true) {}` scripts hold every worker of the pool (B is lent a
 * worker beyond the pool), beside the same script on an idle pool; writes its section of
 * docs/benchmarks/scripts.md.
 */
import { pathToFileURL } from 'node:url';
import { createScriptRunner, type ScriptRun } from '../src/daemon/engine/work/script.js';
import { machineLine, writeSection } from './report.js';

const RUNS = 20;
const TRIVIAL = 'return 1';
const LOOP = 'let s = 0; for (let k = 0; k < 1e6; k++) s += k; return s';

export interface ScriptsBenchCase {
  readonly p50Ms: number;
  readonly p90Ms: number;
}

export interface ScriptsBenchResult {
  readonly idle: { readonly trivial: ScriptsBenchCase; readonly loop: ScriptsBenchCase };
  readonly busy: { readonly trivial: ScriptsBenchCase; readonly loop: ScriptsBenchCase };
}

const run = (organization: string, script: string): ScriptRun => ({
  script,
  vars: {},
  timeoutMs: 60_000,
  organization,
  execution: organization,
});

async function measure(runOne: () => Promise<unknown>): Promise<ScriptsBenchCase> {
  const ms: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const started = performance.now();
    await runOne();
    ms.push(performance.now() - started);
  }
  ms.sort((a, b) => a - b);
  return { p50Ms: ms[Math.floor(RUNS / 2)]!, p90Ms: ms[Math.floor(RUNS * 0.9)]! };
}

export async function runScriptsBench(): Promise<ScriptsBenchResult> {
  const pool = createScriptRunner({ size: 2 });
  try {
    // Both workers started and warm.
    await Promise.all([pool.run(run('A', TRIVIAL)), pool.run(run('A', TRIVIAL))]);
    const idle = {
      trivial: await measure(() => pool.run(run('B', TRIVIAL))),
      loop: await measure(() => pool.run(run('B', LOOP))),
    };
    const stop = new AbortController();
    const endless = [1, 2].map(() => pool.run(run('A', 'while (true) {}'), stop.signal));
    const busy = {
      trivial: await measure(() => pool.run(run('B', TRIVIAL))),
      loop: await measure(() => pool.run(run('B', LOOP))),
    };
    stop.abort();
    await Promise.all(endless);
    return { idle, busy };
  } finally {
    await pool.close();
  }
}

export function formatScriptsBench(r: ScriptsBenchResult): string {
  const ms = (c: ScriptsBenchCase) => `${c.p50Ms.toFixed(1)} / ${c.p90Ms.toFixed(1)} ms`;
  return [
    `| organization B's script, ${RUNS} runs one after another, p50 / p90 | pool idle | A's two endless scripts hold the pool |`,
    '|---|---|---|',
    `| \`${TRIVIAL}\` | ${ms(r.idle.trivial)} | ${ms(r.busy.trivial)} |`,
    `| 10^6 additions | ${ms(r.idle.loop)} | ${ms(r.busy.loop)} |`,
  ].join('\n');
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const table = formatScriptsBench(await runScriptsBench());
  console.log(table);
  await writeSection('scripts', `${machineLine()}\n\n${table}`);
  console.log('\nwritten to docs/benchmarks/');
}
