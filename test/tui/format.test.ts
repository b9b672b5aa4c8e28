import t from 'tap';
import { idColumns, shortId, uniquePrefixLength, windowStart } from '../../src/tui/format.js';

t.test('shortId keeps the head of an id: what wfx takes as a unique prefix', async (t) => {
  const id = '01a1fe30-edc6-7617-bd1f-84feb7474dfd';
  t.equal(shortId(id, 36), id, 'whole when it fits');
  t.equal(shortId(id, 13), '01a1fe30-edc…');
  t.equal(shortId(id, 13).length, 13);
  t.equal(shortId('abc', 2), 'a…');
});

t.test('uniquePrefixLength and idColumns: wide enough to tell the ids apart by their heads', async (t) => {
  const a = '01a1fe30-edc6-7617-bd1f-84feb7474dfd';
  const sameMs = '01a1fe30-edc6-7a17-bd1f-84feb7474dfd';
  const later = '01a1fe31-0000-7000-8000-000000000000';
  t.equal(uniquePrefixLength([a]), 8, 'one id: the least');
  t.equal(uniquePrefixLength([a, later]), 8, 'they differ within the first 8');
  t.equal(uniquePrefixLength([a, sameMs, later]), 16, 'started in the same millisecond: into the random part');
  t.equal(uniquePrefixLength([a, a]), 8, 'the same id twice is one id');
  t.equal(idColumns([a, later], 13), 13, 'never narrower than asked');
  t.equal(idColumns([a, sameMs], 13), 17);
  t.equal(shortId(sameMs, idColumns([a, sameMs], 13)), '01a1fe30-edc6-7a…');
  t.equal(idColumns([a, a.slice(0, 35) + '0'], 13), 36, 'the whole id at most');
});

t.test('windowStart keeps the selection in view, near the middle, and never scrolls past the ends', async (t) => {
  t.equal(windowStart(0, 5, 3), 0, 'fewer than the rows: from the top');
  t.equal(windowStart(1, 5, 20), 0);
  t.equal(windowStart(10, 5, 20), 8, 'the selection in the middle row');
  t.equal(windowStart(19, 5, 20), 15, 'the last rows fill the window');
});
