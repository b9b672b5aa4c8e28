import t from 'tap';
import { randomUUID } from 'node:crypto';
import { ExecutionTable } from '../../../src/daemon/state/execution-table.js';
import { execution } from '../../../src/daemon/state/executions.js';
import { initialState, STATE, type Execution } from '../../../src/daemon/state/state.js';
import { ExecutionCache } from '../../../src/daemon/at-rest/execution-cache.js';
import type { EvictableEntries } from '../../../src/daemon/store/durable-store.js';
import { WAITS_FLOW as FLOW } from '../../helpers/cold.js';
import { engineHarness, type EngineHarness } from '../../helpers/engine.js';
import { eventually } from '../../helpers/eventually.js';
import { appliedAtCommit } from '../../helpers/store-suite.js';
import { applyRecord } from '../../../src/daemon/state/records.js';

// The engine's bounded cache over the JSON store (at-rest/execution-cache.ts): executions at rest
// that a checkpoint wrote leave memory and are read back from their segments when a step or a
// read names them; the store refuses a record that reaches one not read back.

/** A flow that waits for the message `go` under the start's correlation key. */
const WAITS_FOR_GO = `processId: AUTO
name: Waits for go
nodes:
  start: { type: startEvent, next: hear }
  hear: { type: intermediateCatchEvent, eventType: message, messageRef: go, next: end }
  end: { type: endEvent }
`;

const coldCount = (h: EngineHarness): number => [...h.engine.executions.coldIds()].length;
const resident = (h: EngineHarness): number => ExecutionTable.of(h.store.state).size;

t.test(
  'with a cache of 0, executions at rest leave memory and come back for an answer, a message, a timer and a child',
  async (t) => {
    const h = await engineHarness(t, undefined, undefined, { executionCache: 0, cold: false });
    const pid = await h.publish(FLOW);
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await h.start(pid, {}, { correlationKey: `o-${i}` })).processInstanceId);
    const id = ids[0]!;
    const gone = (x: string) => execution(h.store.state, x) === undefined;

    // A checkpoint makes them clean; the pass after it evicts every tree at rest.
    await eventually('every execution evicted', () => coldCount(h) === 5 && resident(h) === 0);
    t.equal(h.engine.executions.coldSummary(id)?.processId, pid, 'a cold execution is listed by its summary');

    await h.engine.submitTask({
      organization: null,
      processInstanceId: id,
      nodeId: 'ask',
      action: 'COMPLETE',
      data: { inputValue: 'x' },
    });
    t.equal((await h.get(id)).variables.inputValue, 'x', 'the answer reached it, read back from its segment');
    t.equal(coldCount(h), 4, 'the others stay cold');

    await eventually('evicted again', () => gone(id));
    const res = await h.engine.publishEvent({
      organization: 'default',
      eventType: 'paid',
      correlationKey: 'o-0',
      data: {},
    });
    t.equal(res.status, 'resumed', 'the message found it through the subscription index');

    await eventually('waiting on its timer, evicted', () => gone(id));
    h.advance(60 * 60 * 1000 + 1);
    const child = await h.waitFor(
      (e) => e.type === 'PROCESS_STARTED' && e.processInstanceId !== id && !ids.includes(e.processInstanceId),
    );
    const childId = child.processInstanceId;
    await eventually('parent and child evicted together', () => gone(id) && gone(childId));
    await h.engine.submitTask({
      organization: null,
      processInstanceId: childId,
      nodeId: 'wait',
      action: 'COMPLETE',
      data: { inputValue: 'y' },
    });
    t.equal((await h.get(id)).stateCd, STATE.COMPLETED, "the child's end completed the parent, read back with it");

    // A restart opens every cold one again from its segment.
    const again = await h.restart();
    for (const other of ids.slice(1)) {
      const inst = await again.get(other);
      t.equal(inst.stateCd, STATE.RUNNING, `${other} still waits after the restart`);
    }
  },
);

t.test('a record that reaches an execution not read back fails loudly instead of applying to nothing', async (t) => {
  const h = await engineHarness(t, undefined, undefined, { executionCache: 0, cold: false });
  const pid = await h.publish(FLOW);
  const id = (await h.start(pid)).processInstanceId;
  await eventually('evicted', () => coldCount(h) === 1);
  t.throws(
    () =>
      h.store.transact(
        appliedAtCommit(h.store, applyRecord, (emit) => emit({ type: 'instance.state', instanceId: id } as never)),
      ),
    /not resident/,
    'the store refuses it before it applies',
  );
  t.equal(h.store.failed?.code, 'STORE_FAILED', 'and fails: a step that did not name its executions is a defect');
});

