import t from 'tap';
import { bucketOf, uuidv7 } from '../../../src/daemon/engine/ids.js';

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
