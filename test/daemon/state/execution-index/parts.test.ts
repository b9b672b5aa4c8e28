import t from 'tap';
import { uuidv7 } from '../../../../src/daemon/state/ids.js';
import { ExecutionIndex } from '../../../../src/daemon/state/execution-index/execution-index.js';
import { SortedList } from '../../../../src/daemon/state/execution-index/sorted.js';
import type { ExecutionSummary } from '../../../../src/daemon/state/execution-summary.js';

// The directory's parts one at a time: growth and slot reuse, the timer heap's order (equal due
// times, moved and removed timers), ids that are not UUIDs, and locations it cannot keep.

const AT = { segment: 1, offset: 0, length: 10 };

function summary(id: string, over: Partial<ExecutionSummary> = {}): ExecutionSummary {
  return {
    id,
    organization: 'acme',
    processId: 'orders',
    processVersion: '1',
    environment: 'PRODUCTION',
    stateCd: 0,
    root: null,
    parent: null,
    startMs: 0,
    triggered: false,
    child: false,
    correlationKey: null,
    dueMs: null,
    active: 0,
    waits: [],
    ...over,
  };
}

t.test('the columns grow past their capacity, and removed slots are reused', (t) => {
  const dir = new ExecutionIndex(16);
  const ids = Array.from({ length: 1000 }, (_, i) => uuidv7(new Date(1_700_000_000_000 + i)));
  for (const id of ids) dir.put(summary(id), AT);
  t.equal(dir.size, 1000);
  t.ok(dir.slotCapacity >= 1000);
  t.ok(
    ids.every((id) => dir.has(id)),
    'every id is found after growing',
  );
  const capacity = dir.slotCapacity;
  const slots = new Set(ids.map((id) => dir.slotOf(id)));
  for (let round = 0; round < 5; round++) {
    for (const id of ids.splice(0, 500)) t.ok(dir.remove(id));
    for (let i = 0; i < 500; i++) ids.push(uuidv7(new Date(1_700_000_100_000 + round * 1000 + i)));
    for (const id of ids.slice(-500)) dir.put(summary(id), AT);
  }
  t.equal(dir.slotCapacity, capacity, 'churn does not grow the columns');
  t.ok(
    ids.every((id) => slots.has(dir.slotOf(id))),
    'new executions take freed slots',
  );
  t.same(dir.list({ limit: 3 }), ids.slice(-3).reverse(), 'newest first');
  t.end();
});

t.test('timers come in due order, equal due times by id, moved and removed ones kept right', (t) => {
  const dir = new ExecutionIndex();
  const ids = Array.from({ length: 6 }, (_, i) => uuidv7(new Date(1_700_000_000_000 + i)));
  // Put in an order that is not the ids', all due at 50 but the first.
  for (const i of [3, 1, 5, 0, 4, 2]) dir.put(summary(ids[i]!, { dueMs: i === 0 ? 10 : 50 }), AT);
  t.equal(dir.nextDue(), 10);
  dir.put(summary(ids[4]!, { dueMs: 5 }), AT); // moved earlier
  dir.put(summary(ids[1]!, { dueMs: 99 }), AT); // moved later
  dir.put(summary(ids[5]!, { dueMs: null }), AT); // no timer any more
  t.ok(dir.remove(ids[3]!));
  t.same(dir.takeDue(4), [], 'nothing due before 5');
  t.same(dir.takeDue(50, 2), [ids[4], ids[0]]);
  t.same(dir.takeDue(50), [ids[2]], 'the rest at 50; an equal due time orders by id');
  t.equal(dir.nextDue(), 99);
  t.equal(dir.get(ids[4]!)?.summary.dueMs, null, 'a taken timer is no longer set');
  t.same(dir.takeDue(1000), [ids[1]]);
  t.equal(dir.nextDue(), null);
  t.end();
});

t.test('ids that are not lowercase UUIDs work as any other', (t) => {
  const dir = new ExecutionIndex();
  const upper = uuidv7().toUpperCase();
  const lower = uuidv7();
  for (const id of ['legacy-1', upper, lower, 'x']) dir.put(summary(id, { dueMs: 1 }), AT);
  t.same(dir.list({ limit: 10 }), ['x', 'legacy-1', lower, upper].sort().reverse());
  t.same(dir.list({ limit: 10, after: 'legacy-1' }), [lower, upper].sort().reverse());
  t.equal(dir.get('legacy-1')?.summary.id, 'legacy-1');
  t.same(dir.takeDue(1), ['legacy-1', upper, lower, 'x'].sort());
  t.ok(dir.remove('x'));
  t.notOk(dir.has('x'));
  t.ok(dir.has(upper));
  t.end();
});

t.test('a location past 4 GiB is refused', (t) => {
  const dir = new ExecutionIndex();
  t.throws(() => dir.put(summary(uuidv7()), { segment: 1, offset: 2 ** 32, length: 1 }), RangeError);
  t.equal(dir.size, 0);
  t.end();
});

