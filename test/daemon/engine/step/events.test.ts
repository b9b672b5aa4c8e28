import t from 'tap';
import { eventSeen } from '../../../../src/daemon/engine/step/events.js';
import { subscriptionsFor } from '../../../../src/daemon/state/subscriptions.js';
import { STATE, STATUS } from '../../../../src/daemon/state/state.js';
import { MemoryStep, typesOf } from '../../../helpers/step.js';

const CATCH = `processId: AUTO
name: Catch
nodes:
  start: { type: startEvent, next: wait }
  wait: { type: intermediateCatchEvent, eventType: message, messageRef: paid, correlationKey: "{orderId}", next: done }
  done: { type: endEvent }
`;

const THROW = `processId: AUTO
name: Throw
nodes:
  start: { type: startEvent, next: say }
  say: { type: intermediateThrowEvent, eventType: message, messageRef: paid, correlationKey: "{orderId}", data: { by: thrower }, next: done }
  done: { type: endEvent }
`;

const event = (over: Partial<Parameters<typeof base>[0]> = {}) => base(over);
function base(over: {
  correlationKey?: string | null;
  ttlSeconds?: number;
  messageId?: string | null;
  elsewhere?: Array<{ processInstanceId: string; nodeId: string }>;
}) {
  const messageId = over.messageId ?? null;
  return {
    kind: 'event' as const,
    organization: 'default',
    eventType: 'paid',
    correlationKey: over.correlationKey === undefined ? 'o1' : over.correlationKey,
    data: { amount: 5 },
    ttlSeconds: over.ttlSeconds ?? 0,
    messageId,
    dedupKey: messageId === null ? null : `default|${messageId}`,
    elsewhere: over.elsewhere ?? [],
  };
}

async function catching(m: MemoryStep, orderId = 'o1'): Promise<string> {
  const pid = await m.publish(CATCH);
  return m.start(pid, { orderId }).answer.processInstanceId;
}

t.test('an event resumes the execution waiting for its type and key, and runs it on', async (t) => {
  const m = new MemoryStep();
  const id = await catching(m);
  t.equal(m.node(id, 'wait').statusCd, STATUS.WAITING);
  const r = m.run(event());
  t.same(r.answer, { status: 'resumed', matched: [{ processInstanceId: id, nodeId: 'wait' }] });
  t.same(typesOf(r.records), ['node.completed', 'node.ran', 'instance.finished']);
  t.equal(m.instance(id).variables.amount, 5);
});

t.test('nothing waiting and no ttl: refused, nothing written', async (t) => {
  const m = new MemoryStep();
  await catching(m);
  t.throws(() => m.run(event({ correlationKey: 'other' })), { code: 'NO_MATCHING_SUBSCRIPTION' });
});

t.test('nothing waiting with a ttl: kept, and a node that waits later consumes it at once', async (t) => {
  const m = new MemoryStep();
  const r = m.run(event({ ttlSeconds: 60 }));
  t.same(r.answer, { status: 'buffered', matched: [] });
  t.same(typesOf(r.records), ['message.buffered']);
  const id = await catching(m);
  t.equal(m.instance(id).stateCd, STATE.COMPLETED, 'the kept message resumed it in its first step');
  t.same(Object.keys(m.state.messages), [], 'and is gone');
});

t.test('a kept message an expired ttl left is not consumed', async (t) => {
  const m = new MemoryStep();
  m.run(event({ ttlSeconds: 1 }));
  m.ms += 2000;
  const id = await catching(m);
  t.equal(m.node(id, 'wait').statusCd, STATUS.WAITING);
});

