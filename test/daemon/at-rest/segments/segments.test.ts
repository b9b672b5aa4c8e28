import '../../../setup/fixtures.js';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import t from 'tap';
import { ExecutionIndex } from '../../../../src/daemon/state/execution-index/execution-index.js';
import type { ExecutionSummary } from '../../../../src/daemon/state/execution-summary.js';
import { indexName, segmentName, type Location } from '../../../../src/daemon/at-rest/segments/files.js';
import { loadSegments, loadSegmentsInto } from '../../../../src/daemon/at-rest/segments/load.js';
import { SegmentReader } from '../../../../src/daemon/at-rest/segments/read.js';
import { SegmentSpace } from '../../../../src/daemon/at-rest/segments/space.js';
import { writeSegment } from '../../../../src/daemon/at-rest/segments/write.js';
import { entriesOf, summaryOf } from '../../../helpers/segment-mix.js';

/** A directory as step 6's would be: id -> location and summary, filled by loading. */
function directory(): {
  at: Map<string, Location>;
  summaries: Map<string, ExecutionSummary>;
  removed: string[];
  handlers: Parameters<typeof loadSegments>[3];
} {
  const at = new Map<string, Location>();
  const summaries = new Map<string, ExecutionSummary>();
  const removed: string[] = [];
  return {
    at,
    summaries,
    removed,
    handlers: {
      locate: (id) => at.get(id),
      onEntry: (id, loc, s) => {
        at.set(id, loc);
        summaries.set(id, s);
      },
      onRemoved: (id) => {
        at.delete(id);
        summaries.delete(id);
        removed.push(id);
      },
    },
  };
}

t.test('documents and summaries come back as written', async (t) => {
  const dir = t.testdir();
  const entries = entriesOf(0, 60, 300);
  const locations = await writeSegment(dir, 1, entries, []);
  t.equal(locations.length, 60);
  const d = directory();
  const space = new SegmentSpace();
  await loadSegments(dir, [1], space, d.handlers);
  t.same([...d.at.values()], locations, 'each entry at the location the write returned');
  for (const e of entries) t.same(d.summaries.get(e.id), e.summary, `summary of ${e.id}`);
  const reader = new SegmentReader(dir);
  t.teardown(() => reader.close());
  for (const e of entries) t.same(await reader.read(e.id, d.at.get(e.id)!), JSON.parse(e.json), `document of ${e.id}`);
  t.same(space.get(1), { segment: 1, bytes: locations.at(-1)!.offset + locations.at(-1)!.length, dead: 0 });
  // The segment is jq-readable: one frame a line, the JSON after the third space.
  const lines = (await readFile(join(dir, segmentName(1)), 'utf8')).trimEnd().split('\n');
  t.equal(lines.length, 60);
  t.equal(lines[0]!.split(' ')[2], 'exec-0');
});

t.test('a later segment wins, removed ids go, and their bytes count as dead', async (t) => {
  const dir = t.testdir();
  await writeSegment(dir, 1, entriesOf(0, 10), []);
  const second = await writeSegment(dir, 2, entriesOf(5, 8, 1500, '-v2'), ['exec-0', 'exec-1', 'exec-99']);
  const d = directory();
  const space = new SegmentSpace();
  await loadSegments(dir, [1, 2], space, d.handlers);
  t.same(d.at.get('exec-6'), second[1], 'exec-6 is where segment 2 put it');
  t.notOk(d.at.has('exec-0'), 'a removed id is gone');
  t.ok(d.at.has('exec-2'), 'an untouched one stays in segment 1');
  t.same(d.removed, ['exec-0', 'exec-1', 'exec-99']);
  const reader = new SegmentReader(dir);
  t.teardown(() => reader.close());
  t.match(await reader.read('exec-6', d.at.get('exec-6')!), { processInstanceId: 'exec-6-v2' });
  const seg1 = space.get(1)!;
  t.equal(seg1.dead, Math.round((seg1.bytes / 10) * 5), 'five of ten frames of segment 1 are dead');
  t.equal(space.get(2)!.dead, 0);
  // Listed in the other order, segment 1 wins.
  const e = directory();
  await loadSegments(dir, [2, 1], new SegmentSpace(), e.handlers);
  t.equal(e.at.get('exec-6')!.segment, 1);
  t.ok(e.at.has('exec-0'));
});

