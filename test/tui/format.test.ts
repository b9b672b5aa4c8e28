import t from 'tap';
import { shortId, windowStart } from '../../src/tui/format.js';

t.test('shortId keeps the tail of an id (uuidv7 heads are timestamps and look alike)', async (t) => {
  const id = '01a1fe30-edc6-7617-bd1f-84feb7474dfd';
  t.equal(shortId(id, 36), id, 'whole when it fits');
  t.equal(shortId(id, 13), '…84feb7474dfd');
  t.equal(shortId(id, 13).length, 13);
  t.equal(shortId('abc', 2), '…c');
});

t.test('windowStart keeps the selection in view, near the middle, and never scrolls past the ends', async (t) => {
  t.equal(windowStart(0, 5, 3), 0, 'fewer than the rows: from the top');
  t.equal(windowStart(1, 5, 20), 0);
  t.equal(windowStart(10, 5, 20), 8, 'the selection in the middle row');
  t.equal(windowStart(19, 5, 20), 15, 'the last rows fill the window');
});