t.test('message waits under keys of their own are found past the index growing, and after removes', (t) => {
  const dir = new ExecutionIndex();
  const ids = Array.from({ length: 2000 }, (_, i) => uuidv7(new Date(1_700_000_000_000 + i)));
  const waitOn = (i: number): ExecutionSummary =>
    summary(ids[i]!, {
      correlationKey: `order-${i}`,
      waits: [{ kind: 'event', node: 'paid', eventType: 'message', nodeId: 'paid', ref: 'paid', key: `order-${i}` }],
    });
  ids.forEach((_, i) => dir.put(waitOn(i), AT));
  // Every other one resumed: its bucket goes, and the table shifts the runs it sat in.
  for (let i = 0; i < ids.length; i += 2) t.ok(dir.remove(ids[i]!));
  let wrong = 0;
  for (let i = 0; i < ids.length; i++) {
    const got = dir.subscribers('acme', 'paid', `order-${i}`);
    const want = i % 2 === 0 ? [] : [{ id: ids[i], node: 'paid', nodeId: 'paid' }];
    if (JSON.stringify(got) !== JSON.stringify(want)) wrong++;
  }
  t.equal(wrong, 0, 'each key finds its own execution, and only while it waits');
  t.same(dir.subscribers('acme', 'paid', null), []);
  t.same(dir.subscribers('globex', 'paid', 'order-1'), [], 'another organization has none');
  t.end();
});

t.test('a sorted list takes removals while unsorted in one pass at the next read, in order after', (t) => {
  const list = new SortedList((a, b) => a - b);
  for (const x of [5, 1, 4, 2, 3, 4]) list.insert(x); // out of order: unsorted until read
  list.remove(4);
  list.remove(1);
  t.equal(list.size, 4, 'the size counts the removals at once');
  t.same(
    Array.from({ length: list.size }, (_, i) => list.at(i)),
    [2, 3, 4, 5],
    'one 4 and the 1 gone, the rest sorted',
  );
  list.remove(3); // sorted now: removed at once
  t.equal(
    list.lowerBound((e) => e - 4),
    1,
  );
  list.insert(0);
  list.remove(9); // not in the list: found out when next read
  t.throws(() => list.at(0), /not in the list/);
  t.end();
});

t.test('task pages merge flows and organizations in task key order and resume after a cursor', (t) => {
  const dir = new ExecutionIndex();
  const keys: Array<{ org: string; proc: string; key: string }> = [];
  const base = Date.parse('2026-11-01T00:00:00.000Z');
  for (let i = 0; i < 240; i++) {
    const id = uuidv7(new Date(base + i));
    const org = i % 3 === 0 ? 'globex' : 'acme';
    const proc = i % 2 === 0 ? 'orders' : 'refunds';
    // Few distinct times: ties order by execution, then by node (n10 before n2, as text).
    const since = base + (i % 7) * 1000;
    const nodes = i % 5 === 0 ? ['n2', 'n10'] : ['n3'];
    dir.put(
      summary(id, {
        organization: org,
        processId: proc,
        stateCd: 0,
        waits: nodes.map((node) => ({ kind: 'input' as const, node, since, assignee: null })),
      }),
      AT,
    );
    for (const node of nodes) keys.push({ org, proc, key: `${new Date(since).toISOString()}|${id}|${node}` });
  }
  // Some leave, as a read back takes them out.
  for (const k of keys.filter((_, i) => i % 11 === 0)) dir.remove(k.key.split('|')[1]!);
  const left = keys.filter((k) => dir.has(k.key.split('|')[1]!));
  t.equal(dir.taskCount, left.length, 'every task counted');
  t.equal(
    new Date(dir.oldestTaskSince()!).toISOString(),
    left.map((k) => k.key.slice(0, 24)).sort()[0],
    'the oldest task',
  );
  const cases: Array<[string | null, string | undefined]> = [
    [null, undefined],
    ['acme', undefined],
    [null, 'refunds'],
    ['globex', 'orders'],
    ['initech', undefined],
    ['acme', 'nothing'],
  ];
  for (const [org, proc] of cases) {
    const want = left
      .filter((k) => (org === null || k.org === org) && (proc === undefined || k.proc === proc))
      .map((k) => k.key)
      .sort();
    const got: string[] = [];
    let cursor: string | undefined;
    // Pages of 7, each from after the last key of the one before: bounded by the tasks there are.
    for (let page = 0; page <= left.length; page++) {
      const tasks = dir.taskPage(org, proc, cursor, 7);
      got.push(...tasks.map((x) => `${new Date(x.since).toISOString()}|${x.id}|${x.node}`));
      if (tasks.length < 7) break;
      cursor = got.at(-1);
    }
    t.same(got, want, `the pages of ${org ?? 'every organization'}, ${proc ?? 'every flow'}`);
  }
  t.same(dir.taskPage(null, undefined, 'zzz', 10), [], 'a cursor after every key');
  t.end();
});
