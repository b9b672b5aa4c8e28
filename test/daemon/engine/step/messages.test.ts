// Messages, signals, kept messages, throw events, cancel and the failure rule, decided by the step
// in memory. What the engine does of events (message ids delivered once, deliveries racing,
// timers firing, subscriptions across a restart) is in ../events.test.ts.
import t from 'tap';
import { bucketMembers } from '../../../../src/daemon/state/subscriptions.js';
import { STATE, type WfxState } from '../../../../src/daemon/state/state.js';
import { FlowStep, trail } from '../../../helpers/step-flows.js';

/** Subscriptions of `ref` in `organization`, whatever their bucket. */
const subscriptionCount = (state: WfxState, organization: string, ref: string) =>
  Object.entries(state.subscriptions)
    .filter(([bucket]) => bucket.startsWith(`${organization}|${ref}|`))
    .reduce((n, [, bucket]) => n + bucketMembers(bucket).length, 0);

const CATCH = (eventType: string, extra = '') => `
processId: AUTO
name: Wait for ${eventType}
nodes:
  start: { type: startEvent, next: wait }
  wait: { type: intermediateCatchEvent, eventType: ${eventType}, messageRef: payment-received${extra}, next: done }
  done: { type: endEvent }
`;

t.test('a message resumes every waiting subscription with the same key, and its data becomes variables', async (t) => {
  const m = new FlowStep();
  const pid = await m.publish(CATCH('message'));
  const a1 = m.started(pid, {}, 'order-1');
  const a2 = m.started(pid, {}, 'order-1');
  const b = m.started(pid, {}, 'order-2');
  t.equal(subscriptionCount(m.state, 'default', 'payment-received'), 3, 'three subscriptions written');
  const res = m.event('payment-received', 'order-1', { amount: 10 });
  t.equal(res.status, 'resumed');
  t.same(res.matched.map((x) => x.processInstanceId).sort(), [a1.processInstanceId, a2.processInstanceId].sort());
  const done = m.instance(a1.processInstanceId);
  t.equal(done.stateCd, STATE.COMPLETED);
  t.equal(done.variables.amount, 10);
  t.equal(m.instance(b.processInstanceId).stateCd, STATE.RUNNING, 'another key is not resumed');
  t.equal(subscriptionCount(m.state, 'default', 'payment-received'), 1, 'resumed subscriptions are gone');
  t.throws(() => m.event('payment-received', 'order-9'), { code: 'NO_MATCHING_SUBSCRIPTION' });
  t.throws(
    () => m.event('payment-received', 'order-2', {}, { organization: 'other-org' }),
    { code: 'NO_MATCHING_SUBSCRIPTION' },
    'another organization never reaches these subscriptions',
  );
});

t.test('a signal resumes every subscription of its ref whatever the key', async (t) => {
  const m = new FlowStep();
  const pid = await m.publish(CATCH('signal'));
  const ids = [m.started(pid, {}, 'x'), m.started(pid, {}, 'y'), m.started(pid)].map((i) => i.processInstanceId);
  const res = m.event('payment-received', 'anything');
  t.same(res.matched.map((x) => x.processInstanceId).sort(), [...ids].sort());
  for (const id of ids) t.equal(m.instance(id).stateCd, STATE.COMPLETED);
});

t.test(
  'a message that arrives before its subscription is kept for ttlSeconds and consumed once, oldest first',
  async (t) => {
    const m = new FlowStep();
    const pid = await m.publish(CATCH('message'));
    const first = m.event('payment-received', 'k', { n: 1 }, { ttlSeconds: 60 });
    m.event('payment-received', 'k', { n: 2 }, { ttlSeconds: 60 });
    t.same(first, { status: 'buffered', matched: [] });
    const a = m.started(pid, {}, 'k');
    t.equal(a.stateCd, STATE.COMPLETED, 'consumed at once');
    t.equal(a.variables.n, 1, 'the oldest first');
    const b = m.started(pid, {}, 'k');
    t.equal(b.variables.n, 2);
    const c = m.started(pid, {}, 'k');
    t.equal(c.stateCd, STATE.RUNNING, 'each kept message is consumed once');

    m.event('payment-received', 'late', {}, { ttlSeconds: 10 });
    m.ms += 11_000;
    const d = m.started(pid, {}, 'late');
    t.equal(d.stateCd, STATE.RUNNING, 'an expired message is not consumed');
    m.run({ kind: 'sweep', memoryBatch: 1000 });
    t.same(
      Object.values(m.state.messages).map((x) => x.correlationKey),
      [],
      'and is swept',
    );
  },
);

