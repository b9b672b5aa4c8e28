import t from 'tap';
import { SortedChunks } from '../../src/shared/sorted-chunks.js';

const byNumber = (a: number, b: number) => a - b;

/** A seeded generator (mulberry32): the same run each time. */
function random(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let x = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x;
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  };
}

t.test('inserts, removals and reads agree with a sorted array, across many chunks', async (t) => {
  const next = random(7);
  const list = new SortedChunks(byNumber);
  const model = new Set<number>();
  const wrong: string[] = [];
  for (let step = 0; step < 20_000; step++) {
    const x = Math.floor(next() * 5_000);
    if (next() < 0.6) {
      if (list.insert(x) === model.has(x)) wrong.push(`insert ${x} at step ${step}`);
      model.add(x);
    } else if (list.remove(x) !== model.delete(x)) wrong.push(`remove ${x} at step ${step}`);
    if (step % 2_000 !== 0) continue;
    const sorted = [...model].sort(byNumber);
    t.same([...list.after(() => false)], sorted, `every item in order at step ${step}`);
  }
  t.same(wrong, [], 'each insert and removal said whether it changed the list');
  const sorted = [...model].sort(byNumber);
  t.equal(list.length, model.size, 'its length');
  t.equal(list.first(), sorted[0], 'its first item');
  t.ok(sorted.length > 1_500, `${sorted.length} items: several chunks`);
  const cursor = sorted[Math.floor(sorted.length / 2)]!;
  t.same(
    [...list.after((x) => x <= cursor)],
    sorted.filter((x) => x > cursor),
    'the items after a cursor',
  );
  t.same([...list.after((x) => x <= 1e9)], [], 'none after the last');
});

t.test('a walk appends unsorted, then sorts once; an empty list', async (t) => {
  const list = new SortedChunks(byNumber);
  t.equal(list.first(), undefined);
  t.notOk(list.remove(1), 'nothing to remove');
  const xs = Array.from({ length: 3_000 }, (_, i) => (i * 7919) % 3_000);
  for (const x of xs) list.insert(x, true);
  list.sort();
  t.same([...list.after(() => false)], [...xs].sort(byNumber));
  t.notOk(list.insert(1_234), 'an equal item is not added twice');
  t.ok(list.remove(0) && list.remove(2_999), 'the ends removed');
  t.equal(list.first(), 1);
  t.equal(list.length, 2_998);
});
