import t from 'tap';
import { SortedList } from '../../../../src/daemon/state/directory/sorted.js';

const ascending = (a: number, b: number) => a - b;

/** The list's entries in order. */
const entries = (list: SortedList) => Array.from({ length: list.size }, (_, i) => list.at(i));

t.test('a list nobody reads keeps at most twice what it holds, however many come and go', async (t) => {
  const list = new SortedList(ascending);
  let most = 0;
  // Executions read back and answered while nothing lists them: each comes in and, later, goes.
  for (let i = 0; i < 100_000; i++) {
    list.insert(i);
    if (i >= 10) list.remove(i - 10);
    most = Math.max(most, list.held);
  }
  t.equal(list.size, 10);
  t.ok(most <= 2 * 64 + 10, `held at most ${most} entries for 10 live ones`);
  t.same(
    entries(list),
    Array.from({ length: 10 }, (_, i) => 99_990 + i),
  );
});

t.test('removals dropped early keep the order, duplicates and reinserted entries', async (t) => {
  const list = new SortedList(ascending);
  for (let i = 0; i < 1000; i++) list.insert(i);
  list.insert(500); // an equal entry, out of order: two of it
  for (let i = 0; i < 1000; i++) if (i % 3 !== 0) list.remove(i); // one 500 of the two among them
  t.equal(list.size, 335);
  t.ok(list.held <= 2 * list.size + 64, `${list.held} held for ${list.size}: dropped without a read`);
  list.insert(10); // back again, out of order
  const got = entries(list);
  t.equal(got.length, 336);
  t.same(got.slice(0, 5), [0, 3, 6, 9, 10]);
  t.ok(got.includes(500) && got.includes(999), 'the other 500 and the last entry stay');
  for (let i = 1; i < got.length; i++) if (got[i - 1]! > got[i]!) t.fail(`out of order at ${i}`);
});