t.test('a bounded cache keeps the executions last touched', async (t) => {
  const h = await engineHarness(t, undefined, undefined, { executionCache: 10, cold: false });
  const pid = await h.publish(FLOW);
  const ids: string[] = [];
  for (let i = 0; i < 40; i++) ids.push((await h.start(pid, {}, { correlationKey: `k-${i}` })).processInstanceId);
  await eventually('down to the capacity', () => resident(h) <= 10 && coldCount(h) >= 30);
  t.ok(resident(h) + coldCount(h) === 40, 'every execution is resident or cold, none lost');
  // Read one back: it is the most recently used, so the next pass keeps it.
  const first = ids[0]!;
  t.equal((await h.get(first)).processInstanceId, first, 'read back for a read');
  t.ok(execution(h.store.state, first), 'resident after the read');
});

t.test('after a restart, executions the open left unread wake for their timers, messages and answers', async (t) => {
  const h = await engineHarness(t, undefined, undefined, { executionCache: 0, cold: false });
  const pid = await h.publish(FLOW);
  const ids: string[] = [];
  for (let i = 0; i < 3; i++) ids.push((await h.start(pid, {}, { correlationKey: `r-${i}` })).processInstanceId);
  // The first two answered and paid: they wait on their one-hour timer; the third waits as it started.
  for (const id of ids.slice(0, 2)) {
    await h.engine.submitTask({
      organization: null,
      processInstanceId: id,
      nodeId: 'ask',
      action: 'COMPLETE',
      data: { inputValue: 'y' },
    });
    const i = ids.indexOf(id);
    await h.engine.publishEvent({ organization: 'default', eventType: 'paid', correlationKey: `r-${i}`, data: {} });
  }
  const again = await h.restart();
  t.equal(coldCount(again), 3, 'the open read none of them: all three cold');
  t.equal(resident(again), 0);
  t.equal(again.engine.timerCount, 2, 'one wake armed for each execution with a timer');
  // A message and an answer reach the third through the indexes made from its summary.
  const paid = await again.engine.publishEvent({
    organization: 'default',
    eventType: 'paid',
    correlationKey: 'r-2',
    data: {},
  });
  t.equal(paid.status, 'resumed', 'the subscription came from the summary');
  await again.engine.submitTask({
    organization: null,
    processInstanceId: ids[2]!,
    nodeId: 'ask',
    action: 'COMPLETE',
    data: { inputValue: 'z' },
  });
  t.equal((await again.get(ids[2]!)).variables.inputValue, 'z', 'the task came from the summary');
  // The wake reads the first two back and arms their timers exactly; the timer fires.
  again.advance(60 * 60 * 1000 + 1);
  for (const id of ids.slice(0, 2)) {
    const fired = await again.waitFor(
      (e) => e.type === 'NODE_COMPLETED' && e.processInstanceId === id && e.nodeId === 'nap',
    );
    t.equal(fired.processInstanceId, id, `${id} woke at its timer, read back from its segment`);
  }
});

t.test('an event thrown by a running execution wakes a subscriber that is not in memory', async (t) => {
  const h = await engineHarness(t, undefined, undefined, { executionCache: 0, cold: false });
  const waiter = await h.publish(WAITS_FOR_GO);
  const thrower = await h.publish(`processId: AUTO
name: Throws go
nodes:
  start: { type: startEvent, next: say }
  say: { type: intermediateThrowEvent, eventType: message, messageRef: go, correlationKey: "k-{n}", next: end }
  end: { type: endEvent }
`);
  const id = (await h.start(waiter, {}, { correlationKey: 'k-1' })).processInstanceId;
  await eventually('the waiter evicted', () => execution(h.store.state, id) === undefined && coldCount(h) === 1);
  const other = await h.start(thrower, { n: 1 });
  t.equal((await h.get(other.processInstanceId)).stateCd, STATE.COMPLETED, 'the thrower ran to its end');
  await eventually('the waiter resumed', async () => (await h.get(id)).stateCd === STATE.COMPLETED);
  t.equal((await h.get(id)).stateCd, STATE.COMPLETED, 'the cold waiter was read back and resumed');
});

