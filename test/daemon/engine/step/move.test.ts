import { randomUUID } from 'node:crypto';
import t, { type Test } from 'tap';
import { isWfxError } from '../../../../src/shared/errors.js';
import type { MoveProblem } from '../../../../src/shared/api/index.js';
import { moveProblems } from '../../../../src/daemon/engine/version-move.js';
import { logEntry } from '../../../../src/daemon/state/log-line.js';
import { STATE, STATUS, type WfxState } from '../../../../src/daemon/state/state.js';
import { MemoryStep, typesOf } from '../../../helpers/step.js';

/** A flow of id `pid` whose nodes are `nodes` (YAML, indented two spaces). */
const flow = (pid: string, nodes: string): string => `processId: ${pid}\nname: Moves\nnodes:\n${nodes}`;

const ASK_V1 = `  start: { type: startEvent, next: ask }
  ask: { type: userTask, fields: [{ name: ok, type: boolean }], next: done }
  done: { type: endEvent }
`;
const ASK_V2 = `  start: { type: startEvent, next: ask }
  ask:
    type: userTask
    name: Approve {customer}
    fields: [{ name: ok, type: boolean, required: true }, { name: note, type: text }]
    timeout: 1h
    next: extra
  extra: { type: setVariable, variables: { extra: "v2 ran" }, next: done }
  done: { type: endEvent }
`;

/** Publishes version 1 (`v1`), then each of `later` as the next versions, of one new flow; answers its id. */
async function versions(m: MemoryStep, v1: string, ...later: string[]): Promise<string> {
  const pid = randomUUID();
  await m.publish(flow(pid, v1));
  for (const nodes of later) await m.publish(flow(pid, nodes));
  return pid;
}

/** Starts an execution of version 1 of flow `pid` (the latest published is the active one); answers its id. */
const startV1 = (m: MemoryStep, pid: string, data: Record<string, unknown> = {}): string =>
  m.run({ kind: 'start', request: { organization: 'default', processId: pid, versionNumber: '1', data } }).answer
    .processInstanceId;

const move = (m: MemoryStep, instanceId: string, toVersion: string) =>
  m.run({ kind: 'move', instanceId, toVersion, by: 'key:k1' });

/** The problems a move of `id` to `to` is refused with (it must be refused with INSTANCE_NOT_MOVABLE), and that nothing changed. */
function refused(t: Test, m: MemoryStep, id: string, to: string): MoveProblem[] {
  const before = JSON.stringify(m.state.instances[id]);
  try {
    move(m, id, to);
  } catch (err) {
    t.ok(isWfxError(err, 'INSTANCE_NOT_MOVABLE'), 'refused with INSTANCE_NOT_MOVABLE');
    t.equal(JSON.stringify(m.state.instances[id]), before, 'nothing changed');
    const problems = (isWfxError(err) && (err.details as { problems: MoveProblem[] }).problems) || [];
    t.same(moveProblems(m.state, m.instance(id), to), problems, 'the problems moveProblems finds');
    return problems;
  }
  t.fail('the move was not refused');
  return [];
}

/** The codes and nodes of `problems`. */
const codes = (problems: readonly MoveProblem[]) => problems.map((p) => `${p.nodeId}:${p.code}`);

