/**
 * The list of executions (part of `npm run bench`): a real daemon process whose store (the JSON
 * store, then PostgreSQL where it is installed) holds 100,000 executions, nearly all in history
 * over five day buckets, and GET /process/instances asked over HTTP from this process, one
 * request at a time, as the console's executions page asks it: the first page with no filter,
 * with a filter only a few match, and a page deep in the list by its cursor; then GET
 * /process/failures, the failed ones grouped, as `wfx instances failures` asks it. The executions are
 * written beforehand by the engine in this process (a flow that ends, or fails, in its first
 * step goes to history at once), on a clock that spreads them over the days; the daemon then
 * starts on that store.
 */
import { startBenchDaemon, UNPACED_LIMITS } from './daemon.js';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { newApiKey } from '../src/daemon/auth/api-keys.js';
import { Engine } from '../src/daemon/engine/engine.js';
import { publishFlow } from '../src/daemon/flows/publish.js';
import { WFX_STORE, type WfxRecord } from '../src/daemon/state/records.js';
import type { WfxState } from '../src/daemon/state/state.js';
import { History } from '../src/daemon/store/history.js';
import { SEGMENTS_AT_REST } from '../src/daemon/at-rest/segments/execution-segments.js';
import { Store } from '../src/daemon/store/store.js';
import type { HistoryStore } from '../src/daemon/store/history-store.js';
import { PgStore } from '../src/daemon/store/pg/pg-store.js';
import type { RecordStore } from '../src/daemon/store/record-store.js';
import { WFX_COMMONS } from '../src/daemon/state/commons.js';
import { ordersFlow } from '../test/helpers/engine.js';
import { HAVE_POSTGRES, startCluster } from '../test/helpers/postgres.js';
import { validateFlowSource } from '../src/shared/flow/validate.js';
import { inCallers } from './callers.js';
import { machineLine, writeSection } from './report.js';

/** Executions in the store (BENCH_EXECUTIONS overrides): DAYS days of them (BENCH_DAYS), WAITING of the last day's live. */
const EXECUTIONS = Number(process.env.BENCH_EXECUTIONS ?? 100_000);
const DAYS = Number(process.env.BENCH_DAYS ?? 5);
const WAITING = 1_000;
/** One execution in this many fails (NO_BRANCH_MATCHED): the selective filter's few (BENCH_FAIL_EVERY overrides). */
const FAIL_EVERY = Number(process.env.BENCH_FAIL_EVERY ?? 5_000);
/** Requests of each case after its first. */
const REPEAT = Number(process.env.BENCH_REPEAT ?? 50);
const DAY_MS = 86_400_000;

const FLOW = ordersFlow('5f0c1d2e-3a4b-4c5d-8e6f-708192a3b4c5');

/** The data directory made: its executions' ids (newest first), its key, how long it took. */
export interface Seeded {
  readonly ids: string[];
  readonly apiKey: string;
  readonly seconds: number;
  readonly failed: number;
}

/** A store and its history to fill, as a daemon will open them. */
export type Opened = { readonly store: RecordStore<WfxState, WfxRecord>; readonly history: HistoryStore };

/** The JSON store of `dataDir`. */
export const filesIn = (dataDir: string) => async (): Promise<Opened> => ({
  store: await Store.open<WfxState, WfxRecord>({ dir: dataDir, ...WFX_STORE, segments: SEGMENTS_AT_REST }),
  history: await History.open(join(dataDir, 'history')),
});

/**
 * Fills the store `open` opens with EXECUTIONS executions over DAYS days ending today, through
 * the engine, 200 starts at a time, the clock moved on before each start so that a day's ids
 * spread over it.
 */
