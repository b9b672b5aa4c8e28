/**
 * Execution segments (`npm run bench:segments`): BENCH_SEGMENTS executions (default 1,000,000)
 * of about 1.5 KB, the mix of issue #60 (a third each waiting at an input, for a message, on a
 * timer), written as segments of 100,000; then their indexes loaded, single executions read at
 * random, and half the segments compacted after half their executions were written again. Also
 * the index load of the same entries encoded one JSON line per entry, to compare
 * (docs/decisions/070-execution-segments.md).
 */
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { compactSegments } from '../src/daemon/at-rest/segments/compact.js';
import { indexName, segmentName, type Location } from '../src/daemon/at-rest/segments/files.js';
import { loadSegments } from '../src/daemon/at-rest/segments/load.js';
import { SegmentReader } from '../src/daemon/at-rest/segments/read.js';
import { SegmentSpace } from '../src/daemon/at-rest/segments/space.js';
import { writeSegment } from '../src/daemon/at-rest/segments/write.js';
import { entriesOf, summaryOf } from '../test/helpers/segment-mix.js';

const COUNT = Number(process.env.BENCH_SEGMENTS ?? 1_000_000);
const PER_SEGMENT = 100_000;

function ms(from: bigint): number {
  return Number(process.hrtime.bigint() - from) / 1e6;
}

async function main(): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'wfx-bench-segments-'));
  try {
    const listed: number[] = [];
    let written = 0;
    let t0 = process.hrtime.bigint();
    for (let from = 0, n = 1; from < COUNT; from += PER_SEGMENT, n++) {
      await writeSegment(dir, n, entriesOf(from, Math.min(COUNT, from + PER_SEGMENT)), []);
      listed.push(n);
    }
    const writeMs = ms(t0);
    let indexBytes = 0;
    for (const n of listed) {
      written += (await stat(join(dir, segmentName(n)))).size;
      indexBytes += (await stat(join(dir, indexName(n)))).size;
    }
    console.log(
      `write: ${COUNT} executions in ${writeMs.toFixed(0)} ms, ${(written / COUNT).toFixed(0)} B segment + ${(indexBytes / COUNT).toFixed(1)} B index per execution`,
    );

    const at = new Map<string, Location>();
    const space = new SegmentSpace();
    let summaries = 0;
    t0 = process.hrtime.bigint();
    await loadSegments(dir, listed, space, {
      locate: () => undefined,
      onEntry: () => summaries++,
      onRemoved: () => undefined,
    });
    const loadMs = ms(t0);
    console.log(`index load (columnar): ${summaries} entries in ${loadMs.toFixed(0)} ms`);

    // The same entries as one JSON line each, parsed line by line.
    const lines: string[] = [];
    for (let i = 0; i < Math.min(COUNT, PER_SEGMENT); i++)
      lines.push(JSON.stringify({ id: `exec-${i}`, offset: i * 1560, length: 1560, summary: summaryOf(i) }));
    const lineFile = join(dir, 'lines.jsonl');
    await writeFile(lineFile, lines.join('\n'));
    t0 = process.hrtime.bigint();
    for (let k = 0; k < listed.length; k++) {
      const text = await readFile(lineFile, 'utf8');
      for (const line of text.split('\n')) JSON.parse(line);
    }
    console.log(
      `index load (a JSON line per entry): ${listed.length * lines.length} entries in ${ms(t0).toFixed(0)} ms`,
    );

    // Locations, for reads and compaction.
    await loadSegments(dir, listed, new SegmentSpace(), {
      locate: (id) => at.get(id),
      onEntry: (id, loc) => at.set(id, loc),
      onRemoved: () => undefined,
    });
    const reader = new SegmentReader(dir);
    const times: number[] = [];
    for (let k = 0; k < 2000; k++) {
      const i = Math.floor(Math.random() * COUNT);
      const r0 = process.hrtime.bigint();
      await reader.read(`exec-${i}`, at.get(`exec-${i}`)!);
      times.push(ms(r0));
    }
    await reader.close();
    times.sort((a, b) => a - b);
    console.log(
      `read one: p50 ${times[1000]!.toFixed(3)} ms, p99 ${times[1980]!.toFixed(3)} ms (page cache as the writes left it)`,
    );

    // Half of the first half's executions written again, then the first half compacted.
    const half = listed.slice(0, Math.max(1, listed.length / 2));
    const again: number[] = [];
    for (let i = 0; i < half.length * PER_SEGMENT && i < COUNT; i += 2) again.push(i);
    const next = listed.length + 1;
    for (let k = 0; k < again.length; k += PER_SEGMENT) {
      const chunk = again.slice(k, k + PER_SEGMENT).map((i) => entriesOf(i, i + 1, 1500, '-v2')[0]!);
      const locs = await writeSegment(dir, next + k / PER_SEGMENT, chunk, []);
      chunk.forEach((e, j) => at.set(e.id, locs[j]!));
      listed.push(next + k / PER_SEGMENT);
    }
    t0 = process.hrtime.bigint();
    const done = await compactSegments(dir, listed, half, listed.length + 100, (id) => at.get(id));
    const compactMs = ms(t0);
    const bytes = done.moved.reduce((n, m) => n + m.location.length, 0);
    console.log(
      `compaction: ${done.moved.length} live of ${half.length} segments, ${(bytes / 2 ** 20).toFixed(0)} MiB in ${compactMs.toFixed(0)} ms (${(bytes / 2 ** 20 / (compactMs / 1000)).toFixed(0)} MiB/s)`,
    );
    console.log(
      `load average: ${loadavg()
        .map((l) => l.toFixed(2))
        .join(' ')}`,
    );
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

await main();
