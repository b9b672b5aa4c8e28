import t from 'tap';
import { STATE, STATUS } from '../../../../src/daemon/state/state.js';
import { MemoryStep, typesOf } from '../../../helpers/step.js';

const ASK = (node: string) => `processId: AUTO
name: Ask
nodes:
  start: { type: startEvent, next: ask }
  ask: ${node}
  after: { type: setVariable, variables: { seen: "{inputValue}" }, next: done }
  done: { type: endEvent }
`;

async function waiting(m: MemoryStep, node: string): Promise<string> {
  const pid = await m.publish(ASK(node));
  return m.start(pid).answer.processInstanceId;
}

t.test('an answer completes the waiting input node and the execution runs on in the same step', async (t) => {
  const m = new MemoryStep();
  const id = await waiting(m, '{ type: inputNode, inputType: textbox, next: after }');
  const r = m.run({ kind: 'answer', instanceId: id, nodeId: 'ask', action: 'COMPLETE', data: { inputValue: 'yes' } });
  t.same(typesOf(r.records), ['node.completed', 'node.ran', 'node.ran', 'instance.finished']);
  t.equal(m.instance(id).variables.seen, 'yes');
  t.equal(m.instance(id).variables.inputNodeAction, 'COMPLETE');
  t.equal(m.instance(id).stateCd, STATE.COMPLETED);
});

t.test('CANCEL cancels the node; without an errorFlow the execution is cancelled', async (t) => {
  const m = new MemoryStep();
  const id = await waiting(m, '{ type: inputNode, inputType: textbox, next: after }');
  const r = m.run({ kind: 'answer', instanceId: id, nodeId: 'ask', action: 'CANCEL', data: {} });
  t.same(typesOf(r.records), ['node.left', 'instance.finished']);
  t.equal(m.node(id, 'ask').statusCd, STATUS.CANCELLED);
  t.equal(m.instance(id).stateCd, STATE.CANCELLED);
});

t.test('an answer that does not fit is refused before anything is written; the node keeps waiting', async (t) => {
  const m = new MemoryStep();
  const id = await waiting(m, '{ type: inputNode, inputType: number, next: after }');
  const before = m.state.instances[id];
  t.throws(
    () => m.run({ kind: 'answer', instanceId: id, nodeId: 'ask', action: 'COMPLETE', data: { inputValue: 'x' } }),
    { code: 'VALIDATION_ERROR' },
  );
  t.throws(() => m.run({ kind: 'answer', instanceId: id, nodeId: 'nope', action: 'COMPLETE', data: {} }), {
    code: 'NODE_NOT_WAITING',
  });
  t.equal(m.state.instances[id], before, 'the execution is as it was');
  t.equal(m.node(id, 'ask').statusCd, STATUS.WAITING);
});

t.test('a userTask takes its form; a required field missing is refused', async (t) => {
  const m = new MemoryStep();
  const id = await waiting(
    m,
    `
    type: userTask
    assignee: ann
    fields: [{ name: ok, type: boolean, required: true }]
    next: after`,
  );
  t.equal(m.node(id, 'ask').wait?.kind, 'input');
  t.throws(() => m.run({ kind: 'answer', instanceId: id, nodeId: 'ask', action: 'COMPLETE', data: {} }), {
    code: 'VALIDATION_ERROR',
  });
  m.run({ kind: 'answer', instanceId: id, nodeId: 'ask', action: 'COMPLETE', data: { ok: true } });
  t.same(m.instance(id).variables.formData, { ok: true });
  t.equal(m.instance(id).stateCd, STATE.COMPLETED);
});

t.test("a file input's answer is given the file's metadata; a file of no one is refused", async (t) => {
  const m = new MemoryStep();
  const id = await waiting(m, '{ type: inputNode, inputType: file, next: after }');
  const fileId = `file_${'a'.repeat(32)}`;
  t.throws(
    () => m.run({ kind: 'answer', instanceId: id, nodeId: 'ask', action: 'COMPLETE', data: { inputValue: fileId } }),
    { code: 'VALIDATION_ERROR' },
  );
  const meta = { fileId, name: 'a.txt', mimeType: 'text/plain', bytes: 3, sha256: 'b'.repeat(64) };
  m.files.set(`default|${fileId}`, meta);
  m.run({ kind: 'answer', instanceId: id, nodeId: 'ask', action: 'COMPLETE', data: { inputValue: fileId } });
  t.same(m.instance(id).variables.inputValue, meta);
});
