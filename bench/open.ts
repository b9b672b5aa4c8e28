/**
 * Opening the execution directory from segment indexes (`npm run bench:open`): BENCH_OPEN
 * executions (default 1,000,000) of issue #60's mix with UUIDv7 ids (a third waiting at an
 * input node, a third for a message under a key of its own, a third on a timer), written as
 * the indexes of segments of 100,000 (no segment files: only the indexes are read at start).
 * Times index files on disk to a filled directory, by the bulk path (loadSegmentsInto) and by
 * openSegments' entries put one by one, and reports the heap bytes per execution after GC
 * (docs/decisions/072-bulk-directory-load.md).
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { uuidv7 } from '../src/daemon/state/ids.js';
import { ExecutionIndex } from '../src/daemon/state/execution-index/execution-index.js';
import type { ExecutionSummary } from '../src/daemon/state/execution-summary.js';
import { indexName } from '../src/daemon/at-rest/segments/files.js';
import { IndexBuilder } from '../src/daemon/at-rest/segments/index-codec.js';
import { loadSegments, loadSegmentsInto, readIndex } from '../src/daemon/at-rest/segments/load.js';
import { SegmentSpace } from '../src/daemon/at-rest/segments/space.js';
import { machineLine } from './report.js';

const COUNT = Number(process.env.BENCH_OPEN ?? 1_000_000);
const PER_SEGMENT = 100_000;
const DAY = 86_400_000;
const MODE = process.env.BENCH_OPEN_MODE ?? 'both';

function gc(): void {
  const collect = (globalThis as { gc?: () => void }).gc;
  if (collect === undefined) throw new Error('run with node --expose-gc (npm run bench:open does)');
  collect();
  collect();
}

function heapUsed(): number {
  gc();
  const m = process.memoryUsage();
  return m.heapUsed + m.arrayBuffers;
}

function summary(i: number, now: number): ExecutionSummary {
  const start = now - COUNT + i;
  const kind = i % 3;
  const key = kind === 1 ? `order-${uuidv7()}` : null;
  return {
    id: uuidv7(new Date(start)),
    organization: 'default',
    processId: `flow-${i % 7}`,
    processVersion: '1',
    environment: 'PRODUCTION',
    stateCd: 0,
    root: null,
    parent: null,
    startMs: start,
    triggered: false,
    child: false,
    correlationKey: key,
    dueMs: kind === 2 ? now + ((i * 7919) % (7 * DAY)) : kind === 0 ? now + DAY : null,
    active: 0,
    waits: [
      kind === 0
        ? { kind: 'input', node: 'ask', since: start, assignee: i % 2 ? 'ann' : null }
        : kind === 1
          ? { kind: 'event', node: 'paid', eventType: 'message', nodeId: 'paid', ref: 'paid', key }
          : { kind: 'timer', node: 'later' },
    ],
  };
}

async function writeIndexes(dir: string): Promise<number[]> {
  const now = Date.now();
  const listed: number[] = [];
  for (let from = 0, n = 1; from < COUNT; from += PER_SEGMENT, n++) {
    const b = new IndexBuilder(n);
    for (let i = from; i < Math.min(COUNT, from + PER_SEGMENT); i++)
      b.add(summary(i, now).id, i * 1500, 1500, summary(i, now));
    await writeFile(join(dir, indexName(n)), JSON.stringify(b.finish(PER_SEGMENT * 1500, [])));
    listed.push(n);
  }
  return listed;
}

async function bulk(dir: string, listed: number[]): Promise<ExecutionIndex> {
  const directory = new ExecutionIndex();
  await loadSegmentsInto(dir, listed, new SegmentSpace(), directory);
  return directory;
}

async function oneByOne(dir: string, listed: number[]): Promise<ExecutionIndex> {
  const directory = new ExecutionIndex(COUNT);
  await loadSegments(dir, listed, new SegmentSpace(), {
    locate: (id) => directory.locationOf(id) ?? undefined,
    onEntry: (_id, location, s) => directory.put(s, location),
    onRemoved: (id) => directory.remove(id),
  });
  return directory;
}

async function timed(what: string, load: () => Promise<ExecutionIndex | null>): Promise<void> {
  const before = heapUsed();
  const load1 = loadavg()[0]!.toFixed(2);
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const directory = await load();
  // The first reads order the due heap and the sorted lists: part of being ready to answer.
  directory?.nextDue();
  directory?.list({ limit: 1 });
  const ms = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  const cpuMs = (cpu.user + cpu.system) / 1000;
  if (process.env.BENCH_OPEN_TRACE) console.log(`from ${t0.toFixed(0)} to ${(t0 + ms).toFixed(0)} ms`);
  const bytes = (heapUsed() - before) / COUNT;
  if (directory !== null && directory.size !== COUNT)
    throw new Error(`${what}: the directory has ${directory.size} executions`);
  console.log(
    `${what}: ${COUNT} executions in ${ms.toFixed(0)} ms, ${cpuMs.toFixed(0)} ms CPU (load average ${load1})` +
      (directory === null ? '' : `; ${bytes.toFixed(1)} B per execution after GC`),
  );
}

async function main(): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'wfx-bench-open-'));
  try {
    const listed = await writeIndexes(dir);
    console.log(machineLine({ commit: true }));
    await timed('read and parse the indexes only', async () => {
      for (const n of listed) await readIndex(dir, n);
      return null;
    });
    if (MODE !== 'put') await timed('bulk (loadSegmentsInto)', () => bulk(dir, listed));
    if (MODE !== 'bulk') await timed('openSegments + put', () => oneByOne(dir, listed));
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

await main();