t.test('a waiting execution moves with one record and goes on in the new version', async (t) => {
  const m = new MemoryStep();
  const pid = await versions(m, ASK_V1, ASK_V2);
  const id = startV1(m, pid, { customer: 'ACME' });
  const startedAt = m.node(id, 'ask').startTime;
  m.ms += 60_000;

  const r = move(m, id, '2');
  t.same(typesOf(r.records), ['instance.moved'], 'one record, no node run');
  t.match(r.records[0], { instanceId: id, fromVersion: '1', toVersion: '2', by: 'key:k1' });
  t.same(r.answer, { processInstanceId: id, fromVersion: '1', toVersion: '2', moved: true, children: [] });
  t.ok(r.touched.has(id));
  const inst = m.instance(id);
  t.equal(inst.processVersion, '2');
  const ask = m.node(id, 'ask');
  t.equal(ask.statusCd, STATUS.WAITING, 'the same node instance still waits');
  t.equal(ask.nodeName, 'Approve {customer}', "the live node has the target's name");
  t.equal(m.node(id, 'start').nodeName, 'start', 'a node that ran keeps what it ran as');
  t.match(ask.wait, {
    kind: 'input',
    formTitle: 'Approve ACME',
    fields: [{ name: 'ok', required: true }, { name: 'note' }],
    dueAt: new Date(Date.parse(startedAt) + 3_600_000).toISOString(),
  });
  const last = logEntry(inst, inst.logs.at(-1)!);
  t.match(last, { nodeType: 'process', level: 'INFO', message: 'moved from version 1 to version 2 by key:k1' });

  t.throws(
    () => m.run({ kind: 'answer', instanceId: id, nodeId: 'ask', action: 'COMPLETE', data: {} }),
    { code: 'VALIDATION_ERROR' },
    "the target's form applies to the answer: ok is required now",
  );
  m.run({ kind: 'answer', instanceId: id, nodeId: 'ask', action: 'COMPLETE', data: { ok: true } });
  const done = m.instance(id);
  t.equal(done.stateCd, STATE.COMPLETED);
  t.equal(done.variables.extra, 'v2 ran', 'the node only version 2 has ran');
});

t.test('a move to the version it runs is a no-op; refusals before anything is written', async (t) => {
  const m = new MemoryStep();
  const pid = await versions(m, ASK_V1, ASK_V2);
  const id = startV1(m, pid);
  const same = move(m, id, '1');
  t.same(same.records, [], 'nothing written');
  t.same(same.answer, { processInstanceId: id, fromVersion: '1', toVersion: '1', moved: false, children: [] });
  t.throws(() => move(m, id, '3'), { code: 'VERSION_NOT_FOUND' });
  t.throws(() => move(m, randomUUID(), '2'), { code: 'INSTANCE_NOT_RUNNING' });
  m.run({ kind: 'cancel', instanceId: id, reason: 'test' });
  t.throws(() => move(m, id, '2'), { code: 'INSTANCE_NOT_RUNNING' }, 'a finished one does not move');
});

t.test('NODE_MISSING and NODE_TYPE_CHANGED: each live node must be in the target with its type', async (t) => {
  const m = new MemoryStep();
  const pid = await versions(
    m,
    `  start: { type: startEvent, next: fork }
  fork: { type: parallelGateway, next: [ask, wait] }
  ask: { type: userTask, next: done }
  wait: { type: intermediateCatchEvent, eventType: timer, duration: 1h, next: done }
  done: { type: endEvent }
`,
    `  start: { type: startEvent, next: fork }
  fork: { type: parallelGateway, next: [ask, later] }
  ask: { type: inputNode, inputType: textbox, next: done }
  later: { type: intermediateCatchEvent, eventType: timer, duration: 1h, next: done }
  done: { type: endEvent }
`,
  );
  const id = startV1(m, pid);
  const problems = refused(t, m, id, '2');
  t.same(codes(problems), ['ask:NODE_TYPE_CHANGED', 'wait:NODE_MISSING']);
  t.match(problems[0], { processInstanceId: id, reason: /userTask.*inputNode/ });
  t.notOk('scope' in problems[0]!, 'no scope at the top level');
});

t.test('EVENT_CHANGED: a waiting catch event keeps the event it waits for', async (t) => {
  const m = new MemoryStep();
  const catchFlow = (event: string) => `  start: { type: startEvent, next: wait }
  wait: { type: intermediateCatchEvent, ${event}, next: done }
  done: { type: endEvent }
`;
  const pid = await versions(
    m,
    catchFlow('eventType: message, messageRef: order.paid, correlationKey: k'),
    catchFlow('eventType: message, messageRef: order.settled, correlationKey: k'),
    catchFlow('eventType: signal, messageRef: order.paid'),
    catchFlow('eventType: timer, duration: 1h'),
    catchFlow('eventType: message, messageRef: order.paid, correlationKey: "{other}"'),
  );
  const id = startV1(m, pid);
  for (const to of ['2', '3', '4'])
    t.same(codes(refused(t, m, id, to)), ['wait:EVENT_CHANGED'], `version ${to} waits for another event`);
  move(m, id, '5');
  t.equal(m.instance(id).processVersion, '5', 'the same message with another correlation key: it moves');
  const delivered = m.run({
    kind: 'event',
    organization: 'default',
    eventType: 'order.paid',
    correlationKey: 'k',
    data: {},
    ttlSeconds: 0,
    messageId: null,
    dedupKey: null,
    elsewhere: [],
  });
  t.match(delivered.answer, { matched: [{ processInstanceId: id }] }, 'its subscription holds: the message resumes it');
  t.equal(m.instance(id).stateCd, STATE.COMPLETED);
});

