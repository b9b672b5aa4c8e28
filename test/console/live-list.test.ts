import t from 'tap';
import type { InstanceSummary } from '../../src/shared/api/process.js';
import { applyRead, readFor, type ListRows } from '../../src/console/model/live-list.js';
import { RowReads, type ReadSchedule } from '../../src/console/model/row-reads.js';
import type { RowRead } from '../../src/console/model/live-list.js';

function exec(id: string, second: number, extra: Partial<InstanceSummary> = {}): InstanceSummary {
  return {
    processInstanceId: id,
    processId: 'orders',
    processName: 'Orders',
    processVersion: '1',
    stateCd: 0,
    state: 'RUNNING',
    startTime: new Date(Date.UTC(2026, 0, 1, 0, 0, second)).toISOString(),
    endTime: null,
    correlationKey: null,
    parentInstanceId: null,
    childCount: 0,
    waitingNodeIds: [],
    environment: 'PRODUCTION',
    errorCode: null,
    ...extra,
  };
}

/** Three top-level rows (newest first), the middle one opened with one child. */
const ROWS: ListRows = {
  items: [exec('c', 30), exec('b', 20, { childCount: 1 }), exec('a', 10)],
  nextCursor: 'more',
  children: { b: [exec('b-1', 21, { parentInstanceId: 'b' })] },
};
const ids = (list: readonly InstanceSummary[]) => list.map((e) => e.processInstanceId);

t.test('an event of a row on screen re-reads it; a start elsewhere probes; anything else is left', async (t) => {
  t.same(readFor(ROWS, {}, { type: 'NODE_COMPLETED', processInstanceId: 'a' }), { id: 'a', kind: 'refresh' });
  t.same(
    readFor(ROWS, {}, { type: 'PROCESS_FAILED', processInstanceId: 'b-1' }),
    { id: 'b-1', kind: 'refresh' },
    'a child shown',
  );
  t.same(readFor(ROWS, {}, { type: 'PROCESS_STARTED', processInstanceId: 'd', processId: 'orders' }), {
    id: 'd',
    kind: 'probe',
  });
  t.equal(readFor(ROWS, {}, { type: 'NODE_STARTED', processInstanceId: 'zz' }), null, 'not on screen');
  t.equal(readFor(ROWS, {}, { type: 'heartbeat', processInstanceId: 'a' }), null, 'not a lifecycle event');
  const closed = { ...ROWS, children: {} };
  t.equal(
    readFor(closed, { processId: 'orders' }, { type: 'PROCESS_STARTED', processInstanceId: 'd', processId: 'other' }),
    null,
    'a start of a flow the filters leave out',
  );
});

t.test('a refreshed row is replaced where it stands, at the top or as a child', async (t) => {
  const done = exec('b', 20, { state: 'COMPLETED', stateCd: 1, childCount: 1 });
  const after = applyRead(ROWS, {}, { id: 'b', kind: 'refresh' }, done);
  t.same(ids(after.items), ['c', 'b', 'a'], 'same order');
  t.equal(after.items[1]!.state, 'COMPLETED');
  const child = applyRead(
    ROWS,
    {},
    { id: 'b-1', kind: 'refresh' },
    exec('b-1', 21, { parentInstanceId: 'b', state: 'FAILED' }),
  );
  t.equal(child.children.b![0]!.state, 'FAILED');
  const gone = applyRead(ROWS, { state: 'RUNNING' }, { id: 'b', kind: 'refresh' }, done);
  t.same(ids(gone.items), ['c', 'b', 'a'], 'a row that no longer matches stays until the list is loaded again');
});

