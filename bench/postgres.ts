/**
 * PostgreSQL store benchmark (part of `npm run bench`; alone: `npm run bench:postgres`): the JSON
 * store and the PostgreSQL store in the same run, on the same machine, a throwaway PostgreSQL
 * cluster with fsync on beside the benchmark (so on 2 cores the database competes with the
 * engine for the CPU: this measures cost, not scale). Durable commits per second and their
 * latency; executions started (starts per second, start p99) and left waiting for input, then
 * answered, through the engine: answers per second, answer p99, and the database round trips
 * and bytes per execution; a takeover of many waiting executions, by a standby that kept a copy
 * of the state and by a daemon that loads it. Skipped, saying so, on a
 * machine without PostgreSQL's server.
 */
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { WFX_STORE, type WfxRecord } from '../src/daemon/state/records.js';
import { WFX_COMMONS } from '../src/daemon/state/commons.js';
import type { WfxState } from '../src/daemon/state/state.js';
import { PgStore } from '../src/daemon/store/pg/pg-store.js';
import { executionSummarizer } from '../src/daemon/engine/executions-at-rest.js';
import { History } from '../src/daemon/store/history.js';
import type { HistoryStore } from '../src/daemon/store/history-store.js';
import type { RecordStore } from '../src/daemon/store/record-store.js';
import { Store } from '../src/daemon/store/store.js';
import { HAVE_POSTGRES, queryAt, startCluster, type Cluster } from '../test/helpers/postgres.js';
import { inCallers } from './callers.js';
import { openWaiting } from './engine.js';
import { machineLine, writeSection } from './report.js';

interface Commits {
  readonly writers: number;
  readonly perSecond: number;
  readonly meanMs: number;
  readonly p99Ms: number;
}

interface Answers {
  readonly waiting: number;
  readonly concurrency: number;
  readonly perSecond: number;
  readonly p99Ms: number;
  /** The starts that made them wait (500 at a time), each until it was durable. */
  readonly starts: { readonly perSecond: number; readonly p99Ms: number };
}

interface StoreFigures {
  readonly many: Commits;
  readonly one: Commits;
  readonly answers: Answers;
}

export interface PostgresBenchResult {
  readonly json: StoreFigures;
  /** The PostgreSQL store on a database of one partition (as before decision 038), in the same run. */
  readonly onePartition: StoreFigures;
  readonly postgres: StoreFigures & {
    /** The partitions of its database (wfx_cluster): the default for a new one. */
    readonly partitions: number;
    /** Database round trips (group-committed INSERTs) per execution: its start's, its answer's, its history row's. */
    readonly roundTripsPerExecution: number;
    readonly bytesPerExecution: number;
    /** Journal entries per round trip while answers ran: what group commit shares. */
    readonly entriesPerRoundTrip: number;
    /** A takeover's store open, from the lease's release: a standby's copy against a load. */
    readonly takeover: {
      readonly waiting: number;
      readonly tail: number;
      readonly warmMs: number;
      readonly coldMs: number;
      /** The same load of summaries only (decision 077), as a daemon's store does. */
      readonly lazyMs: number;
      /** Partitions moved between running stores (decision 040): given up by one, taken by another. */
      readonly move: Move;
    };
  };
}

type Opener = (tag: string) => Promise<RecordStore<WfxState, WfxRecord>>;

/** Partitions moved while running: how many executions, and each side's time (PgStore.drop, take). */
interface Move {
  readonly dropped: { readonly partitions: number; readonly executions: number; readonly ms: number };
  readonly taken: { readonly partitions: number; readonly executions: number; readonly ms: number };
}
/** The history beside a store: its own table for the PostgreSQL store, files for the JSON store. */
const historyOf = async (store: RecordStore<WfxState, WfxRecord>, dir: string): Promise<HistoryStore> =>
  store instanceof PgStore ? store.history() : History.open(join(dir, 'history'));

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))]!;

