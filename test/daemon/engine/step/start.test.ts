import t from 'tap';
import { STATE, STATUS } from '../../../../src/daemon/state/state.js';
import { MemoryStep, typesOf } from '../../../helpers/step.js';

const STRAIGHT = `processId: AUTO
name: Straight
nodes:
  start: { type: startEvent, next: check }
  check: { type: ifElse, condition: "\${amount > 100}", then: big, else: small }
  big: { type: setVariable, variables: { label: "big {orderId}" }, next: done }
  small: { type: setVariable, variables: { label: small }, next: done }
  done: { type: endEvent }
`;

const WAITS = `processId: AUTO
name: Waits
nodes:
  start: { type: startEvent, next: ask }
  ask: { type: inputNode, inputType: textbox, next: done }
  done: { type: endEvent }
`;

const CALLS = (target: string) => `processId: AUTO
name: Calls
nodes:
  start: { type: startEvent, next: call }
  call: { type: callProcess, processId: ${target}, data: { amount: 1 }, next: done }
  done: { type: endEvent }
`;

const WORKS = `processId: AUTO
name: Works
nodes:
  start: { type: startEvent, next: call }
  call: { type: serviceTask, url: "http://127.0.0.1:1/x", next: done }
  done: { type: endEvent }
`;

t.test('a start runs a flow that never waits to its end in one step: records, no effects', async (t) => {
  const m = new MemoryStep();
  const pid = await m.publish(STRAIGHT);
  const r = m.start(pid, { amount: 150, orderId: 'o1' });
  t.same(typesOf(r.records), ['instance.started', 'node.ran', 'node.ran', 'node.ran', 'node.ran', 'instance.finished']);
  t.same(r.effects, []);
  const inst = m.instance(r.answer.processInstanceId);
  t.equal(inst.stateCd, STATE.COMPLETED);
  t.equal(inst.variables.label, 'big o1');
  t.ok(r.touched.has(inst.processInstanceId), 'the execution is touched');
});

t.test('a start that reaches a wait writes the node waiting and leaves the execution running', async (t) => {
  const m = new MemoryStep();
  const pid = await m.publish(WAITS);
  const r = m.start(pid);
  t.same(typesOf(r.records), ['instance.started', 'node.ran', 'node.entered', 'node.waiting']);
  t.equal(m.instance(r.answer.processInstanceId).stateCd, STATE.RUNNING);
  t.equal(m.node(r.answer.processInstanceId, 'ask').statusCd, STATUS.WAITING);
});

t.test("a batch's finalize records come after its starts, with the starts it refused, in one step", async (t) => {
  const m = new MemoryStep();
  const pid = await m.publish(STRAIGHT);
  const req = (processId: string, amount: number) => ({ organization: 'default', processId, data: { amount } });
  let given: { started: number; refused: string[] } | null = null;
  const r = m.run({
    kind: 'start.batch',
    requests: [req(pid, 1), req('no-such-flow', 2), req(pid, 3)],
    finalize: (started, refused) => {
      given = { started: started.length, refused: refused.map((x) => x.error.code) };
      return [{ type: 'messageId.seen', key: 'default|batch', until: '2030-01-01T00:00:00.000Z' }];
    },
  });
  t.equal(r.answer.length, 2);
  t.same(given, { started: 2, refused: ['PROCESS_NOT_FOUND'] }, 'finalize is given both');
  t.equal(r.records.at(-1)?.type, 'messageId.seen', 'its records come last');
  t.equal(r.records.filter((x) => x.type === 'instance.started').length, 2);
});

t.test("a start past the organization's live-executions limit is refused before anything is written", async (t) => {
  const m = new MemoryStep({ limits: { organizationExecutions: 1 } });
  const pid = await m.publish(WAITS);
  m.start(pid);
  t.throws(() => m.start(pid), { code: 'EXECUTION_LIMIT_EXCEEDED' });
  t.throws(() => m.start('no-such-flow'), { code: 'PROCESS_NOT_FOUND' });
  const r = m.run({
    kind: 'start.batch',
    requests: [{ organization: 'default', processId: pid }],
    finalize: (_started, refused) => {
      t.same(
        refused.map((x) => x.error.code),
        ['EXECUTION_LIMIT_EXCEEDED'],
      );
      return [];
    },
  });
  t.same(r.records, [], 'a batch with nothing to start writes nothing');
});

t.test('callProcess starts the called execution Active and defers it; continue runs it', async (t) => {
  const m = new MemoryStep();
  const target = await m.publish(STRAIGHT);
  const pid = await m.publish(CALLS(target));
  const r = m.start(pid);
  const parent = m.instance(r.answer.processInstanceId);
  const calledId = parent.variables.calledProcessInstanceId as string;
  t.equal(parent.stateCd, STATE.COMPLETED, 'the caller does not wait for it');
  t.same(
    r.effects.filter((e) => e.kind === 'defer'),
    [{ kind: 'defer', instanceId: calledId }],
    'the called execution is left for a step of its own',
  );
  t.equal(m.instance(calledId).stateCd, STATE.RUNNING);
  const c = m.run({ kind: 'continue', ids: [calledId], from: 0 });
  t.equal(c.answer, 1, 'it answers where it stopped');
  t.equal(m.instance(calledId).stateCd, STATE.COMPLETED);
});

t.test('continue runs Active nodes again, not those whose work is under way; a spent budget stops it', async (t) => {
  const m = new MemoryStep();
  const pid = await m.publish(WORKS);
  const id = m.start(pid).answer.processInstanceId;
  const again = m.run({ kind: 'continue', ids: [id], from: 0 });
  t.same(typesOf(again.records), [], 'an Active node run again writes nothing new');
  t.same(
    again.effects.map((e) => e.kind),
    ['work'],
    'and asks for its work again',
  );
  m.markWorking(id, 'call');
  t.same(m.run({ kind: 'continue', ids: [id], from: 0 }).effects, [], 'work under way is not asked for twice');
  t.equal(m.run({ kind: 'continue', ids: [id, id], from: 0, maxRuns: 0 }).answer, 0, 'no budget, no execution');
});

t.test('set.aside fails a running execution with INTERNAL_ERROR; a finished one is left alone', async (t) => {
  const m = new MemoryStep();
  const pid = await m.publish(WAITS);
  const id = m.start(pid).answer.processInstanceId;
  const r = m.run({ kind: 'set.aside', instanceId: id, message: 'could not run on' });
  t.same(typesOf(r.records), ['node.left', 'instance.finished']);
  t.equal(m.instance(id).stateCd, STATE.FAILED);
  t.equal(m.instance(id).error?.code, 'INTERNAL_ERROR');
  t.same(m.run({ kind: 'set.aside', instanceId: id, message: 'again' }).records, []);
});

t.test('cancel cancels every waiting node and the execution; a second cancel is refused', async (t) => {
  const m = new MemoryStep();
  const pid = await m.publish(WAITS);
  const id = m.start(pid).answer.processInstanceId;
  const r = m.run({ kind: 'cancel', instanceId: id, reason: 'cancelled by request' });
  t.same(typesOf(r.records), ['node.left', 'instance.finished']);
  t.equal(m.node(id, 'ask').statusCd, STATUS.CANCELLED);
  t.equal(m.instance(id).stateCd, STATE.CANCELLED);
  const before = m.state.instances[id];
  t.throws(() => m.run({ kind: 'cancel', instanceId: id, reason: 'again' }), { code: 'INSTANCE_NOT_RUNNING' });
  t.equal(m.state.instances[id], before, 'nothing changed');
});
