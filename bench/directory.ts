/**
 * The resident directory (`npm run bench:directory`): decision 068 step 4's budgets. Puts
 * BENCH_DIRECTORY summaries (default 1,000,000) of the issue's mix (a third waiting at an input
 * node, a third for a message under a correlation key of its own, a third on a timer due in the
 * next week) and measures the time of the puts, the heap and typed-array bytes per execution
 * after a forced GC, lookups by id and by subscription, and takes of due timers.
 */
import { loadavg } from 'node:os';
import { uuidv7 } from '../src/daemon/state/ids.js';
import { ExecutionIndex } from '../src/daemon/state/execution-index/execution-index.js';
import type { ExecutionSummary } from '../src/daemon/state/execution-summary.js';
import { machineLine } from './report.js';

const COUNT = Number(process.env.BENCH_DIRECTORY ?? 1_000_000);
const DAY = 86_400_000;
const SAMPLE = 100_000;

function gc(): void {
  const collect = (globalThis as { gc?: () => void }).gc;
  if (collect === undefined) throw new Error('run with node --expose-gc (npm run bench:directory does)');
  collect();
  collect();
}

/** Heap and typed-array (ArrayBuffer) bytes in use after a forced GC. */
function used(): { heap: number; buffers: number } {
  gc();
  const m = process.memoryUsage();
  return { heap: m.heapUsed, buffers: m.arrayBuffers };
}

function summaries(now: number): ExecutionSummary[] {
  const out: ExecutionSummary[] = new Array(COUNT);
  const start = now - COUNT;
  for (let i = 0; i < COUNT; i++) {
    const id = uuidv7(new Date(start + i));
    const kind = i % 3;
    const key = kind === 1 ? `order-${uuidv7()}` : null;
    out[i] = {
      id,
      organization: 'default',
      processId: '2e7c9a4b-3f1d-4c6e-8a5b-9d0f1e2a3b4c',
      processVersion: '1',
      environment: 'PRODUCTION',
      stateCd: 0,
      root: null,
      parent: null,
      startMs: start + i,
      triggered: false,
      child: false,
      correlationKey: key,
      dueMs: kind === 2 ? now + Math.floor(Math.random() * 7 * DAY) : kind === 0 ? now + DAY : null,
      active: 0,
      waits: [
        kind === 0
          ? { kind: 'input', node: 'ask', since: start + i, assignee: null }
          : kind === 1
            ? { kind: 'event', node: 'paid', eventType: 'message', nodeId: 'paid', ref: 'paid', key }
            : { kind: 'timer', node: 'later' },
      ],
    };
  }
  return out;
}

function nsPer(n: number, fn: (i: number) => unknown): number {
  const t0 = process.hrtime.bigint();
  let sink = 0;
  for (let i = 0; i < n; i++) if (fn(i) !== undefined) sink++;
  const ns = Number(process.hrtime.bigint() - t0) / n;
  if (sink < 0) console.log(sink);
  return ns;
}

function main(): void {
  const now = Date.now();
  const before = used();
  let all: ExecutionSummary[] | null = summaries(now);
  const at = { segment: 1, offset: 0, length: 400 };
  gc();
  const load = loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');
  const t0 = performance.now();
  const dir = new ExecutionIndex(COUNT); // a load knows its count from the segments' indexes
  for (let i = 0; i < COUNT; i++) dir.put(all[i]!, at);
  const buildMs = performance.now() - t0;
  all = null;
  const after = used();
  const heap = (after.heap - before.heap) / COUNT;
  const buffers = (after.buffers - before.buffers) / COUNT;
  // Samples drawn from the directory once it is measured, so that they are not counted in it.
  const listed = dir.list({ limit: COUNT });
  const ids = Array.from({ length: SAMPLE }, (_, i) => listed[Math.floor((i * listed.length) / SAMPLE)]!);
  const keys = ids.map((id) => dir.get(id)!.summary.correlationKey).filter((k) => k !== null);
  const byId = nsPer(SAMPLE, (i) => dir.slotOf(ids[i]!));
  const byIdGet = nsPer(SAMPLE, (i) => dir.get(ids[i]!));
  const bySubscription = nsPer(keys.length, (i) => dir.subscribers('default', 'paid', keys[i]!)[0]);
  const page = nsPer(1000, (i) => dir.list({ limit: 50, after: ids[i * 10]! }));
  const t1 = performance.now();
  let taken = 0;
  for (;;) {
    const due = dir.takeDue(now + DAY, 10_000).length;
    taken += due;
    if (due < 10_000) break;
  }
  const takeMs = performance.now() - t1;
  console.log(machineLine({ commit: true }));
  console.log(`load average before the build: ${load}`);
  console.log(`${COUNT} executions put in ${buildMs.toFixed(0)} ms (${((buildMs * 1e6) / COUNT).toFixed(0)} ns each)`);
  console.log(
    `at rest after GC: ${heap.toFixed(1)} B JS heap + ${buffers.toFixed(1)} B typed arrays = ${(heap + buffers).toFixed(1)} B per execution`,
  );
  console.log(`lookup by id (slotOf): ${byId.toFixed(0)} ns; get (the whole summary): ${byIdGet.toFixed(0)} ns`);
  console.log(
    `subscribers of a message key: ${bySubscription.toFixed(0)} ns; a page of 50 by cursor: ${page.toFixed(0)} ns`,
  );
  console.log(
    `takeDue of the next day: ${taken} timers in ${takeMs.toFixed(0)} ms (${((takeMs * 1e6) / Math.max(1, taken)).toFixed(0)} ns each)`,
  );
  if (dir.size !== COUNT) throw new Error('the directory lost executions');
}

main();
