import t from 'tap';
import { TimerQueue } from '../../../src/daemon/engine/timers.js';

t.test('timers fire in due order, once; replaced and deleted ones do not fire', async (t) => {
  let now = 1_000;
  const fired: string[] = [];
  let done!: () => void;
  const all = new Promise<void>((r) => (done = r));
  const q = new TimerQueue(
    (key) => {
      fired.push(key);
      if (fired.length === 3) done();
    },
    () => now,
  );
  q.set('c', 3_000);
  q.set('a', 1_500);
  q.set('b', 2_000);
  q.set('x', 1_800);
  q.delete('x');
  q.set('b', 2_500); // replaced
  now = 10_000;
  q.poke();
  await all;
  t.same(fired, ['a', 'b', 'c']);
  t.equal(q.size, 0);
  q.close();
});

t.test('deleting many timers long before they are due does not keep their heap entries', async (t) => {
  const q = new TimerQueue(
    () => undefined,
    () => 0,
  );
  for (let i = 0; i < 10_000; i++) q.set(`k${i}`, 1_000_000 + i);
  for (let i = 0; i < 9_990; i++) q.delete(`k${i}`);
  t.equal(q.size, 10);
  t.ok(q.heapSize < 200, `the heap was rebuilt (${q.heapSize} entries for 10 live timers)`);
  q.close();
});