export async function seedExecutions(open: () => Promise<Opened>): Promise<Seeded> {
  const t0 = performance.now();
  const { store, history } = await open();
  const today = Date.now() - (Date.now() % DAY_MS);
  let clock = today - (DAYS - 1) * DAY_MS;
  const engine = new Engine({ store, history, now: () => new Date(clock), limits: UNPACED_LIMITS });
  const at = new Date(clock).toISOString();
  await store.commit({ type: 'organization.created', name: 'default', at });
  const made = newApiKey({ name: 'console', organization: 'default', role: 'viewer', at: new Date(clock) });
  await store.commit({ type: 'apiKey.created', key: made.key });
  const v = validateFlowSource(FLOW);
  if (!v.ok) throw new Error('bench flow does not validate');
  const { processId } = await publishFlow(store, {
    definition: v.flow,
    organization: 'default',
    environment: 'PRODUCTION',
  });
  const ids: string[] = [];
  const perDay = Math.ceil(EXECUTIONS / DAYS);
  const step = Math.floor((DAY_MS - 60_000) / perDay);
  let failed = 0;
  for (let day = 0; day < DAYS; day++) {
    clock = today - (DAYS - 1 - day) * DAY_MS;
    const n = Math.min(perDay, EXECUTIONS - day * perDay);
    await inCallers(n, 200, async (j) => {
      const i = day * perDay + j;
      const mode = i >= EXECUTIONS - WAITING ? 'wait' : i % FAIL_EVERY === FAIL_EVERY - 1 ? 'fail' : 'ok';
      if (mode === 'fail') failed++;
      clock += step;
      const inst = await engine.start({
        processId,
        organization: 'default',
        data: { mode, i },
        correlationKey: `k-${i}`,
      });
      ids.push(inst.processInstanceId);
    });
  }
  await engine.close();
  await history.close();
  await store.close();
  ids.sort().reverse();
  return { ids, apiKey: made.apiKey, seconds: (performance.now() - t0) / 1000, failed };
}

/** One case's times, in ms: the first request, then the percentiles of the REPEAT after it. */
export interface ListCase {
  readonly what: string;
  readonly items: number;
  readonly firstMs: number;
  readonly p50: number;
  readonly p95: number;
  readonly max: number;
}

/** The cases over one store. */
export interface StoreFigures {
  readonly seedSeconds: number;
  readonly cases: readonly ListCase[];
}

export interface ExecutionsBench {
  readonly executions: number;
  readonly buckets: number;
  readonly files: StoreFigures;
  /** Null where PostgreSQL is not installed. */
  readonly postgres: StoreFigures | null;
}

/** Seeds a store, starts a daemon on it (`storeArgs`: its store, if not the data dir's) and times each case. */
async function measure(
  dataDir: string,
  open: () => Promise<Opened>,
  storeArgs: readonly string[] = [],
): Promise<StoreFigures> {
  const seeded = await seedExecutions(open);
  const daemon = await startBenchDaemon(dataDir, storeArgs);
  const { url } = daemon;
  try {
    const get = async (path: string): Promise<{ ms: number; items: number }> => {
      const t0 = performance.now();
      const res = await fetch(`${url}${path}`, { headers: { 'x-api-key': seeded.apiKey } });
      const body = (await res.json()) as { items?: unknown[]; groups?: unknown[] };
      if (res.status !== 200) throw new Error(`GET ${path} answered ${res.status}`);
      return { ms: performance.now() - t0, items: (body.items ?? body.groups ?? []).length };
    };
    const deep = seeded.ids[Math.floor(seeded.ids.length / 2)]!;
    const list = '/process/instances?limit=50';
    const cases: Array<[string, string]> = [
      ['the first page, no filter', list],
      [
        `errorCode= (${seeded.failed} of ${EXECUTIONS.toLocaleString('en')} failed)`,
        `${list}&errorCode=NO_BRANCH_MATCHED`,
      ],
      ['correlationKey= (one execution, three days back)', `${list}&correlationKey=k-${Math.floor(EXECUTIONS / 3)}`],
      ['a page halfway down by its cursor', `${list}&cursor=${deep}`],
      [`GET /process/failures: the ${seeded.failed} failed ones grouped (groups)`, '/process/failures'],
    ];
    return { seedSeconds: seeded.seconds, cases: await timeCases(get, cases, REPEAT) };
  } finally {
    await daemon.stop();
  }
}

/**
 * Each case asked once, then REPEAT times more, one request at a time: the first's time and
 * items, and the percentiles of the rest.
 */