t.test('a probed execution is added where it belongs by start time, if the filters take it', async (t) => {
  t.same(
    ids(applyRead(ROWS, {}, { id: 'd', kind: 'probe' }, exec('d', 40)).items),
    ['d', 'c', 'b', 'a'],
    'the newest at the top',
  );
  t.same(
    ids(applyRead(ROWS, {}, { id: 'd', kind: 'probe' }, exec('d', 25)).items),
    ['c', 'd', 'b', 'a'],
    'in start order',
  );
  t.same(
    ids(applyRead(ROWS, {}, { id: 'd', kind: 'probe' }, exec('d', 5)).items),
    ['c', 'b', 'a'],
    'belongs on a page not loaded',
  );
  t.same(
    ids(applyRead({ ...ROWS, nextCursor: null }, {}, { id: 'd', kind: 'probe' }, exec('d', 5)).items),
    ['c', 'b', 'a', 'd'],
    'at the end of the last page',
  );
  t.equal(
    applyRead(ROWS, { state: 'FAILED' }, { id: 'd', kind: 'probe' }, exec('d', 40)),
    ROWS,
    'not matching: unchanged',
  );
  t.same(ids(applyRead(ROWS, {}, { id: 'c', kind: 'probe' }, exec('c', 30)).items), ['c', 'b', 'a'], 'never twice');
});

t.test('a probed child of a row on screen counts in its parent, and shows under it when opened', async (t) => {
  const after = applyRead(ROWS, {}, { id: 'b-2', kind: 'probe' }, exec('b-2', 22, { parentInstanceId: 'b' }));
  t.equal(after.items[1]!.childCount, 2);
  t.same(ids(after.children.b!), ['b-2', 'b-1'], 'newest first under its parent');
  t.same(ids(after.items), ['c', 'b', 'a'], 'not at the top');
  const closedParent = applyRead(ROWS, {}, { id: 'a-1', kind: 'probe' }, exec('a-1', 11, { parentInstanceId: 'a' }));
  t.equal(closedParent.items[2]!.childCount, 1, 'counted');
  t.equal(closedParent.children.a, undefined, 'a closed row stays closed');
  t.equal(
    applyRead(ROWS, {}, { id: 'x-1', kind: 'probe' }, exec('x-1', 50, { parentInstanceId: 'x' })),
    ROWS,
    'parent not on screen',
  );
});

/** A clock and timers a test moves by hand. */
function manualSchedule() {
  let now = 0;
  const timers: { at: number; fn: () => void }[] = [];
  const schedule: ReadSchedule = {
    now: () => now,
    setTimer: (fn, ms) => {
      const timer = { at: now + ms, fn };
      timers.push(timer);
      return timer;
    },
    clearTimer: (h) => timers.splice(timers.indexOf(h as (typeof timers)[number]), 1),
  };
  const advance = (ms: number) => {
    now += ms;
    for (const timer of timers.filter((x) => x.at <= now)) {
      timers.splice(timers.indexOf(timer), 1);
      timer.fn();
    }
  };
  return { schedule, advance, pending: () => timers.length };
}

t.test('reads are batched: a row at most once per interval, however many events; probes capped', async (t) => {
  const clock = manualSchedule();
  const reads: RowRead[] = [];
  const missed: number[] = [];
  const batcher = new RowReads({
    read: (r) => reads.push(r),
    missed: (n) => missed.push(n),
    intervalMs: 1000,
    maxProbes: 2,
    schedule: clock.schedule,
  });
  for (let i = 0; i < 50; i++) batcher.request({ id: 'a', kind: 'refresh' });
  batcher.request({ id: 'b', kind: 'probe' });
  batcher.request({ id: 'b', kind: 'refresh' });
  t.same(reads, [], 'nothing read before the batch');
  clock.advance(0);
  t.same(
    reads,
    [
      { id: 'a', kind: 'refresh' },
      { id: 'b', kind: 'refresh' },
    ],
    'each row once; a refresh wins over a probe',
  );

  batcher.request({ id: 'a', kind: 'refresh' });
  clock.advance(999);
  t.equal(reads.length, 2, 'not again within the interval');
  clock.advance(1);
  t.equal(reads.length, 3, 'once the interval is over');

  clock.advance(5000);
  for (const id of ['p1', 'p2', 'p3', 'p4']) batcher.request({ id, kind: 'probe' });
  clock.advance(0);
  t.same(
    reads.slice(3).map((r) => r.id),
    ['p1', 'p2'],
    'two probes a batch',
  );
  t.same(missed, [2], 'the others reported missed');

  batcher.request({ id: 'a', kind: 'refresh' });
  batcher.dispose();
  clock.advance(10_000);
  t.equal(reads.length, 5, 'nothing after dispose');
  t.equal(clock.pending(), 0, 'no timer left');
});
