import t from 'tap';
import { STATE, STATUS } from '../../../../src/daemon/state/state.js';
import { MemoryStep, typesOf } from '../../../helpers/step.js';

const NAP = `processId: AUTO
name: Nap
nodes:
  start: { type: startEvent, next: nap }
  nap: { type: intermediateCatchEvent, eventType: timer, duration: 5s, next: done }
  done: { type: endEvent }
`;

const GUARDED = (cancelActivity: boolean) => `processId: AUTO
name: Guarded
nodes:
  start: { type: startEvent, next: ask }
  ask: { type: inputNode, inputType: textbox, next: done }
  late: { type: boundaryEvent, attachedTo: ask, event: timer, duration: 1m, cancelActivity: ${cancelActivity}, next: remind }
  remind: { type: setVariable, variables: { reminded: true }, next: end2 }
  end2: { type: endEvent }
  done: { type: endEvent }
`;

const ASK_TIMEOUT = `processId: AUTO
name: Ask with a timeout
nodes:
  start: { type: startEvent, next: ask }
  ask: { type: inputNode, inputType: textbox, timeout: 1m, next: done, timeoutFlow: late }
  late: { type: setVariable, variables: { late: true }, next: done }
  done: { type: endEvent }
`;

t.test('a timer wait is written with its due time; its timer resumes it', async (t) => {
  const m = new MemoryStep();
  const pid = await m.publish(NAP);
  const id = m.start(pid).answer.processInstanceId;
  const nap = m.node(id, 'nap');
  t.equal(nap.wait?.dueAt, new Date(m.ms + 5000).toISOString());
  m.ms += 5000;
  const r = m.run({ kind: 'timer', instanceId: id, nodeInstanceId: nap.id });
  t.same(typesOf(r.records), ['node.completed', 'node.ran', 'instance.finished']);
  t.equal(m.instance(id).stateCd, STATE.COMPLETED);
  t.same(m.run({ kind: 'timer', instanceId: id, nodeInstanceId: nap.id }).records, [], 'a late firing changes nothing');
});

t.test("an input node's timeout takes its timeoutFlow", async (t) => {
  const m = new MemoryStep();
  const pid = await m.publish(ASK_TIMEOUT);
  const id = m.start(pid).answer.processInstanceId;
  m.run({ kind: 'timer', instanceId: id, nodeInstanceId: m.node(id, 'ask').id });
  t.equal(m.node(id, 'ask').statusCd, STATUS.WAITING, 'not before its due time');
  m.ms += 60_000;
  m.run({ kind: 'timer', instanceId: id, nodeInstanceId: m.node(id, 'ask').id });
  t.equal(m.node(id, 'ask').statusCd, STATUS.TIMED_OUT);
  t.equal(m.instance(id).variables.late, true);
  t.equal(m.instance(id).stateCd, STATE.COMPLETED);
});

t.test('a timer boundary event cancels its node and runs its path; once only', async (t) => {
  const m = new MemoryStep();
  const pid = await m.publish(GUARDED(true));
  const id = m.start(pid).answer.processInstanceId;
  const ask = m.node(id, 'ask');
  m.ms += 60_000;
  const r = m.run({ kind: 'timer', instanceId: id, nodeInstanceId: ask.id, boundaryId: 'late' });
  t.equal(r.records[0]?.type, 'node.left');
  t.equal(m.node(id, 'ask').statusCd, STATUS.CANCELLED);
  t.equal(m.instance(id).variables.reminded, true);
  t.same(m.run({ kind: 'timer', instanceId: id, nodeInstanceId: ask.id, boundaryId: 'late' }).records, []);
});

t.test('a non-interrupting timer boundary event leaves its node waiting and fires once', async (t) => {
  const m = new MemoryStep();
  const pid = await m.publish(GUARDED(false));
  const id = m.start(pid).answer.processInstanceId;
  const ask = m.node(id, 'ask');
  m.ms += 60_000;
  const r = m.run({ kind: 'timer', instanceId: id, nodeInstanceId: ask.id, boundaryId: 'late' });
  t.equal(r.records[0]?.type, 'boundary.fired');
  t.equal(m.node(id, 'ask').statusCd, STATUS.WAITING);
  t.equal(m.instance(id).variables.reminded, true);
  t.same(m.run({ kind: 'timer', instanceId: id, nodeInstanceId: ask.id, boundaryId: 'late' }).records, []);
});
