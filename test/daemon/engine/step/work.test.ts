import t from 'tap';
import { STATE, STATUS } from '../../../../src/daemon/state/state.js';
import { MemoryStep, typesOf } from '../../../helpers/step.js';

const flow = (node: string) => `processId: AUTO
name: Work
nodes:
  start: { type: startEvent, next: job }
  job: ${node}
  done: { type: endEvent }
`;

const SERVICE = '{ type: serviceTask, url: "http://127.0.0.1:1/x", resultVariable: answer, next: done }';

async function working(m: MemoryStep, node = SERVICE): Promise<string> {
  const pid = await m.publish(flow(node));
  return m.start(pid).answer.processInstanceId;
}

t.test('each work node is written Active and asks for its work as an effect', async (t) => {
  const nodes: Array<[string, string]> = [
    [SERVICE, 'http'],
    ['{ type: scriptTask, script: "return { n: 1 }", next: done }', 'script'],
    ['{ type: aiTask, prompt: hi, next: done }', 'ai'],
    ['{ type: voiceTask, operation: speak, text: hi, resultVariable: spoken, next: done }', 'voice'],
  ];
  for (const [node, kind] of nodes) {
    const m = new MemoryStep();
    const pid = await m.publish(flow(node));
    const r = m.start(pid);
    const id = r.answer.processInstanceId;
    t.same(typesOf(r.records), ['instance.started', 'node.ran', 'node.entered'], kind);
    t.equal(m.node(id, 'job').statusCd, STATUS.ACTIVE);
    const work = r.effects.find((e) => e.kind === 'work');
    t.equal(work?.kind === 'work' && work.request.kind, kind, `${kind}: its work is an effect`);
    t.equal(work?.kind === 'work' && work.nodeInstanceId, m.node(id, 'job').id);
  }
});

t.test("a result resumes the node: its log lines first, then the node's completion", async (t) => {
  const m = new MemoryStep();
  const id = await working(m);
  const ni = m.node(id, 'job');
  const r = m.run({
    kind: 'work.done',
    instanceId: id,
    nodeInstanceId: ni.id,
    result: { ok: true, value: { status: 200, body: 'fine' }, logs: ['GET 200'] },
  });
  t.same(typesOf(r.records), ['instance.logged', 'node.completed', 'node.ran', 'instance.finished']);
  t.same(m.instance(id).variables.answer, { status: 200, body: 'fine' });
  t.equal(m.instance(id).stateCd, STATE.COMPLETED);
});

t.test('a failed result fails the node with its code (no errorFlow: the execution)', async (t) => {
  const m = new MemoryStep();
  const id = await working(m);
  m.run({
    kind: 'work.done',
    instanceId: id,
    nodeInstanceId: m.node(id, 'job').id,
    result: { ok: false, code: 'HTTP_TIMEOUT', message: 'slow' },
  });
  t.equal(m.node(id, 'job').statusCd, STATUS.FAILED);
  t.equal(m.instance(id).error?.code, 'HTTP_TIMEOUT');
});

t.test('a result for a node that stopped meanwhile changes nothing', async (t) => {
  const m = new MemoryStep();
  const id = await working(m);
  const nodeInstanceId = m.node(id, 'job').id;
  m.run({ kind: 'cancel', instanceId: id, reason: 'stop' });
  const r = m.run({ kind: 'work.done', instanceId: id, nodeInstanceId, result: { ok: true, value: 1 } });
  t.same(r.records, []);
  t.same(
    m.run({ kind: 'work.failed', instanceId: id, nodeInstanceId, code: 'INTERNAL_ERROR', message: 'x' }).records,
    [],
  );
});

t.test('work.failed fails the node still Active with the code given', async (t) => {
  const m = new MemoryStep();
  const id = await working(m);
  const r = m.run({
    kind: 'work.failed',
    instanceId: id,
    nodeInstanceId: m.node(id, 'job').id,
    code: 'INTERNAL_ERROR',
    message: 'handling failed',
  });
  t.same(typesOf(r.records), ['node.left', 'instance.finished']);
  t.equal(m.instance(id).error?.code, 'INTERNAL_ERROR');
});

t.test('work.log writes one log line of the node; nothing for a node gone', async (t) => {
  const m = new MemoryStep();
  const id = await working(m);
  const nodeInstanceId = m.node(id, 'job').id;
  const r = m.run({ kind: 'work.log', instanceId: id, nodeInstanceId, level: 'WARN', message: 'retrying' });
  t.same(typesOf(r.records), ['instance.logged']);
  t.ok(r.touched.has(id), 'touched, so log streams see the line');
  t.same(m.run({ kind: 'work.log', instanceId: id, nodeInstanceId: 'n99', level: 'INFO', message: 'x' }).records, []);
});
