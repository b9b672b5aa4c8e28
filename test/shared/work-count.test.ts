import t from 'tap';
import { WorkCount } from '../../src/shared/work-count.js';
import { deferred } from '../helpers/deferred.js';

t.test('idle() resolves at once when nothing is under way', async (t) => {
  const work = new WorkCount();
  t.equal(work.size, 0);
  await work.idle();
});

t.test('idle() waits for every tracked promise, fulfilled or rejected', async (t) => {
  const work = new WorkCount();
  const a = deferred();
  const b = deferred();
  t.equal(work.track(a.promise), a.promise, 'track returns the promise itself');
  void work.track(b.promise).catch(() => undefined);
  t.equal(work.size, 2);
  let idle = false;
  const waiting = work.idle().then(() => (idle = true));
  a.resolve();
  await a.promise;
  await new Promise((r) => setImmediate(r));
  t.equal(idle, false, 'one still under way');
  t.equal(work.size, 1);
  b.reject(new Error('failed work counts as settled'));
  await waiting;
  t.equal(idle, true);
  t.equal(work.size, 0);
});

t.test('work added while waiting is waited for too', async (t) => {
  const work = new WorkCount();
  const first = deferred();
  const second = deferred();
  void work.track(first.promise);
  let idle = false;
  const waiting = work.idle().then(() => (idle = true));
  // The first work, as it ends, starts more (as an archive batch follows a step).
  void first.promise.then(() => void work.track(second.promise));
  first.resolve();
  await first.promise;
  await new Promise((r) => setImmediate(r));
  t.equal(idle, false, 'the follow-up is under way');
  second.resolve();
  await waiting;
  t.equal(work.size, 0);
});