t.test('with claims kept, a node that finds a kept message waits and asks to claim it', async (t) => {
  const m = new MemoryStep({ claimsKept: true });
  m.run(event({ ttlSeconds: 60 }));
  const messageId = Object.keys(m.state.messages)[0]!;
  const pid = await m.publish(CATCH);
  const r = m.start(pid, { orderId: 'o1' });
  const id = r.answer.processInstanceId;
  t.same(
    r.effects.filter((e) => e.kind === 'claim'),
    [{ kind: 'claim', messageId }],
  );
  t.equal(m.node(id, 'wait').statusCd, STATUS.WAITING, 'it waits for the claim');
  const sub = subscriptionsFor(m.state, 'default', 'paid', 'o1')[0]!;
  const c = m.run({ kind: 'kept.consume', messageId, sub });
  t.equal(c.answer, true);
  t.equal(c.records[0]?.type, 'message.removed');
  t.equal(m.instance(id).stateCd, STATE.COMPLETED);
  t.equal(m.run({ kind: 'kept.consume', messageId, sub }).answer, false, 'a message gone is not consumed twice');
});

t.test('a message id with a ttl is remembered; eventSeen answers a repeat until it expires', async (t) => {
  const m = new MemoryStep();
  await catching(m);
  const r = m.run(event({ ttlSeconds: 10, messageId: 'm1' }));
  t.equal(r.records[0]?.type, 'messageId.seen');
  t.ok(eventSeen(m.state, 'default|m1', m.now));
  t.notOk(eventSeen(m.state, 'default|m2', m.now));
  t.notOk(eventSeen(m.state, 'default|m1', new Date(m.ms + 11_000)));
});

t.test('matched only on other daemons: resumed, nothing written here', async (t) => {
  const m = new MemoryStep();
  const elsewhere = [{ processInstanceId: 'x', nodeId: 'wait' }];
  const r = m.run(event({ elsewhere }));
  t.same(r.answer, { status: 'resumed', matched: elsewhere });
  t.same(r.records, []);
});

t.test('an intermediateThrowEvent resumes what waits in the same step', async (t) => {
  const m = new MemoryStep();
  const waiter = await catching(m);
  const pid = await m.publish(THROW);
  const r = m.start(pid, { orderId: 'o1' });
  t.equal(m.instance(waiter).stateCd, STATE.COMPLETED);
  t.equal(m.instance(waiter).variables.by, 'thrower');
  t.notOk(
    r.records.some((x) => x.type === 'event.thrown'),
    'not kept for other daemons',
  );
});

t.test('with thrown events kept, the throw is written and listed to pass on; thrown.deliver wakes here', async (t) => {
  const m = new MemoryStep({ keepsThrown: true });
  const pid = await m.publish(THROW);
  const r = m.start(pid, { orderId: 'o2' });
  const thrown = r.records.find((x) => x.type === 'event.thrown');
  t.ok(thrown);
  t.same(r.effects.filter((e) => e.kind === 'pass').length, 1);
  const waiter = await catching(m, 'o3');
  m.run({
    kind: 'thrown.deliver',
    event: { organization: 'default', eventType: 'paid', correlationKey: 'o3', data: { from: 'elsewhere' } },
  });
  t.equal(m.instance(waiter).variables.from, 'elsewhere');
});

t.test('thrown.forget passes every event kept for other daemons, and writes nothing when none is kept', async (t) => {
  const m = new MemoryStep({ keepsThrown: true });
  const pid = await m.publish(THROW);
  m.start(pid, { orderId: 'o4' });
  t.equal(Object.keys(m.state.thrown).length, 1);
  const r = m.run({ kind: 'thrown.forget' });
  t.same(typesOf(r.records), ['event.passed']);
  t.same(Object.keys(m.state.thrown), []);
  t.same(m.run({ kind: 'thrown.forget' }).records, []);
});

t.test('thrown.passed writes the one event given on as passed, and nothing for one passed already', async (t) => {
  const m = new MemoryStep({ keepsThrown: true });
  const pid = await m.publish(THROW);
  m.start(pid, { orderId: 'o5' });
  m.start(pid, { orderId: 'o6' });
  const [first, second] = Object.keys(m.state.thrown);
  const r = m.run({ kind: 'thrown.passed', id: first! });
  t.same(r.records, [{ type: 'event.passed', id: first }]);
  t.same(Object.keys(m.state.thrown), [second], 'the other is kept still');
  t.same(m.run({ kind: 'thrown.passed', id: first! }).records, [], 'passed already: nothing written');
});
