import t from 'tap';
import { bucketOf, partitionedIds, partitionOf, uuidv7, uuidv7In } from '../../../src/daemon/state/ids.js';

t.test('uuidv7: RFC 9562 layout, time-ordered, the bucket is the day it was made', async (t) => {
  const at = new Date('2026-11-21T23:59:59.999Z');
  const id = uuidv7(at);
  t.match(id, /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  t.equal(
    Number.parseInt(id.slice(0, 8) + id.slice(9, 13), 16),
    at.getTime(),
    'the first 48 bits are the milliseconds',
  );
  t.equal(bucketOf(id), '2026-11-21');
  t.ok(uuidv7(new Date(at.getTime() + 1)) > id, 'later ids sort after');
  const many = new Set(Array.from({ length: 5000 }, () => uuidv7(at)));
  t.equal(many.size, 5000, 'unique within one millisecond');
  const re = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
  t.equal(
    [...many].filter((m) => re.test(m) && m.startsWith(id.slice(0, 13))).length,
    5000,
    'each with the version, the variant and the same time',
  );
  t.ok(new Set([...many].map((m) => m.slice(24))).size > 4990, 'the random tail varies');
  t.equal(bucketOf('not-a-uuid'), null);
  t.equal(bucketOf('0b7c6a3e-2f0e-4a57-9a43-3d4f1c9e8b11'), null, 'a v4 UUID has no time');
});

t.test('bucketOf: ids either side of midnight, asked in any order, each get their own day', async (t) => {
  const last = uuidv7(new Date('2026-11-21T23:59:59.999Z'));
  const first = uuidv7(new Date('2026-11-22T00:00:00.000Z'));
  const epoch = uuidv7(new Date(0));
  const asked = [last, first, last, epoch, first, first, last];
  t.same(asked.map(bucketOf), [
    '2026-11-21',
    '2026-11-22',
    '2026-11-21',
    '1970-01-01',
    '2026-11-22',
    '2026-11-22',
    '2026-11-21',
  ]);
});

t.test('partitionOf: executions spread over partitions 1..n-1, partition 0 only when it is the one', async (t) => {
  const at = new Date('2026-11-25T10:00:00.000Z');
  t.equal(partitionOf(uuidv7(at), 1), 0, 'one partition: everything is partition 0');
  const counts = new Array<number>(16).fill(0);
  for (let i = 0; i < 16_000; i++) counts[partitionOf(uuidv7(at), 16)]!++;
  t.equal(counts[0], 0, 'no execution in the directory partition');
  t.ok(
    counts.slice(1).every((n) => n > 700 && n < 1500),
    `each of the 15 partitions near its share of 16,000: ${counts.slice(1).join(' ')}`,
  );
  const other = partitionOf('not-a-uuid', 16);
  t.ok(other >= 1 && other < 16, 'an id of another shape has a partition too');
  t.equal(partitionOf('not-a-uuid', 16), other, 'always the same one');
});

t.test('uuidv7In: a UUIDv7 of the time asked, in the partition asked', async (t) => {
  const at = new Date('2026-11-25T10:00:00.000Z');
  const re = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
  for (const partitions of [2, 3, 16, 64, 1024]) {
    for (let p = 1; p < partitions; p += Math.ceil(partitions / 7)) {
      const ids = Array.from({ length: 200 }, () => uuidv7In(p, partitions, at));
      t.ok(
        ids.every((id) => re.test(id) && partitionOf(id, partitions) === p && bucketOf(id) === '2026-11-25'),
        `partition ${p} of ${partitions}`,
      );
      t.ok(new Set(ids).size === 200, 'each one new');
    }
  }
  t.equal(partitionOf(uuidv7In(0, 1, at), 1), 0, 'with one partition, any UUIDv7');
  t.throws(() => uuidv7In(0, 16, at), RangeError, 'no execution is made in partition 0 of several');
  t.throws(() => uuidv7In(16, 16, at), RangeError);
});

t.test('partitionedIds: a child in its parent partition, a root in one of those owned', async (t) => {
  const at = new Date('2026-11-25T10:00:00.000Z');
  const owned = [3, 5];
  const ids = partitionedIds(8, () => owned);
  const roots = Array.from({ length: 200 }, () => ids(at, null));
  t.same(
    [...new Set(roots.map((id) => partitionOf(id, 8)))].sort(),
    [3, 5],
    'roots in both owned partitions, no other',
  );
  const parent = uuidv7In(6, 8, at);
  t.ok(
    Array.from({ length: 50 }, () => ids(at, parent)).every((id) => partitionOf(id, 8) === 6),
    "children in the parent's partition, owned or not",
  );
  t.throws(() => partitionedIds(8, () => [])(at, null), /owns no partition/);
});