t.test('a damaged frame throws EXECUTION_SEGMENT_DAMAGED naming file and offset', async (t) => {
  const dir = t.testdir();
  const locs = await writeSegment(dir, 3, entriesOf(0, 4, 200), []);
  const file = join(dir, segmentName(3));
  const bytes = await readFile(file);
  const at = locs[2]!.offset + 60;
  bytes[at] = bytes[at]! ^ 1; // a bit flipped inside the JSON
  await writeFile(file, bytes);
  const reader = new SegmentReader(dir);
  t.teardown(() => reader.close());
  await t.rejects(reader.read('exec-2', locs[2]!), {
    code: 'EXECUTION_SEGMENT_DAMAGED',
    details: { file, offset: locs[2]!.offset },
  });
  t.match(await reader.read('exec-1', locs[1]!), { processInstanceId: 'exec-1' }, 'its neighbour reads');
  await t.rejects(reader.read('exec-3', locs[1]!), { code: 'EXECUTION_SEGMENT_DAMAGED' }, 'another id there');
  await t.rejects(reader.read('exec-1', { ...locs[1]!, offset: locs[1]!.offset + 1 }), {
    code: 'EXECUTION_SEGMENT_DAMAGED',
  });
});

t.test('an index cut short is refused when it loads', async (t) => {
  const dir = t.testdir();
  await writeSegment(dir, 1, entriesOf(0, 3), []);
  const index = join(dir, '000001.index.json');
  const text = await readFile(index, 'utf8');
  await writeFile(index, text.slice(0, text.length - 10));
  await t.rejects(loadSegments(dir, [1], new SegmentSpace(), directory().handlers), {
    code: 'EXECUTION_SEGMENT_DAMAGED',
    details: { file: index, offset: 0 },
  });
});

t.test('summaries of every wait kind survive the columns', async (t) => {
  const dir = t.testdir();
  const s: ExecutionSummary = {
    ...summaryOf(0, 'exec-x'),
    root: 'exec-r',
    active: 2,
    waits: [
      { kind: 'job', node: 'j', domain: 'billing', action: 'charge', notBefore: 5, lockedUntil: null },
      { kind: 'event', node: 'e', eventType: 'signal', nodeId: 'e', ref: 'go', key: null },
      { kind: 'input', node: 'i', since: 7, assignee: 'bob' },
      { kind: 'child', node: 'c' },
    ],
  };
  await writeSegment(dir, 1, [{ id: 'exec-x', json: '{}', summary: s }], []);
  const d = directory();
  await loadSegments(dir, [1], new SegmentSpace(), d.handlers);
  t.same(d.summaries.get('exec-x'), s);
});

t.test("a wait under its execution's own key is written once, and version 1 indexes still read", async (t) => {
  const dir = t.testdir();
  const s: ExecutionSummary = {
    ...summaryOf(0, 'exec-k'),
    correlationKey: 'order-7',
    waits: [
      { kind: 'event', node: 'a', eventType: 'message', nodeId: 'a', ref: 'paid', key: 'order-7' },
      { kind: 'event', node: 'b', eventType: 'message', nodeId: 'b', ref: 'shipped', key: 'order-8' },
      { kind: 'event', node: 'c', eventType: 'signal', nodeId: 'c', ref: 'go', key: null },
    ],
  };
  await writeSegment(dir, 1, [{ id: 'exec-k', json: '{}', summary: s }], []);
  const file = join(dir, indexName(1));
  const doc = JSON.parse(await readFile(file, 'utf8')) as Record<string, unknown>;
  t.equal(doc.version, 2);
  t.same(doc.waitKey, [true, 'order-8', null], 'the own key as true, the others as written');
  const d = directory();
  await loadSegments(dir, [1], new SegmentSpace(), d.handlers);
  t.same(d.summaries.get('exec-k'), s, 'loaded one by one');
  const bulk = new ExecutionIndex(16);
  await loadSegmentsInto(dir, [1], new SegmentSpace(), bulk);
  t.same(bulk.get('exec-k')?.summary, s, 'loaded in bulk');
  t.same(bulk.subscribers('default', 'paid', 'order-7'), [{ id: 'exec-k', node: 'a', nodeId: 'a' }]);
  // As a version 1 writer wrote it: every key in full.
  await writeFile(file, JSON.stringify({ ...doc, version: 1, waitKey: ['order-7', 'order-8', null] }));
  const old = directory();
  await loadSegments(dir, [1], new SegmentSpace(), old.handlers);
  t.same(old.summaries.get('exec-k'), s, 'version 1, one by one');
  const oldBulk = new ExecutionIndex(16);
  await loadSegmentsInto(dir, [1], new SegmentSpace(), oldBulk);
  t.same(oldBulk.get('exec-k')?.summary, s, 'version 1, in bulk');
  await writeFile(file, JSON.stringify({ ...doc, version: 3 }));
  await t.rejects(loadSegments(dir, [1], new SegmentSpace(), directory().handlers), {
    code: 'EXECUTION_SEGMENT_DAMAGED',
  });
});