t.test('an intermediate throw event resumes catch events of the organization, then passes on', async (t) => {
  const m = new FlowStep();
  const catcher = await m.publish(CATCH('message'));
  const thrower = await m.publish(`
processId: AUTO
name: Pay
nodes:
  start: { type: startEvent, next: pay }
  pay:
    type: intermediateThrowEvent
    eventType: message
    messageRef: payment-received
    correlationKey: "order-{orderId}"
    data: { paid: "{amount}" }
    next: done
  done: { type: endEvent }
`);
  const waiting = m.started(catcher, {}, 'order-5');
  const payer = m.started(thrower, { orderId: 5, amount: 99 });
  t.equal(payer.stateCd, STATE.COMPLETED);
  const resumed = m.instance(waiting.processInstanceId);
  t.equal(resumed.stateCd, STATE.COMPLETED);
  t.equal(resumed.variables.paid, 99, 'typed data crosses over');
});

t.test('cancel: every active and waiting node is cancelled; a finished execution cannot be cancelled', async (t) => {
  const m = new FlowStep();
  const pid = await m.publish(`
processId: AUTO
name: Two waits
nodes:
  start: { type: startEvent, next: [w1, w2] }
  w1: { type: inputNode, inputType: textbox, next: done }
  w2: { type: intermediateCatchEvent, eventType: message, messageRef: m, next: done }
  done: { type: endEvent }
`);
  const inst = m.started(pid, {}, 'c');
  m.cancel(inst.processInstanceId);
  const done = m.instance(inst.processInstanceId);
  t.equal(done.stateCd, STATE.CANCELLED);
  t.same(trail(done), ['start:2', 'w1:4', 'w2:4']);
  t.same(m.state.subscriptions, {}, 'its subscription is gone');
  t.throws(() => m.cancel(inst.processInstanceId), { code: 'INSTANCE_NOT_RUNNING' });
});

t.test(
  'a failure with no errorFlow fails the execution with data.error and cancels the other nodes; errorFlow catches it',
  async (t) => {
    const m = new FlowStep();
    const pid = await m.publish(`
processId: AUTO
name: Fails
nodes:
  start: { type: startEvent, next: [wait, check] }
  wait: { type: inputNode, inputType: textbox, next: done }
  check: { type: ifElse, condition: "\${nope > 1}", then: done, else: done }
  done: { type: endEvent }
`);
    const inst = m.started(pid);
    t.equal(inst.stateCd, STATE.FAILED);
    t.match(inst.error, { code: 'EXPRESSION_ERROR', nodeId: 'check', message: String });
    t.equal(Object.values(inst.nodes).find((n) => n.nodeId === 'wait')!.statusCd, 4, 'the waiting node was cancelled');
    t.ok(m.events.some((e) => e.type === 'NODE_FAILED' && e.nodeId === 'check'));
    const caught = await m.publish(`
processId: AUTO
name: Caught
nodes:
  start: { type: startEvent, next: check }
  check: { type: ifElse, condition: "\${nope > 1}", then: done, else: done, errorFlow: handled }
  handled: { type: setVariable, variables: { handled: true }, next: done }
  done: { type: endEvent }
`);
    const ok = m.started(caught);
    t.equal(ok.stateCd, STATE.COMPLETED);
    t.equal(ok.variables.handled, true);
  },
);

t.test('{env.NAME} reads the values of the execution environment', async (t) => {
  const m = new FlowStep();
  m.apply({
    type: 'env.set',
    organization: 'default',
    environment: 'PRODUCTION',
    name: 'API_URL',
    value: 'https://prod.example',
  });
  const pid = await m.publish(`
processId: AUTO
name: Env
nodes:
  start: { type: startEvent, next: set }
  set: { type: setVariable, variables: { url: "{env.API_URL}/orders" }, next: done }
  done: { type: endEvent }
`);
  t.equal(m.started(pid).variables.url, 'https://prod.example/orders');
});