export async function timeCases(
  get: (query: string) => Promise<{ ms: number; items: number }>,
  cases: ReadonlyArray<readonly [what: string, query: string]>,
  repeat: number,
): Promise<ListCase[]> {
  const out: ListCase[] = [];
  for (const [what, query] of cases) {
    const first = await get(query);
    const times: number[] = [];
    for (let i = 0; i < repeat; i++) times.push((await get(query)).ms);
    times.sort((a, b) => a - b);
    const at = (p: number) => times[Math.min(times.length - 1, Math.ceil(p * times.length) - 1)]!;
    out.push({ what, items: first.items, firstMs: first.ms, p50: at(0.5), p95: at(0.95), max: times.at(-1)! });
  }
  return out;
}

/**
 * `measure` on a data directory of the JSON store, then on PostgreSQL where it is installed (a
 * cluster of its own; `storeArgs` name it to the daemon). Each directory is removed after.
 */
export async function onEachStore<T>(
  name: string,
  measure: (dataDir: string, open: () => Promise<Opened>, storeArgs?: readonly string[]) => Promise<T>,
): Promise<{ files: T; postgres: T | null }> {
  const dataDir = await mkdtemp(join(tmpdir(), `wfx-bench-${name}-`));
  let files: T;
  try {
    files = await measure(dataDir, filesIn(dataDir));
  } finally {
    await rm(dataDir, { recursive: true, force: true });
  }
  if (!HAVE_POSTGRES) return { files, postgres: null };
  const cluster = await startCluster({ fsync: true });
  const pgDir = await mkdtemp(join(tmpdir(), `wfx-bench-${name}-pg-`));
  try {
    const open = async (): Promise<Opened> => {
      const store = await PgStore.open<WfxState, WfxRecord>({
        connectionString: cluster.url,
        owner: 'bench-seed',
        ...WFX_STORE,
        shared: WFX_COMMONS,
      });
      return { store, history: store.history() };
    };
    return { files, postgres: await measure(pgDir, open, ['--store', cluster.url]) };
  } finally {
    cluster.stop();
    await rm(pgDir, { recursive: true, force: true });
  }
}

/** Times the cases on the JSON store, then on PostgreSQL where it is installed. */
export async function runExecutionsBench(): Promise<ExecutionsBench> {
  return { executions: EXECUTIONS, buckets: DAYS, ...(await onEachStore('executions', measure)) };
}

/** The figures as the markdown of docs/benchmarks/executions.md. */
export function formatExecutionsBench(r: ExecutionsBench): string {
  const seeded = `${r.files.seedSeconds.toFixed(0)} s${r.postgres ? `, ${r.postgres.seedSeconds.toFixed(0)} s on PostgreSQL` : ''}`;
  const lines = [
    `${r.executions.toLocaleString('en')} executions of one flow (${WAITING.toLocaleString('en')} waiting, live; the rest in history over ${r.buckets} day buckets), written by the engine (${seeded}); a daemon started on them; GET /process/instances over HTTP with an organization's viewer key, one request at a time: the first request, then p50 / p95 / max of ${REPEAT} more.`,
    '',
    ...casesTable('GET /process/instances (limit 50), then /process/failures', r.files.cases, r.postgres?.cases),
  ];
  return lines.join('\n');
}

/**
 * The cases of both stores as a markdown table under `heading`: items, then each store's first
 * request and its p50 / p95 / max (`not measured` where PostgreSQL is not installed). Pure.
 */
export function casesTable(
  heading: string,
  files: readonly ListCase[],
  postgres: readonly ListCase[] | undefined,
): string[] {
  const ms = (v: number) => (v >= 100 ? v.toFixed(0) : v.toFixed(1));
  const cell = (c: ListCase | undefined) =>
    c === undefined ? 'not measured' : `${ms(c.firstMs)} ms; **${ms(c.p50)}** / **${ms(c.p95)}** / ${ms(c.max)} ms`;
  return [
    `| ${heading} | items | JSON store | PostgreSQL |`,
    '|---|---|---|---|',
    ...files.map((c, i) => `| ${c.what} | ${c.items} | ${cell(c)} | ${cell(postgres?.[i])} |`),
  ];
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const table = formatExecutionsBench(await runExecutionsBench());
  console.log(table);
  await writeSection('executions', `${machineLine()}\n\n${table}`);
  console.log('\nwritten to docs/benchmarks/');
}