t.test('JOB_CHANGED: a waiting job keeps its domain and action', async (t) => {
  const m = new MemoryStep();
  m.registerBilling();
  const job = (action: string) => `  start: { type: startEvent, next: pay }
  pay: { type: domainTask, domain: billing, action: ${action}, input: { amount: 1 }, next: done }
  done: { type: endEvent }
`;
  const pid = await versions(m, job('charge'), job('refund'));
  const id = startV1(m, pid);
  t.same(codes(refused(t, m, id, '2')), ['pay:JOB_CHANGED']);
});

const LOOP = (loop: string, body: string) => `  start: { type: startEvent, next: each }
  each:
    type: loopNode
    ${loop}
    next: done
    nodes:
      s: { type: startEvent, next: ask }
${body}      e: { type: endEvent }
  done: { type: endEvent }
`;
const BODY_ASK = `      ask: { type: userTask, next: e }\n`;

t.test('LOOP_CHANGED, and the body of a loop checked in its iterations', async (t) => {
  const m = new MemoryStep();
  const pid = await versions(
    m,
    LOOP('collection: "{items}"', BODY_ASK),
    LOOP('condition: "${index < 2}"', BODY_ASK),
    LOOP('collection: "{items}"', `      ask: { type: inputNode, inputType: textbox, next: e }\n`),
  );
  const id = startV1(m, pid, { items: [1, 2] });
  const child = m.node(id, 'each').children![0]!;
  t.same(codes(refused(t, m, id, '2')), ['each:LOOP_CHANGED']);
  const body = refused(t, m, id, '3');
  t.same(codes(body), ['ask:NODE_TYPE_CHANGED'], 'the iteration running, checked against the body');
  t.match(body[0], { processInstanceId: child, scope: ['each'] });
  t.throws(() => move(m, child, '2'), { code: 'INSTANCE_MOVES_WITH_PARENT' }, 'an iteration moves with its loop');
});

t.test('BODY_MISSING: a subProcess whose body runs keeps a body', async (t) => {
  const m = new MemoryStep();
  const called = await m.publish(`processId: AUTO
name: Called
nodes:
  s: { type: startEvent, next: e }
  e: { type: endEvent }
`);
  const pid = await versions(
    m,
    `  start: { type: startEvent, next: sub }
  sub:
    type: subProcess
    next: done
    nodes:
      s: { type: startEvent, next: ask }
      ask: { type: userTask, next: e }
      e: { type: endEvent }
  done: { type: endEvent }
`,
    `  start: { type: startEvent, next: sub }
  sub: { type: subProcess, processId: ${called}, next: done }
  done: { type: endEvent }
`,
  );
  const id = startV1(m, pid);
  t.same(codes(refused(t, m, id, '2')), ['sub:BODY_MISSING']);
});

t.test('JOIN_CHANGED: a join keeps the connections its arrivals came by', async (t) => {
  const m = new MemoryStep();
  const fork = (b: string) => `  start: { type: startEvent, next: fork }
  fork: { type: parallelGateway, next: [a, b] }
  a: { type: userTask, next: join }
  ${b}
  join: { type: parallelGateway, next: done }
  done: { type: endEvent }
`;
  const pid = await versions(
    m,
    fork('b: { type: setVariable, variables: { b: 1 }, next: join }'),
    fork('b: { type: setVariable, variables: { b: 1 }, next: c }\n  c: { type: task, next: join }'),
    fork('b: { type: setVariable, variables: { b: 2 }, next: join }'),
  );
  const id = startV1(m, pid);
  t.same(Object.keys(m.instance(id).joins), ['join'], 'b arrived at the join');
  t.same(codes(refused(t, m, id, '2')), ['join:JOIN_CHANGED'], 'b no longer leads to the join');
  move(m, id, '3');
  m.run({ kind: 'answer', instanceId: id, nodeId: 'a', action: 'COMPLETE', data: {} });
  t.equal(m.instance(id).stateCd, STATE.COMPLETED, 'the arrival kept counts in the target: the join fired');
});