/** `total` commits of one record of an engine transition's size, `writers` at a time. */
async function commits(open: Opener, writers: number, total: number): Promise<Commits> {
  const store = await open(`commits-${writers}`);
  await store.commit({ type: 'organization.created', name: 'bench', at: new Date().toISOString() });
  const latencies: number[] = [];
  const start = performance.now();
  await inCallers(total, writers, async (i) => {
    const t0 = performance.now();
    await store.commit({
      type: 'messageId.seen',
      key: `bench-${i}-${randomUUID()}`,
      until: '2099-01-01T00:00:00.000Z',
    });
    latencies.push(performance.now() - t0);
  });
  const seconds = (performance.now() - start) / 1000;
  await store.close({ checkpoint: false });
  latencies.sort((a, b) => a - b);
  return {
    writers,
    perSecond: total / seconds,
    meanMs: latencies.reduce((a, b) => a + b, 0) / latencies.length,
    p99Ms: percentile(latencies, 0.99),
  };
}

/** `waiting` executions started and left waiting for input, then each answered, `concurrency` at a time. */
async function answers(
  open: Opener,
  waiting: number,
  concurrency: number,
): Promise<Answers & { store: RecordStore<WfxState, WfxRecord> }> {
  const dir = await mkdtemp(join(tmpdir(), 'wfx-bench-pg-'));
  try {
    let opened!: RecordStore<WfxState, WfxRecord>;
    const { engine, ids, close, starts } = await openWaiting(dir, waiting, 'task', async () => {
      opened = await open('answers');
      return { store: opened, history: await historyOf(opened, dir) };
    });
    let archived = 0;
    const allArchived = new Promise<void>((resolve) =>
      engine.on('archived', () => {
        if (++archived === waiting) resolve();
      }),
    );
    const latencies: number[] = [];
    const start = performance.now();
    await inCallers(waiting, concurrency, async (i) => {
      const t0 = performance.now();
      await engine.submitTask({
        organization: 'default',
        processInstanceId: ids[i]!,
        nodeId: 'ask',
        action: 'COMPLETE',
        data: { inputValue: 'ok' },
      });
      latencies.push(performance.now() - t0);
    });
    await allArchived;
    const seconds = (performance.now() - start) / 1000;
    await close();
    latencies.sort((a, b) => a - b);
    starts.latencies.sort((a, b) => a - b);
    return {
      waiting,
      concurrency,
      perSecond: waiting / seconds,
      p99Ms: percentile(latencies, 0.99),
      starts: { perSecond: waiting / starts.seconds, p99Ms: percentile(starts.latencies, 0.99) },
      store: opened,
    };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

async function figures(open: Opener): Promise<StoreFigures & { answerStore: RecordStore<WfxState, WfxRecord> }> {
  await commits(open, 64, 2_000); // warm-up
  const many = await commits(open, 64, 20_000);
  const one = await commits(open, 1, 2_000);
  await answers(open, 1_000, 10); // warm-up
  const { store, ...answered } = await answers(open, 10_000, 10);
  return { many, one, answers: answered, answerStore: store };
}

/**
 * A takeover of a database holding `waiting` executions (a snapshot of them and a journal tail of
 * `tail` answers since): a standby that kept a copy (it follows the journal) against a daemon that
 * loads it all once the lease is free. Timed from the lease's release to the store open, so the
 * lease's own lapse (a crash) adds the same to both.
 */
async function takeover(
  server: Cluster,
  waiting: number,
  tail: number,
): Promise<{ waiting: number; tail: number; warmMs: number; coldMs: number; lazyMs: number; move: Move }> {
  const db = 'bench_takeover';
  await queryAt(server.urlOf('postgres'), `CREATE DATABASE ${db}`);
  const open = (
    owner: string,
    standby?: { following: (seq: (() => number) | null) => void },
    held?: readonly number[],
    lazy = false,
  ) =>
    PgStore.open<WfxState, WfxRecord>({
      connectionString: server.urlOf(db),
      owner,
      ...WFX_STORE,
      shared: WFX_COMMONS,
      summarize: executionSummarizer(),
      lazy,
      checkpointEvery: Number.MAX_SAFE_INTEGER,
      ...(standby && { standby }),
      ...(held && { held: () => held }),
    });
  const dir = await mkdtemp(join(tmpdir(), 'wfx-bench-takeover-'));
  try {
    let serving!: PgStore<WfxState, WfxRecord>;
    const { engine, ids } = await openWaiting(dir, waiting, 'task', async () => {
      serving = await open('serving');
      return { store: serving, history: serving.history() };
    });
    await serving.checkpoint();
    await inCallers(tail, 10, (i) =>
      engine.submitTask({
        organization: 'default',
        processInstanceId: ids[i]!,
        nodeId: 'ask',
        action: 'COMPLETE',
        data: { inputValue: 'ok' },
      }),
    );
    let applied: () => number = () => 0;
    // Lazy, as a daemon's standby is: it keeps summaries, and documents the journal changed.
    const standby = open('standby', { following: (seq) => (applied = seq ?? applied) }, undefined, true);
    // Bounded: a copy that never catches up ends the benchmark with an error.
    for (let i = 0; applied() < serving.lastSeq; i++) {
      if (i > 6_000) throw new Error('the standby did not catch up within a minute');
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    await engine.close();
    await serving.close({ checkpoint: false });
    let t0 = performance.now();
    const warm = await standby;
    const warmMs = performance.now() - t0;
    await warm.close({ checkpoint: false });
    t0 = performance.now();
    const lazy = await open('lazy', undefined, undefined, true);
    const lazyMs = performance.now() - t0;
    await lazy.close({ checkpoint: false });
    t0 = performance.now();
    const cold = await open('cold');
    const coldMs = performance.now() - t0;
    // A second daemon's share: partitions 1-7 given up by this one; it opens on the first and
    // takes the rest while running.
    const count = () => Object.keys(cold.state.instances).length;
    const before = count();
    t0 = performance.now();
    await cold.drop([1, 2, 3, 4, 5, 6, 7]);
    const dropped = { partitions: 7, executions: before - count(), ms: performance.now() - t0 };
    const taker = await open('taker', undefined, [1]);
    let executions = 0;
    t0 = performance.now();
    await taker.take([2, 3, 4, 5, 6, 7], (ids) => (executions = ids.length));
    const taken = { partitions: 6, executions, ms: performance.now() - t0 };
    await taker.close({ checkpoint: false });
    await cold.close({ checkpoint: false });
    return { waiting, tail, warmMs, coldMs, lazyMs, move: { dropped, taken } };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

export async function runPostgresBench(): Promise<PostgresBenchResult | null> {
  if (!HAVE_POSTGRES) return null;
  const dirs: string[] = [];
  const json = await figures(async () => {
    const dir = await mkdtemp(join(tmpdir(), 'wfx-bench-json-'));
    dirs.push(dir);
    return Store.open<WfxState, WfxRecord>({ dir, ...WFX_STORE, checkpointEvery: Number.MAX_SAFE_INTEGER });
  });
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
  let cluster: Cluster | null = null;
  try {
    cluster = await startCluster({ fsync: true });
    let n = 0;
    const server = cluster;
    const opener =
      (partitions?: number): Opener =>
      async () => {
        const db = `bench_${++n}`;
        await queryAt(server.urlOf('postgres'), `CREATE DATABASE ${db}`);
        return PgStore.open<WfxState, WfxRecord>({
          connectionString: server.urlOf(db),
          owner: 'bench',
          // No standby follows these: appends do not NOTIFY, as on a daemon without standbys.
          followed: () => false,
          ...WFX_STORE,
          shared: WFX_COMMONS,
          checkpointEvery: Number.MAX_SAFE_INTEGER,
          ...(partitions !== undefined && { partitions }),
        });
      };
    const { answerStore: _one, ...onePartition } = await figures(opener(1));
    const pg = await figures(opener());
    const taken = await takeover(server, 100_000, 1_000);
    const answerStore = pg.answerStore as PgStore<WfxState, WfxRecord>;
    const counters = answerStore.counters;
    const history = answerStore.history().counters;
    const { answerStore: _json, ...jsonFigures } = json;
    const { answerStore: _pg, ...pgFigures } = pg;
    // The answers run's store holds its executions' starts and answers (and one publish).
    const executions = pg.answers.waiting;
    return {
      json: jsonFigures,
      onePartition,
      postgres: {
        ...pgFigures,
        partitions: answerStore.layout.count,
        roundTripsPerExecution: (counters.appends + history.writes) / executions,
        bytesPerExecution: (counters.bytes + history.bytes) / executions,
        entriesPerRoundTrip: counters.entries / counters.appends,
        takeover: taken,
      },
    };
  } finally {
    cluster?.stop();
  }
}

export function formatPostgresBench(r: PostgresBenchResult | null): string {
  if (r === null) return 'Not measured: PostgreSQL is not installed on this machine (apt-get install postgresql).';
  const fmt = (n: number) => Math.round(n).toLocaleString('en-US');
  const ms = (n: number) => `${n.toFixed(2)} ms`;
  const row = (what: string, f: (s: StoreFigures) => string) =>
    `| ${what} | ${f(r.json)} | ${f(r.postgres)} | ${f(r.onePartition)} |`;
  const more = (what: string, value: string) => `| ${what} | | ${value} | |`;
  return [
    `| figure | JSON store | PostgreSQL store (${r.postgres.partitions} partitions) | PostgreSQL store, 1 partition |`,
    '|---|---|---|---|',
    row(
      `durable commits/s, ${r.json.many.writers} writers`,
      (s) => `**${fmt(s.many.perSecond)}**/s (mean ${ms(s.many.meanMs)}, p99 ${ms(s.many.p99Ms)})`,
    ),
    row(
      `durable commits/s, 1 writer`,
      (s) => `${fmt(s.one.perSecond)}/s (mean ${ms(s.one.meanMs)}, p99 ${ms(s.one.p99Ms)})`,
    ),
    row(
      `executions started through the engine (${fmt(r.json.answers.waiting)}, 500 at a time, each until durable)`,
      (s) => `**${fmt(s.answers.starts.perSecond)}**/s, p99 ${ms(s.answers.starts.p99Ms)}`,
    ),
    row(
      `task answers through the engine (${fmt(r.json.answers.waiting)} waiting, ${r.json.answers.concurrency} at a time, until all are archived)`,
      (s) => `**${fmt(s.answers.perSecond)}**/s, p99 ${ms(s.answers.p99Ms)}`,
    ),
    more(
      'database round trips per waiting execution (journal entries of its start and its answer, its history row; group commit shares them)',
      r.postgres.roundTripsPerExecution.toFixed(2),
    ),
    more('journal entries per journal round trip', r.postgres.entriesPerRoundTrip.toFixed(1)),
    more('bytes written per waiting execution (journal and history)', fmt(r.postgres.bytesPerExecution)),
    more(
      `takeover of ${fmt(r.postgres.takeover.waiting)} waiting executions (a snapshot and ${fmt(r.postgres.takeover.tail)} journal entries after it), lease released to store open: a daemon that loads every document (before decision 077)`,
      `${fmt(r.postgres.takeover.coldMs)} ms`,
    ),
    more(
      'the same, loading summaries and the documents the journal changed (a daemon since decision 077)',
      `${fmt(r.postgres.takeover.lazyMs)} ms`,
    ),
    more('the same by a standby that kept a copy (followed the journal)', `**${fmt(r.postgres.takeover.warmMs)} ms**`),
    more(
      `partitions given up while running (${r.postgres.takeover.move.dropped.partitions} of them, ${fmt(r.postgres.takeover.move.dropped.executions)} executions): snapshots written, leases released`,
      `${fmt(r.postgres.takeover.move.dropped.ms)} ms`,
    ),
    more(
      `partitions taken while running (${r.postgres.takeover.move.taken.partitions} of them, ${fmt(r.postgres.takeover.move.taken.executions)} executions): leased, loaded, merged`,
      `${fmt(r.postgres.takeover.move.taken.ms)} ms`,
    ),
  ].join('\n');
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const table = formatPostgresBench(await runPostgresBench());
  console.log(table);
  await writeSection('postgres', `${machineLine()}\n\n${table}`);
  console.log('\nwritten to docs/benchmarks/');
}
