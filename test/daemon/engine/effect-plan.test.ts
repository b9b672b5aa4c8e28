import t from 'tap';
import { planEffects, type PlannedEffect } from '../../../src/daemon/engine/effect-plan.js';
import { boundaryKey, nodeKey } from '../../../src/daemon/engine/keys.js';
import { MemoryStep } from '../../helpers/step.js';

const GUARDED = `processId: AUTO
name: Guarded nap
nodes:
  start: { type: startEvent, next: nap }
  nap: { type: intermediateCatchEvent, eventType: timer, duration: 5s, next: done }
  late: { type: boundaryEvent, attachedTo: nap, event: timer, duration: 1m, next: done }
  done: { type: endEvent }
`;

const QUIET = { lifecycle: false, jobs: false, spans: false, metrics: false };
const all = { ...QUIET, lifecycle: true, jobs: true };
const kinds = (plan: readonly PlannedEffect[]) => plan.map((e) => e.kind);

t.test("a wait's timer and its boundary timer are planned; its end disarms both and stops its work", async (t) => {
  const m = new MemoryStep();
  const pid = await m.publish(GUARDED);
  const started = m.start(pid);
  const id = started.answer.processInstanceId;
  const nap = m.node(id, 'nap');
  const plan = planEffects(m.state, m.ctx, started.records, started.effects, QUIET);
  t.same(plan, [
    { kind: 'timer.set', key: boundaryKey(id, nap.id, 'late'), at: m.ms + 60_000 },
    { kind: 'timer.set', key: nodeKey(id, nap.id), at: m.ms + 5000 },
    { kind: 'timer.set', key: boundaryKey(id, nap.id, 'late'), at: m.ms + 60_000 },
  ]);
  m.ms += 5000;
  const fired = m.run({ kind: 'timer', instanceId: id, nodeInstanceId: nap.id });
  const after = planEffects(m.state, m.ctx, fired.records, fired.effects, QUIET);
  t.same(after.slice(0, 3), [
    { kind: 'timer.delete', key: nodeKey(id, nap.id) },
    { kind: 'timer.delete', key: boundaryKey(id, nap.id, 'late') },
    { kind: 'work.stop', key: nodeKey(id, nap.id) },
  ]);
  t.same(after.at(-1), { kind: 'finished', instanceId: id }, 'the finished execution comes after the records');
});

t.test("lifecycle events are planned only when heard; the step's work comes last", async (t) => {
  const m = new MemoryStep();
  const pid = await m.publish(`processId: AUTO
name: Work
nodes:
  start: { type: startEvent, next: call }
  call: { type: serviceTask, url: "http://127.0.0.1:1/x", next: done }
  done: { type: endEvent }
`);
  const r = m.start(pid);
  const heard = planEffects(m.state, m.ctx, r.records, r.effects, all);
  t.ok(heard.some((e) => e.kind === 'lifecycle'));
  t.equal(heard.at(-1)?.kind, 'work');
  const unheard = planEffects(m.state, m.ctx, r.records, r.effects, QUIET);
  t.same(kinds(unheard), ['work']);
});

t.test('a job left waiting wakes the long polls only when they listen', async (t) => {
  const m = new MemoryStep();
  m.registerBilling();
  const pid = await m.publish(`processId: AUTO
name: Charge
nodes:
  start: { type: startEvent, next: charge }
  charge: { type: domainTask, domain: billing, action: charge, input: { amount: 1 }, next: done }
  done: { type: endEvent }
`);
  const r = m.start(pid);
  t.same(
    planEffects(m.state, m.ctx, r.records, r.effects, { ...QUIET, jobs: true }).filter((e) => e.kind === 'jobs'),
    [{ kind: 'jobs', waiting: { organization: 'default', domain: 'billing', action: 'charge' } }],
  );
  t.same(planEffects(m.state, m.ctx, r.records, r.effects, QUIET), []);
});

t.test(
  'one plan holds all a step calls for: spans, logs and metrics first, events thrown and claims last',
  async (t) => {
    const m = new MemoryStep({ keepsThrown: true, claimsKept: true });
    const pid = await m.publish(`processId: AUTO
name: Throw then catch
nodes:
  start: { type: startEvent, next: say }
  say: { type: intermediateThrowEvent, eventType: message, messageRef: packed, correlationKey: "{orderId}", next: wait }
  wait: { type: intermediateCatchEvent, eventType: message, messageRef: paid, correlationKey: "{orderId}", next: done }
  done: { type: endEvent }
`);
    m.run({
      kind: 'event',
      organization: 'default',
      eventType: 'paid',
      correlationKey: 'o1',
      data: {},
      ttlSeconds: 60,
      messageId: null,
      dedupKey: null,
      elsewhere: [],
    });
    const r = m.start(pid, { orderId: 'o1' });
    const id = r.answer.processInstanceId;
    const watched = { ...QUIET, spans: true, metrics: true };
    const plan = planEffects(m.state, m.ctx, r.records, r.effects, watched, [id, 3]);
    t.same(kinds(plan), ['spans', 'logs', 'metrics', 'claim', 'pass']);
    t.same(plan[1], { kind: 'logs', instanceId: id, upTo: 3 });
    t.equal(plan[0]?.kind === 'spans' && plan[0].records, r.records, "the spans are the step's records'");
    t.same(
      kinds(planEffects(m.state, m.ctx, r.records, r.effects, QUIET)),
      ['claim', 'pass'],
      'unwatched: not planned',
    );
  },
);