t.test('an embedded subProcess moves with its root, and its body goes on in the new version', async (t) => {
  const m = new MemoryStep();
  const sub = (extra: string) => `  start: { type: startEvent, next: sub }
  sub:
    type: subProcess
    next: done
    nodes:
      s: { type: startEvent, next: ask }
      ask: { type: userTask, next: ${extra ? 'more' : 'e'} }
${extra}      e: { type: endEvent }
  done: { type: endEvent }
`;
  const pid = await versions(
    m,
    sub(''),
    sub(`      more: { type: setVariable, variables: { inner: "v2 body" }, next: e }\n`),
  );
  const id = startV1(m, pid);
  const child = m.node(id, 'sub').children![0]!;
  t.throws(() => move(m, child, '2'), { code: 'INSTANCE_MOVES_WITH_PARENT' });
  const r = move(m, id, '2');
  t.same(typesOf(r.records), ['instance.moved', 'instance.moved'], 'one record per execution that moves');
  t.same(
    r.records.map((x) => (x as { instanceId: string }).instanceId),
    [id, child],
  );
  t.same(r.answer.children, [child]);
  t.equal(m.instance(child).processVersion, '2', 'the child runs version 2 too');
  m.run({ kind: 'answer', instanceId: child, nodeId: 'ask', action: 'COMPLETE', data: {} });
  t.equal(m.instance(id).stateCd, STATE.COMPLETED);
  t.equal(m.instance(id).variables.inner, 'v2 body', "the body's node only version 2 has ran");
});

t.test('moveProblems is pure: it reads the state and changes nothing', async (t) => {
  const m = new MemoryStep();
  const pid = await versions(m, ASK_V1, `  start: { type: startEvent, next: done }\n  done: { type: endEvent }\n`);
  const id = startV1(m, pid);
  const before = JSON.stringify(m.state as WfxState);
  t.same(codes(moveProblems(m.state, m.instance(id), '2')), ['ask:NODE_MISSING']);
  t.equal(JSON.stringify(m.state), before);
});

t.test("a timer armed for the version left that fires before the move's effects forget it does nothing", async (t) => {
  const m = new MemoryStep();
  const guarded = (boundary: string, duration: string, timeout: string) => `  start: { type: startEvent, next: ask }
  ask: { type: userTask, timeout: ${timeout}, next: done }
  ${boundary}: { type: boundaryEvent, attachedTo: ask, event: timer, duration: ${duration}, next: done }
  done: { type: endEvent }
`;
  const pid = await versions(m, guarded('t1', '1h', '2h'), guarded('t2', '3h', '4h'), guarded('t1', '3h', '4h'));
  const id = startV1(m, pid);
  const ask = m.node(id, 'ask').id;
  move(m, id, '2');
  m.ms += 2 * 3_600_000 + 1000;
  t.same(
    m.run({ kind: 'timer', instanceId: id, nodeInstanceId: ask, boundaryId: 't1' }).records,
    [],
    'no t1 in version 2',
  );
  t.same(
    m.run({ kind: 'timer', instanceId: id, nodeInstanceId: ask }).records,
    [],
    'the task is due in 4h now, not 2h',
  );
  move(m, id, '3');
  t.same(
    m.run({ kind: 'timer', instanceId: id, nodeInstanceId: ask, boundaryId: 't1' }).records,
    [],
    "version 3's t1 is due at 3h",
  );
  t.equal(m.node(id, 'ask').statusCd, STATUS.WAITING);
  m.ms += 3_600_000;
  m.run({ kind: 'timer', instanceId: id, nodeInstanceId: ask, boundaryId: 't1' });
  t.equal(m.node(id, 'ask').statusCd, STATUS.CANCELLED, 'and fires then');
});
