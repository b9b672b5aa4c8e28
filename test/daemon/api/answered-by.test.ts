import t from 'tap';
import { apiHarness } from '../../helpers/api.js';

// Two tasks in a row: the execution is still live after the first answer, ends with the second.
const TWO_TASKS = `processId: AUTO
name: Two approvals
nodes:
  start: { type: startEvent, next: first }
  first: { type: inputNode, inputType: textbox, next: second }
  second: { type: userTask, name: Sign off, fields: [{ name: ok, type: boolean }], next: done }
  done: { type: endEvent }
`;

interface NodeView {
  nodeId: string;
  answeredBy?: string;
  answeredAt?: string;
}

t.test(
  'a task answered through POST /process/task names its answerer on the node, across a restart and in history',
  async (t) => {
    const h = await apiHarness(t);
    const operator = await h.key('operator', 'acme');
    const viewer = await h.key('viewer', 'acme');
    const processId = await h.publish(TWO_TASKS, { organization: 'acme' });
    const inst = await h.start(processId, {}, { organization: 'acme' });
    const id = inst.processInstanceId;

    const answered = await h.call(operator, {
      method: 'POST',
      url: '/process/task',
      payload: { processInstanceId: id, nodeId: 'first', action: 'COMPLETE', data: { inputValue: 'yes' } },
    });
    t.equal(answered.statusCode, 200);

    const res = await h.call(viewer, { method: 'GET', url: `/process/instance/${id}` });
    t.equal(res.statusCode, 200);
    const nodes = (res.json() as { nodes: NodeView[] }).nodes;
    const first = nodes.find((n) => n.nodeId === 'first')!;
    t.equal(first.answeredBy, `key:${operator.keyId}`, 'the key id, never the key');
    t.equal(first.answeredAt, h.clock.now().toISOString());
    t.notOk(JSON.stringify(res.json()).includes(operator.apiKey), 'no secret in the view');
    t.equal(nodes.find((n) => n.nodeId === 'second')!.answeredBy, undefined, 'a task not answered yet names no one');
    t.equal(nodes.find((n) => n.nodeId === 'start')!.answeredBy, undefined, 'nor does a node that is no task');

    // Kept by the journal: a restart replays it.
    const h2 = await h.restart();
    const reopened = Object.values((await h2.get(id)).nodes).find((n) => n.nodeId === 'first')!;
    t.same([reopened.answeredBy, reopened.answeredAt], [first.answeredBy, first.answeredAt], 'after a restart');

    // The engine's own path (what the route calls), with a bearer token's actor: ends the execution.
    await h2.engine.submitTask({
      organization: 'acme',
      processInstanceId: id,
      nodeId: 'second',
      action: 'CANCEL',
      by: 'oidc:ann',
    });
    await h2.archived(id);
    const archived = await h2.get(id);
    const byNode = Object.fromEntries(Object.values(archived.nodes).map((n) => [n.nodeId, n.answeredBy]));
    t.same(
      byNode,
      { start: undefined, first: `key:${operator.keyId}`, second: 'oidc:ann' },
      'in history, both answerers',
    );
  },
);

t.test('an answer the engine gets without an answerer (no caller) keeps no answeredBy', async (t) => {
  const h = await apiHarness(t);
  const processId = await h.publish(TWO_TASKS);
  const { processInstanceId } = await h.start(processId);
  await h.engine.submitTask({
    organization: 'default',
    processInstanceId,
    nodeId: 'first',
    action: 'COMPLETE',
    data: { inputValue: 'x' },
  });
  const first = Object.values((await h.get(processInstanceId)).nodes).find((n) => n.nodeId === 'first')!;
  t.equal(first.statusCd, 2);
  t.notOk('answeredBy' in first);
});
