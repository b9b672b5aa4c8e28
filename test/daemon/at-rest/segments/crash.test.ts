import '../../../setup/fixtures.js';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFile, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import type { Location } from '../../../../src/daemon/at-rest/segments/files.js';
import { openSegments } from '../../../../src/daemon/at-rest/segments/load.js';
import { SegmentReader } from '../../../../src/daemon/at-rest/segments/read.js';
import { SegmentSpace } from '../../../../src/daemon/at-rest/segments/space.js';
import { documentOf } from '../../../helpers/segment-mix.js';

/**
 * SIGKILL between the file system steps of writing a segment (crash-point.ts): after a reopen,
 * the listed segment loads whole and the unlisted, half-written one is ignored and removed.
 */
const WORKER = fileURLToPath(new URL('../../../fixtures/segment-worker.js', import.meta.url));

/** Runs the worker until it prints `done` or stops at `point`, SIGKILLs it; returns what it printed. */
async function run(args: string[], point?: string): Promise<string[]> {
  const env = { ...process.env };
  delete env.WFX_TEST_CRASH_POINT;
  if (point !== undefined) env.WFX_TEST_CRASH_POINT = point;
  const child = spawn(process.execPath, [WORKER, ...args], { stdio: ['ignore', 'pipe', 'inherit'], env });
  const exited = once(child, 'exit');
  const seen: string[] = [];
  for await (const line of createInterface({ input: child.stdout! })) {
    seen.push(line);
    if (line.startsWith('crash-point') || line === 'done') break;
  }
  child.kill('SIGKILL');
  await exited;
  return seen;
}

for (const point of ['segment:written', 'segment:indexed', 'segment:synced']) {
  t.test(`SIGKILL at ${point}: the listed segment loads whole, the other goes`, async (t) => {
    const dir = t.testdir();
    t.same(await run(['first', dir]), ['done'], 'segment 1 written and listed');
    t.same(await run(['second', dir], point), [`crash-point ${point}`], `the worker stopped at ${point}`);
    const listed = JSON.parse(await readFile(join(dir, 'listed.json'), 'utf8')) as number[];
    t.same(listed, [1], 'segment 2 was never listed');
    t.ok((await readdir(dir)).includes('000002.jsonl'), 'the crash left segment 2 on disk');
    const at = new Map<string, Location>();
    const gone = await openSegments(dir, listed, new SegmentSpace(), {
      locate: (id) => at.get(id),
      onEntry: (id, loc) => at.set(id, loc),
      onRemoved: (id) => at.delete(id),
    });
    t.same(gone, [2], 'the unlisted segment is removed at open');
    t.notOk(
      (await readdir(dir)).some((n) => n.startsWith('000002')),
      'no file of segment 2 is left',
    );
    t.equal(at.size, 600, 'every execution of segment 1 is there');
    t.ok(at.has('exec-0'), "segment 2's removal did not apply");
    const reader = new SegmentReader(dir);
    t.teardown(() => reader.close());
    for (const i of [0, 299, 300, 599])
      t.equal(JSON.stringify(await reader.read(`exec-${i}`, at.get(`exec-${i}`)!)), documentOf(`exec-${i}`, i, 700));
  });
}
