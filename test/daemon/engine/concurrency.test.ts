// A flow's concurrency limit through the engine: queued starts wait at their start event and
// start in order as holders end, per key, by priority; cancel-new and cancel-oldest; a cancel
// of a queued start; queued starts kept over a restart (the cold side too) and started once.
import t from 'tap';
import { STATE, STATUS, type Execution } from '../../../src/daemon/state/state.js';
import { ConcurrencySlots } from '../../../src/daemon/state/concurrency-slots.js';
import { engineHarness, type EngineHarness } from '../../helpers/engine.js';

const ORG = { organization: 'default' } as const;

const limited = (concurrency: string): string => `processId: AUTO
name: Limited
concurrency: ${concurrency}
nodes:
  start: { type: startEvent, next: ask }
  ask: { type: inputNode, inputType: textbox, next: done }
  done: { type: endEvent }
`;

/** Whether `inst` waits for a slot (its start event waits with a queue wait). */
const queued = (inst: Execution): boolean =>
  Object.values(inst.nodes).some((n) => n.statusCd === STATUS.WAITING && n.wait?.kind === 'queue');
/** Whether `inst` holds its slot and waits at `ask`. */
const atAsk = (inst: Execution): boolean =>
  Object.values(inst.nodes).some((n) => n.nodeId === 'ask' && n.statusCd === STATUS.WAITING);

async function startAll(
  h: EngineHarness,
  pid: string,
  data: readonly Record<string, unknown>[],
  priority?: (i: number) => number,
): Promise<string[]> {
  const ids: string[] = [];
  for (const [i, d] of data.entries()) {
    const p = priority?.(i);
    const inst = await h.engine.start({ ...ORG, processId: pid, data: d, ...(p !== undefined && { priority: p }) });
    ids.push(inst.processInstanceId);
  }
  return ids;
}

const answer = (h: EngineHarness, id: string) =>
  h.engine.submitTask({ ...ORG, processInstanceId: id, nodeId: 'ask', action: 'COMPLETE', data: { inputValue: 'x' } });

async function states(h: EngineHarness, ids: readonly string[]): Promise<string> {
  const out: string[] = [];
  for (const id of ids) {
    const inst = await h.get(id);
    out.push(
      inst.stateCd === STATE.COMPLETED
        ? 'done'
        : inst.stateCd === STATE.CANCELLED
          ? 'cancelled'
          : queued(inst)
            ? 'queued'
            : atAsk(inst)
              ? 'ask'
              : '?',
    );
  }
  return out.join(' ');
}

t.test('queue: at most `limit` hold a slot; each end starts the oldest queued one', async (t) => {
  const h = await engineHarness(t);
  const pid = await h.publish(limited('{ limit: 2 }'));
  const ids = await startAll(h, pid, [{}, {}, {}, {}, {}]);
  t.equal(await states(h, ids), 'ask ask queued queued queued');
  const first = await h.get(ids[2]!);
  t.match(JSON.stringify(first.logs.at(-1)), /queued: waiting for a slot/, 'its log says it is queued');
  await answer(h, ids[0]!);
  t.equal(await states(h, ids), 'done ask ask queued queued', 'the oldest queued took the slot');
  await answer(h, ids[2]!);
  await answer(h, ids[1]!);
  t.equal(await states(h, ids), 'done done done ask ask');
  await answer(h, ids[3]!);
  await answer(h, ids[4]!);
  t.equal(await states(h, ids), 'done done done done done');
  t.equal(ConcurrencySlots.of(h.store.state).queuedTotal, 0, 'nothing left queued');
});

t.test('a key: the limit holds per key, and another key is never held back', async (t) => {
  const h = await engineHarness(t);
  const pid = await h.publish(limited('{ limit: 1, key: "{customerId}" }'));
  const ids = await startAll(h, pid, [
    { customerId: 'A' },
    { customerId: 'A' },
    { customerId: 'A' },
    { customerId: 'B' },
  ]);
  t.equal(await states(h, ids), 'ask queued queued ask', "B starts at once, whatever A's backlog");
  await answer(h, ids[3]!);
  t.equal(await states(h, ids), 'ask queued queued done', "B's end starts none of A's");
  await answer(h, ids[0]!);
  t.equal(await states(h, ids), 'done ask queued done');
});