t.test('an event kept for executions not in memory is delivered to them after a restart', async (t) => {
  const h = await engineHarness(t, undefined, undefined, { executionCache: 0, cold: false });
  const waiter = await h.publish(WAITS_FOR_GO);
  const id = (await h.start(waiter, {}, { correlationKey: 'k-7' })).processInstanceId;
  await eventually('the waiter evicted', () => execution(h.store.state, id) === undefined && coldCount(h) === 1);
  // What a throw's step leaves when the daemon stops before the step that delivers it here.
  await h.store.commit({
    type: 'event.thrown',
    event: {
      id: randomUUID(),
      instanceId: randomUUID(),
      organization: 'default',
      eventType: 'go',
      correlationKey: 'k-7',
      data: { n: 7 },
      thrownAt: new Date().toISOString(),
      here: true,
    },
  });
  const again = await h.restart();
  const inst = await again.get(id);
  t.equal(inst.stateCd, STATE.COMPLETED, 'the kept event resumed the cold waiter at the restart');
  t.same(inst.variables.n, 7, 'with its data');
  t.same(Object.keys(again.store.state.thrown), [], 'and was written passed');
});

const NAPS = `processId: AUTO
name: Naps
nodes:
  start: { type: startEvent, next: nap }
  nap: { type: intermediateCatchEvent, eventType: timer, duration: 1h, next: done }
  done: { type: endEvent }
`;

t.test('a read back whose partition moved meanwhile stays out; the others read with it come in', async (t) => {
  const h = await engineHarness(t, undefined, undefined, { executionCache: 0, cold: false });
  const pid = await h.publish(NAPS);
  const a = (await h.start(pid)).processInstanceId;
  const b = (await h.start(pid)).processInstanceId;
  await eventually('both cold', () => coldCount(h) === 2 && resident(h) === 0);
  // A store whose partitions move (PgStore's port): a's partition given up and taken again
  // while its row is read, so what was read may be older than what its new hold loaded.
  const store: EvictableEntries = h.store.evictable!;
  const read = store.read.bind(store);
  let epochOfA = 1;
  store.epoch = (key) => (key === a ? epochOfA : 1);
  store.read = async (key) => {
    const doc = await read(key);
    if (key === a) epochOfA = 2;
    return doc;
  };
  h.advance(60 * 60 * 1000 + 1); // both timers due: read back in one batch
  await eventually('b, read with it, ran on', async () => (await h.get(b)).stateCd === STATE.COMPLETED);
  t.equal(execution(h.store.state, a), undefined, 'a, read under the hold before, did not come in');
  t.ok(h.engine.executions.coldSummary(a) !== undefined, 'a is still cold');
  // No engine error either (the harness fails a test on one): a move is not a failure.
});

t.test('cold timers whose executions could not be read back are set again, and fire once they can be', async (t) => {
  const h = await engineHarness(t, undefined, undefined, { executionCache: 0, cold: false });
  const pid = await h.publish(NAPS);
  const id = (await h.start(pid)).processInstanceId;
  await eventually('cold', () => coldCount(h) === 1 && resident(h) === 0);
  const store: EvictableEntries = h.store.evictable!;
  const read = store.read.bind(store);
  let failures = 1;
  store.read = async (key) => {
    if (failures-- > 0) throw new Error('the disk is away');
    return read(key);
  };
  h.advance(60 * 60 * 1000 + 1);
  await eventually('the failed read said', () => h.errors.length === 1);
  h.errors.length = 0;
  t.equal(execution(h.store.state, id), undefined, 'not read back');
  h.advance(5_000);
  const done = () => h.events.some((e) => e.type === 'PROCESS_COMPLETED' && e.processInstanceId === id);
  await eventually('its timer fired on the next try', done);
});

t.test('executions touched and gone before any pass are forgotten once twice the capacity', async (t) => {
  const state = initialState();
  const store = {
    clean: () => true,
    read: async () => ({}),
    unread: null,
    onCheckpoint: () => undefined,
    guard: () => undefined,
  } satisfies EvictableEntries;
  const cache = new ExecutionCache({
    state,
    store,
    capacity: 4,
    summarize: () => {
      throw new Error('nothing is evicted here');
    },
    checkpoint: async () => undefined,
    onError: (err) => t.fail(String(err)),
  });
  const kept = randomUUID();
  ExecutionTable.of(state).put({ processInstanceId: kept } as Execution);
  cache.touched([kept]);
  // Read back, answered and archived as fast as the next: never more resident than the capacity,
  // so no pass comes to clear what they touched.
  let most = 0;
  for (let i = 0; i < 1000; i++) {
    cache.touched([randomUUID()]);
    most = Math.max(most, cache.recentCount);
  }
  t.ok(most <= 2 * 4 + 64 + 1, `at most ${most} kept for 1 resident`);
  t.ok(cache.recentCount < 2 * 4 + 64 + 1);
  t.ok(cache.recentCount >= 1, 'the resident one stays');
  cache.close();
});
