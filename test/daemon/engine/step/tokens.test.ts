// How tokens move after a node: the failure rule, joins that can no longer fire, and the
// limits checked before a record is written (checks.ts, tokens.ts).
import t from 'tap';
import { STATE, STATUS } from '../../../../src/daemon/state/state.js';
import { MemoryStep, typesOf } from '../../../helpers/step.js';

const flow = (nodes: string) => `processId: AUTO
name: Tokens
nodes:
${nodes}`;

t.test('a failing node: its error boundary event takes it by code, with the error as a variable', async (t) => {
  const m = new MemoryStep();
  const pid = await m.publish(
    flow(`  start: { type: startEvent, next: call }
  call: { type: serviceTask, url: "http://127.0.0.1:1/x", next: done }
  caught: { type: boundaryEvent, attachedTo: call, event: error, errorCode: HTTP_TIMEOUT, next: handled }
  handled: { type: setVariable, variables: { code: "{error.code}" }, next: done }
  done: { type: endEvent }
`),
  );
  const id = m.start(pid).answer.processInstanceId;
  m.run({
    kind: 'work.done',
    instanceId: id,
    nodeInstanceId: m.node(id, 'call').id,
    result: { ok: false, code: 'HTTP_TIMEOUT', message: 'slow' },
  });
  t.equal(m.instance(id).stateCd, STATE.COMPLETED);
  t.equal(m.instance(id).variables.code, 'HTTP_TIMEOUT');
});

t.test('a failing node without a boundary takes its errorFlow; without one the execution fails', async (t) => {
  const m = new MemoryStep();
  const pid = await m.publish(
    flow(`  start: { type: startEvent, next: bad }
  bad: { type: ifElse, condition: "\${nope.deeper > 1}", then: done, else: done, errorFlow: caught }
  caught: { type: setVariable, variables: { code: "{error.code}" }, next: done }
  done: { type: endEvent }
`),
  );
  const id = m.start(pid).answer.processInstanceId;
  t.equal(m.instance(id).stateCd, STATE.COMPLETED);
  t.equal(m.node(id, 'bad').statusCd, STATUS.FAILED);
  t.equal(m.instance(id).variables.code, 'EXPRESSION_ERROR');
  const plain = await m.publish(
    flow(`  start: { type: startEvent, next: bad }
  bad: { type: ifElse, condition: "\${nope.deeper > 1}", then: done, else: done }
  done: { type: endEvent }
`),
  );
  const failed = m.instance(m.start(plain).answer.processInstanceId);
  t.equal(failed.stateCd, STATE.FAILED);
  t.equal(failed.error?.code, 'EXPRESSION_ERROR');
});

t.test('a join waiting for a token that can no longer come fails the execution with JOIN_DEADLOCK', async (t) => {
  const m = new MemoryStep();
  const pid = await m.publish(
    flow(`  start: { type: startEvent, next: fork }
  fork: { type: parallelGateway, next: [a, check] }
  a: { type: setVariable, variables: { a: 1 }, next: join }
  check: { type: ifElse, condition: "\${false}", then: x, else: other }
  x: { type: setVariable, variables: { x: 1 }, next: join }
  other: { type: endEvent }
  join: { type: parallelGateway, next: done }
  done: { type: endEvent }
`),
  );
  const r = m.start(pid);
  const inst = m.instance(r.answer.processInstanceId);
  t.equal(inst.stateCd, STATE.FAILED);
  t.equal(inst.error?.code, 'JOIN_DEADLOCK');
  t.equal(r.records.at(-1)?.type, 'instance.finished');
});

t.test('more live branches than the limit allows fail the execution with BRANCH_LIMIT_EXCEEDED', async (t) => {
  const m = new MemoryStep({ limits: { branches: 2 } });
  const pid = await m.publish(
    flow(`  start: { type: startEvent, next: fork }
  fork: { type: parallelGateway, next: [a, b, c] }
  a: { type: inputNode, inputType: textbox, next: done }
  b: { type: inputNode, inputType: textbox, next: done }
  c: { type: inputNode, inputType: textbox, next: done }
  done: { type: endEvent }
`),
  );
  const inst = m.instance(m.start(pid).answer.processInstanceId);
  t.equal(inst.stateCd, STATE.FAILED);
  t.equal(inst.error?.code, 'BRANCH_LIMIT_EXCEEDED');
});

t.test('variables nested deeper than allowed fail the node with DATA_TOO_DEEP before they are written', async (t) => {
  const m = new MemoryStep();
  const pid = await m.publish(
    flow(`  start: { type: startEvent, next: ask }
  ask: { type: inputNode, inputType: textbox, next: done }
  done: { type: endEvent }
`),
  );
  const id = m.start(pid).answer.processInstanceId;
  let deep: unknown = 'leaf';
  for (let i = 0; i < 200; i++) deep = { deep };
  const r = m.run({
    kind: 'answer',
    instanceId: id,
    nodeId: 'ask',
    action: 'COMPLETE',
    data: { inputValue: 'x', deep },
  });
  t.same(typesOf(r.records), ['node.left', 'instance.finished']);
  t.equal(m.instance(id).error?.code, 'DATA_TOO_DEEP');
  t.notOk('deep' in m.instance(id).variables, 'nothing of it is in the variables');
});

t.test('variables over the size limit fail the node with VARIABLES_TOO_LARGE', async (t) => {
  const m = new MemoryStep({ limits: { variablesBytes: 1000 } });
  const pid = await m.publish(
    flow(`  start: { type: startEvent, next: ask }
  ask: { type: inputNode, inputType: textbox, next: done }
  done: { type: endEvent }
`),
  );
  const id = m.start(pid).answer.processInstanceId;
  m.run({ kind: 'answer', instanceId: id, nodeId: 'ask', action: 'COMPLETE', data: { inputValue: 'x'.repeat(2000) } });
  t.equal(m.instance(id).stateCd, STATE.FAILED);
  t.equal(m.instance(id).error?.code, 'VARIABLES_TOO_LARGE');
});
