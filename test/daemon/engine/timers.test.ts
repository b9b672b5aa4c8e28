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

t.test('a deadline beyond what setTimeout takes (30 days) is waited for in chunks, not fired at once', async (t) => {
  const DAY = 24 * 3600_000;
  let now = Date.parse('2026-11-21T10:00:00.000Z');
  let reads = 0;
  const fired: string[] = [];
  let onFire!: () => void;
  const firing = new Promise<void>((resolve) => (onFire = resolve));
  const q = new TimerQueue(
    (key) => {
      fired.push(key);
      onFire();
    },
    () => (reads++, now),
  );
  t.teardown(() => q.close());
  q.set('far', now + 30 * DAY);
  t.equal(reads, 1, 'armed once');
  // setTimeout with a delay over 2^31-1 ms fires after 1 ms instead (the queue would then wake,
  // read the clock and re-arm, again and again). Node fires timers by due time, so that 1 ms
  // timer would run before this 20 ms one, whatever the machine's speed.
  await new Promise((resolve) => setTimeout(resolve, 20));
  t.equal(reads, 1, 'no early wake-up: the armed delay is within what setTimeout takes');
  t.same(fired, []);
  now += 30 * DAY;
  q.poke();
  await firing;
  t.same(fired, ['far'], 'fires once due');
});

t.test('a held queue fires nothing until released, then what came due', async (t) => {
  let now = 1000;
  const fired: string[] = [];
  let done: () => void = () => undefined;
  const both = new Promise<void>((resolve) => (done = resolve));
  const q = new TimerQueue(
    (key) => {
      fired.push(key);
      if (fired.length === 2) done();
    },
    () => now,
  );
  t.teardown(() => q.close());
  q.hold();
  q.set('overdue', 500);
  q.set('later', 1500);
  q.set('gone', 600);
  q.delete('gone');
  q.poke();
  // A timer the queue armed (delay 0) would fire before this one.
  await new Promise((resolve) => setTimeout(resolve, 1));
  t.same(fired, [], 'nothing while held');
  now = 2000;
  q.release();
  await both;
  t.same(fired, ['overdue', 'later'], 'released: the due ones in order, the deleted one not');
  t.equal(q.size, 0);
});