t.test('priority: a higher priority jumps the queue; equal ones keep their order', async (t) => {
  const h = await engineHarness(t);
  const pid = await h.publish(limited('{ limit: 1 }'));
  const ids = await startAll(h, pid, [{}, {}, {}, {}], (i) => [0, 0, 5, 5][i]!);
  t.equal(await states(h, ids), 'ask queued queued queued');
  await answer(h, ids[0]!);
  t.equal(await states(h, ids), 'done queued ask queued', 'priority 5 first');
  await answer(h, ids[2]!);
  t.equal(await states(h, ids), 'done queued done ask', 'the other priority 5 next');
  await answer(h, ids[3]!);
  t.equal(await states(h, ids), 'done ask done done');
});

t.test('cancel-new refuses the start over the limit; cancel-oldest cancels the oldest holder', async (t) => {
  const h = await engineHarness(t);
  const refusing = await h.publish(limited('{ limit: 1, policy: cancel-new }'));
  const [one] = await startAll(h, refusing, [{}]);
  await t.rejects(h.engine.start({ ...ORG, processId: refusing, data: {} }), {
    code: 'CONCURRENCY_LIMIT_REACHED',
    details: { limit: 1 },
  });
  await answer(h, one!);
  await t.resolves(h.engine.start({ ...ORG, processId: refusing, data: {} }), 'a slot is free again');

  const cancelling = await h.publish(limited('{ limit: 2, policy: cancel-oldest }'));
  const ids = await startAll(h, cancelling, [{}, {}, {}]);
  t.equal(await states(h, ids), 'cancelled ask ask', 'the oldest made way');
});

t.test('a queued start cancelled leaves the queue; a holder cancelled passes its slot on', async (t) => {
  const h = await engineHarness(t);
  const pid = await h.publish(limited('{ limit: 1 }'));
  const ids = await startAll(h, pid, [{}, {}, {}]);
  await h.engine.cancel({ ...ORG, processInstanceId: ids[1]! });
  t.equal(await states(h, ids), 'ask cancelled queued');
  await h.engine.cancel({ ...ORG, processInstanceId: ids[0]! });
  t.equal(await states(h, ids), 'cancelled cancelled ask');
});

for (const cold of [false, true])
  t.test(`queued starts survive a restart and each starts once${cold ? ' (executions at rest)' : ''}`, async (t) => {
    // A cache of one: the restart's open leaves every execution unread, as the daemon's does.
    const options = cold ? { executionCache: 1 } : {};
    let h = await engineHarness(t, undefined, undefined, options);
    const pid = await h.publish(limited('{ limit: 2 }'));
    const ids = await startAll(
      h,
      pid,
      Array.from({ length: 8 }, () => ({})),
    );
    await h.rest();
    h = await h.restart();
    t.equal(await states(h, ids), 'ask ask queued queued queued queued queued queued');
    for (const id of ids) await answer(h, id).catch(() => undefined); // queued ones refuse: NODE_NOT_WAITING
    h = await h.restart();
    for (let round = 0; round < 8 && (await states(h, ids)).includes('ask'); round++)
      for (const id of ids) if (atAsk(await h.get(id))) await answer(h, id);
    t.equal(await states(h, ids), ids.map(() => 'done').join(' '));
    for (const id of ids) {
      const inst = await h.get(id);
      t.equal(Object.values(inst.nodes).filter((n) => n.nodeId === 'ask').length, 1, 'asked once');
    }
  });

t.test('a flow started by callProcess is neither held to the limit nor holds a slot', async (t) => {
  const h = await engineHarness(t);
  const pid = await h.publish(limited('{ limit: 1, policy: cancel-new }'));
  const caller = await h.publish(`processId: AUTO
name: Caller
nodes:
  start: { type: startEvent, next: call }
  call: { type: callProcess, processId: ${pid}, next: done }
  done: { type: endEvent }
`);
  await startAll(h, caller, [{}, {}]);
  const called = Object.values(h.store.state.instances).filter((i) => i?.processId === pid);
  t.equal(called.length, 2, 'both called, though the limit is 1');
  t.ok(
    called.every((i) => i!.concurrency === undefined),
    'neither holds a slot',
  );
  await t.resolves(
    h.engine.start({ ...ORG, processId: pid, data: {} }),
    'a start of its own still finds the slot free',
  );
});
