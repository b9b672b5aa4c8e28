import t from 'tap';
import { DROP_AT_MOST, SortedList } from '../../../../src/daemon/state/execution-index/sorted.js';

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

t.test('a long list nobody reads drops its removals by DROP_AT_MOST, not by half of it', async (t) => {
  const list = new SortedList(ascending);
  const n = 200_000;
  for (let i = 0; i < n; i++) list.insert(i);
  let most = 0;
  // Read back and answered, oldest first, while nothing lists them (the directory's listing).
  for (let i = 0; i < 150_000; i++) {
    list.remove(i);
    most = Math.max(most, list.held - list.size);
  }
  t.ok(most <= DROP_AT_MOST, `at most ${most} removals held (DROP_AT_MOST ${DROP_AT_MOST})`);
  t.equal(list.size, 50_000);
  t.same(entries(list).slice(0, 3), [150_000, 150_001, 150_002]);
});

t.test('drops in passes match a plain model, with reused and repeated entries', async (t) => {
  // A seeded walk of inserts and removals (slots freed and used again), checked against an array.
  let seed = 7;
  const rnd = (k: number) => {
    // mulberry32
    seed = (seed + 0x6d2b79f5) | 0;
    let z = Math.imul(seed ^ (seed >>> 15), seed | 1);
    z ^= z + Math.imul(z ^ (z >>> 7), z | 61);
    return ((z ^ (z >>> 14)) >>> 0) % k;
  };
  // Newest first, as the directory lists its slots: entries are not in the order of their numbers.
  const descending = (a: number, b: number) => b - a;
  const list = new SortedList(descending);
  const model: number[] = [];
  for (let step = 0; step < 60_000; step++) {
    // Removals as often as inserts for a while (the list stays short, passes come often), then fewer.
    if (model.length > 0 && rnd(step < 30_000 ? 2 : 3) === 0) {
      const x = model.splice(rnd(model.length), 1)[0]!;
      list.remove(x);
    } else {
      const x = rnd(50_000);
      model.push(x);
      list.insert(x);
    }
    if (step % 5_000 === 4_999) t.same(entries(list), [...model].sort(descending), `after ${step + 1} steps`);
  }
  t.throws(() => {
    const fresh = new SortedList(ascending);
    for (let i = 0; i < 100; i++) fresh.insert(i);
    for (let i = 0; i < 70; i++) fresh.remove(i === 0 ? 1_000 : i); // 1,000 was never in it
    fresh.at(0);
  }, /1000 is not in the list/);
});

t.test('a pass keeps the entries above every removal, met before them', async (t) => {
  // Newest first: the largest entries are read first, and are past the removals a pass marked
  // (the base is above what the tests before made room for).
  const list = new SortedList((a, b) => b - a);
  const base = 5_000_000;
  for (let i = 0; i < 200; i++) list.insert(base + i);
  t.equal(list.at(0), base + 199);
  for (let i = 50; i < 150; i++) list.remove(base + i); // from the middle: none is dropped at once
  t.equal(list.held, 200);
  const want = [
    ...Array.from({ length: 50 }, (_, i) => base + 199 - i),
    ...Array.from({ length: 50 }, (_, i) => base + 49 - i),
  ];
  t.same(entries(list), want);
});
