import '../../../setup/fixtures.js';
import { readFile, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import t from 'tap';
import { compactSegments } from '../../../../src/daemon/at-rest/segments/compact.js';
import { removeSegments, segmentName, type Location } from '../../../../src/daemon/at-rest/segments/files.js';
import { loadSegments } from '../../../../src/daemon/at-rest/segments/load.js';
import { SegmentReader } from '../../../../src/daemon/at-rest/segments/read.js';
import { SegmentSpace } from '../../../../src/daemon/at-rest/segments/space.js';
import { verifySegments } from '../../../../src/daemon/at-rest/segments/verify.js';
import { writeSegment } from '../../../../src/daemon/at-rest/segments/write.js';
import { entriesOf } from '../../../helpers/segment-mix.js';

async function load(dir: string, listed: number[]): Promise<{ at: Map<string, Location>; space: SegmentSpace }> {
  const at = new Map<string, Location>();
  const space = new SegmentSpace();
  await loadSegments(dir, listed, space, {
    locate: (id) => at.get(id),
    onEntry: (id, loc) => at.set(id, loc),
    onRemoved: (id) => at.delete(id),
  });
  return { at, space };
}

/** The frame bytes of each live execution. */
async function frames(dir: string, at: Map<string, Location>): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for (const [id, loc] of at) {
    const seg = await readFile(join(dir, segmentName(loc.segment)));
    out.set(
      id,
      seg
        .subarray(loc.offset, loc.offset + loc.length)
        .toString('utf8')
        .split(' ')
        .slice(2)
        .join(' '),
    );
  }
  return out;
}

t.test('compaction keeps every live document byte-identical and frees the dead', async (t) => {
  const dir = t.testdir();
  await writeSegment(dir, 1, entriesOf(0, 20, 400), []);
  await writeSegment(dir, 2, entriesOf(10, 15, 400, '-v2'), ['exec-0', 'exec-1']);
  await writeSegment(dir, 3, entriesOf(20, 25, 400), ['exec-12']);
  const { at, space } = await load(dir, [1, 2, 3]);
  const before = await frames(dir, at);
  t.ok(space.get(1)!.dead > 0 && space.get(2)!.dead > 0, 'segments 1 and 2 have dead bytes');
  const done = await compactSegments(dir, [1, 2, 3], [1, 2], 4, (id) => at.get(id));
  t.same(done.listed, [4, 3], 'the new segment takes the place of segment 2');
  const old = new Map(at);
  t.ok(
    done.moved.every((m) => m.from === old.get(m.id) || JSON.stringify(m.from) === JSON.stringify(old.get(m.id))),
    'each move names where the execution was',
  );
  for (const m of done.moved) at.set(m.id, m.location);
  t.equal(done.moved.length, 20 - 2 - 1, 'every live execution of segments 1 and 2 moved');
  // Only the caller's manifest says when the old files go.
  t.ok((await readdir(dir)).includes(segmentName(1)));
  await removeSegments(dir, [1, 2]);
  const after = await load(dir, done.listed);
  t.same(new Map([...after.at].sort()), new Map([...at].sort()), 'the moved locations are where loading puts them');
  const frameBytes = await frames(dir, after.at);
  for (const [id, text] of before) t.equal(frameBytes.get(id), text, `${id} is byte-identical`);
  t.equal(after.space.get(4)!.dead, 0, 'the new segment has no dead bytes');
  const moved = done.moved.reduce((n, m) => n + m.location.length, 0);
  t.equal(after.space.get(4)!.bytes, moved);
  t.ok(moved < space.get(1)!.bytes + space.get(2)!.bytes - space.get(1)!.dead, 'dead bytes are gone');
  t.same(await verifySegments(dir, done.listed), [], 'verify finds nothing wrong');
  const reader = new SegmentReader(dir);
  t.teardown(() => reader.close());
  t.match(await reader.read('exec-11', after.at.get('exec-11')!), { processInstanceId: 'exec-11-v2' });
});

t.test('a removal is kept where an older segment still holds the id', async (t) => {
  const dir = t.testdir();
  await writeSegment(dir, 1, entriesOf(0, 3), []);
  await writeSegment(dir, 2, entriesOf(3, 4), ['exec-0']);
  const { at } = await load(dir, [1, 2]);
  const done = await compactSegments(dir, [1, 2], [2], 3, (id) => at.get(id));
  await removeSegments(dir, [2]);
  const after = await load(dir, done.listed);
  t.notOk(after.at.has('exec-0'), 'exec-0 stays removed although segment 1 still holds it');
  t.ok(after.at.has('exec-3') && after.at.has('exec-1'));
});

t.test('verify reports an index that does not match its segment, and damaged frames', async (t) => {
  const dir = t.testdir();
  const locs = await writeSegment(dir, 1, entriesOf(0, 5, 200), []);
  await writeSegment(dir, 2, entriesOf(5, 8, 200), []);
  t.same(await verifySegments(dir, [1, 2]), []);
  // Segment 2's index with one entry's offset moved: names no frame there, leaves one unnamed.
  const index = join(dir, '000002.index.json');
  const doc = JSON.parse(await readFile(index, 'utf8')) as { offset: number[]; ids: string[] };
  doc.offset[1]! += 1;
  doc.ids[2] = 'exec-other';
  await writeFile(index, JSON.stringify(doc));
  // Segment 1: a bit flipped in the frame of exec-3.
  const file = join(dir, segmentName(1));
  const bytes = await readFile(file);
  const at = locs[3]!.offset + 50;
  bytes[at] = bytes[at]! ^ 4;
  await writeFile(file, bytes);
  const findings = await verifySegments(dir, [1, 2, 9]);
  t.match(findings, [
    { file: segmentName(1), offset: locs[3]!.offset, code: 'SEGMENT_FRAME_DAMAGED', instanceId: 'exec-3' },
    { file: segmentName(2), code: 'SEGMENT_INDEX_MISMATCH', instanceId: 'exec-6' },
    { file: segmentName(2), code: 'SEGMENT_INDEX_MISMATCH', instanceId: 'exec-6' },
    { file: segmentName(2), code: 'SEGMENT_INDEX_MISMATCH', instanceId: 'exec-7' },
    { file: '000009.index.json', code: 'SEGMENT_MISSING' },
  ]);
  t.equal(findings.length, 5);
});
