/**
 * A PostgreSQL checkpoint after a few executions changed (`npm run bench:pg-checkpoint`; a
 * script, not in `npm run bench`): a store of BENCH_EXECUTIONS executions (100,000 by default)
 * of about 1.5 KB each, as the waiting mix of bench/waiting.ts averages, over 16 partitions,
 * checkpointed; then BENCH_CHANGED_PERCENT of them (1 by default) changed and checkpointed,
 * three times: each checkpoint's time and the bytes it sent (PgStoreCounters.bytes). Then a
 * cold open of the store, every document loaded, then a lazy one (decision 077: summaries
 * only): the time to load and the heap each holds. A throwaway PostgreSQL cluster with fsync on,
 * beside the benchmark on the same cores (decision 068 step 9).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { ROWS_AT_REST } from '../src/daemon/at-rest/rows/pg-evictable.js';
import { PgStore, type PgStoreOptions } from '../src/daemon/store/pg/pg-store.js';
import type { ExecutionSummary } from '../src/daemon/state/execution-summary.js';
import { HAVE_POSTGRES, startCluster } from '../test/helpers/postgres.js';

interface Doc {
  readonly id: string;
  readonly organization: string;
  readonly processId: string;
  n: number;
  readonly variables: Record<string, string>;
  readonly nodes: Record<string, { readonly nodeId: string; readonly statusCd: number; readonly startTime: string }>;
}
interface BState {
  dir: Record<string, string>;
  items: Record<string, Doc | undefined>;
}
type BRecord = { op: 'put'; id: string; doc: Doc } | { op: 'bump'; id: string };

const EXECUTIONS = Number(process.env.BENCH_EXECUTIONS ?? 100_000);
const CHANGED = Math.max(1, Math.round((EXECUTIONS * Number(process.env.BENCH_CHANGED_PERCENT ?? 1)) / 100));
const AT = new Date('2026-11-26T10:00:00.000Z');

/** A document of about 1.5 KB: variables and a few node instances. */
function docOf(i: number, id: string): Doc {
  const variables: Record<string, string> = {};
  for (let v = 0; v < 8; v++) variables[`var${v}`] = `value-${i}-${v}-${'x'.repeat(120)}`;
  const nodes: Doc['nodes'] = {};
  for (let k = 0; k < 4; k++)
    nodes[`ni-${i}-${k}`] = { nodeId: `node${k}`, statusCd: k === 3 ? 6 : 2, startTime: AT.toISOString() };
  return { id, organization: 'acme', processId: `flow${i % 20}`, n: 0, variables, nodes };
}

const summarize = (execution: unknown): ExecutionSummary => {
  const doc = execution as Doc;
  return {
    id: '',
    organization: doc.organization,
    processId: doc.processId,
    processVersion: '1',
    environment: 'default',
    stateCd: 0,
    root: null,
    parent: null,
    startMs: AT.getTime(),
    triggered: false,
    child: false,
    correlationKey: null,
    dueMs: null,
    active: 0,
    waits: [{ kind: 'input', node: Object.keys(doc.nodes)[3]!, since: AT.getTime(), assignee: null }],
  };
};

async function main(): Promise<void> {
  if (!HAVE_POSTGRES) {
    console.log('pg-checkpoint: skipped, PostgreSQL is not installed');
    return;
  }
  const cluster = await startCluster({ fsync: true });
  try {
    const options = {
      connectionString: cluster.url,
      owner: 'bench',
      partitions: 16,
      checkpointEvery: 1e12,
      initialState: (): BState => ({ dir: {}, items: {} }),
      apply: (s: BState, r: BRecord) => {
        if (r.op === 'put') s.items[r.id] = structuredClone(r.doc);
        else s.items[r.id]!.n++;
      },
      snapshotCollection: {
        key: 'items',
        touched: (r: BRecord, visit: (id: string) => void) => visit(r.id),
        adopt: (state: object, entry: unknown) => void ((state as BState).items[(entry as Doc).id] = entry as Doc),
      },
      summarize,
    };
    let store: PgStore<BState, BRecord> | null = await PgStore.open<BState, BRecord>(
      options as PgStoreOptions<BState, BRecord>,
    );
    const ids: string[] = [];
    for (let i = 0; i < EXECUTIONS; i += 500) {
      const batch: BRecord[] = [];
      for (let j = i; j < Math.min(EXECUTIONS, i + 500); j++) {
        const id = store.newExecutionId!(AT, null);
        ids.push(id);
        batch.push({ op: 'put', id, doc: docOf(j, id) });
      }
      await store.commit(...batch);
    }
    const first = await timed(store);
    const runs: Array<{ ms: number; bytes: number }> = [];
    for (let run = 0; run < 3; run++) {
      for (let c = 0; c < CHANGED; c += 100) {
        const batch: BRecord[] = [];
        for (let k = c; k < Math.min(CHANGED, c + 100); k++)
          batch.push({ op: 'bump', id: ids[(k * 97 + run) % EXECUTIONS]! });
        await store.commit(...batch);
      }
      await sleep(200); // the group commits settle
      runs.push(await timed(store));
    }
    await store.close({ checkpoint: false });
    store = null; // its state let go: the heap before each open is the same
    const eager = await measureOpen(options as PgStoreOptions<BState, BRecord>);
    // The lazy open (decision 077): the rows' summaries into a directory, no document read.
    const lazy = await measureOpen({ ...options, lazy: true, rows: ROWS_AT_REST } as PgStoreOptions<BState, BRecord>);
    const sorted = [...runs].sort((a, b) => a.ms - b.ms);
    console.log(
      JSON.stringify({
        executions: EXECUTIONS,
        changed: CHANGED,
        firstCheckpoint: first,
        changedCheckpoints: runs,
        medianMs: sorted[1]!.ms,
        medianBytes: sorted[1]!.bytes,
        open: eager,
        lazyOpen: lazy,
      }),
    );
  } finally {
    cluster.stop();
  }
}

/** The memory in use (heap and array buffers), after a full collection when run with --expose-gc. */
function inUse(): number {
  (globalThis as { gc?: () => void }).gc?.();
  const { heapUsed, arrayBuffers } = process.memoryUsage();
  return heapUsed + arrayBuffers;
}

/** Opens the store: how long that took, what it holds, and the memory it added per execution. */
async function measureOpen(options: PgStoreOptions<BState, BRecord>) {
  const before = inUse();
  const started = performance.now();
  const store = await PgStore.open<BState, BRecord>(options);
  const ms = Math.round(performance.now() - started);
  const bytesPerExecution = Math.round((inUse() - before) / EXECUTIONS);
  const resident = Object.keys(store.state.items).length;
  const summaries = store.evictable?.unread?.size ?? 0;
  await store.close({ checkpoint: false });
  return { ms, resident, summaries, bytesPerExecution };
}

/** One checkpoint: its time and the bytes it sent. */
async function timed(store: PgStore<BState, BRecord>): Promise<{ ms: number; bytes: number }> {
  await store.flush();
  const bytes = store.counters.bytes;
  const start = performance.now();
  await store.checkpoint();
  return { ms: Math.round(performance.now() - start), bytes: store.counters.bytes - bytes };
}

await main();
