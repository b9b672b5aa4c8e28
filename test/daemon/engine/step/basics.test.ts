// Gateways, terminate ends and the step limit, decided by the step in memory: which path each
// token takes for a given flow and data. What the engine makes durable of a run, and how it
// reads it back, is in ../basics.test.ts.
import t from 'tap';
import { STATE, STATUS } from '../../../../src/daemon/state/state.js';
import { FlowStep, trail } from '../../../helpers/step-flows.js';

t.test('ifElse takes then or else by a JUEL condition', async (t) => {
  const m = new FlowStep();
  const pid = await m.publish(`
processId: AUTO
name: Branch
nodes:
  start: { type: startEvent, next: decide }
  decide: { type: ifElse, condition: "\${order.total < 1000 && approved}", then: yes, else: no }
  yes: { type: endEvent }
  no: { type: endEvent }
`);
  t.same(trail(m.started(pid, { order: { total: 5 }, approved: true })), ['start:2', 'decide:2', 'yes:2']);
  t.same(trail(m.started(pid, { order: { total: 5000 }, approved: true })), ['start:2', 'decide:2', 'no:2']);
  const bad = m.started(pid, { approved: true });
  t.equal(bad.stateCd, STATE.FAILED, 'an unknown top-level variable is an error');
  t.match(bad.error, { code: 'EXPRESSION_ERROR', nodeId: 'decide' });
});

t.test('exclusive gateway: first true branch, else default, else NO_BRANCH_MATCHED', async (t) => {
  const m = new FlowStep();
  const flow = (withDefault: boolean) => `
processId: AUTO
name: Exclusive
nodes:
  start: { type: startEvent, next: gw }
  gw:
    type: exclusiveGateway
    branches:
      - { condition: "\${n > 10}", next: big }
      - { condition: "\${n > 5}", next: medium }
${withDefault ? '    default: small' : ''}
  big: { type: endEvent }
  medium: { type: endEvent }
  small: { type: endEvent }
`;
  const pid = await m.publish(flow(true));
  t.same(trail(m.started(pid, { n: 20 })).at(-1), 'big:2', 'the first true branch only');
  t.same(trail(m.started(pid, { n: 7 })).at(-1), 'medium:2');
  t.same(trail(m.started(pid, { n: 1 })).at(-1), 'small:2');
  const m2 = new FlowStep();
  const strict = await m2.publish(flow(false).replace('  small: { type: endEvent }\n', ''));
  const failed = m2.started(strict, { n: 1 });
  t.equal(failed.stateCd, STATE.FAILED);
  t.match(failed.error, { code: 'NO_BRANCH_MATCHED', nodeId: 'gw' });
});

t.test('parallel fork and join: the join waits for a token on every incoming connection', async (t) => {
  const m = new FlowStep();
  const pid = await m.publish(`
processId: AUTO
name: Parallel
nodes:
  start: { type: startEvent, next: fork }
  fork: { type: parallelGateway, next: [a, b, c] }
  a: { type: setVariable, variables: { a: 1 }, next: join }
  b: { type: inputNode, inputType: textbox, next: join }
  c: { type: setVariable, variables: { c: 3 }, next: join }
  join: { type: parallelGateway, next: after }
  after: { type: setVariable, variables: { sum: "{a}" }, next: done }
  done: { type: endEvent }
`);
  const inst = m.started(pid);
  t.equal(inst.stateCd, STATE.RUNNING, 'b still waits, so the join has not fired');
  t.notOk(
    trail(inst).some((s) => s.startsWith('join')),
    'no join node instance yet',
  );
  t.same(
    Object.values(inst.joins.join ?? {}).reduce((a, b) => a + b, 0),
    2,
    'two tokens wait at the join',
  );
  m.answer(inst.processInstanceId, 'b', { inputValue: 'x' });
  const done = m.instance(inst.processInstanceId);
  t.equal(done.stateCd, STATE.COMPLETED);
  t.equal(trail(done).filter((s) => s.startsWith('join')).length, 1, 'the join fired once');
  t.equal(trail(done).filter((s) => s.startsWith('after')).length, 1, 'one token leaves the join');
});

t.test('a list of next on a task forks tokens that an exclusive gateway passes on one by one', async (t) => {
  const m = new FlowStep();
  const pid = await m.publish(`
processId: AUTO
name: Fork by list
nodes:
  start: { type: startEvent, next: [left, right] }
  left: { type: task, next: merge }
  right: { type: task, next: merge }
  merge: { type: exclusiveGateway, next: counted }
  counted: { type: task, next: done }
  done: { type: endEvent }
`);
  const inst = m.started(pid);
  t.equal(inst.stateCd, STATE.COMPLETED);
  t.equal(trail(inst).filter((s) => s === 'counted:2').length, 2, 'a converging exclusive gateway passes each token');
});

t.test('inclusive gateway: every true branch, and the OR-join under every combination', async (t) => {
  const m = new FlowStep();
  const pid = await m.publish(`
processId: AUTO
name: Inclusive
nodes:
  start: { type: startEvent, next: split }
  split:
    type: inclusiveGateway
    branches:
      - { condition: "\${x}", next: a }
      - { condition: "\${y}", next: b }
      - { condition: "\${z}", next: c }
    default: d
  a: { type: setVariable, variables: { ranA: true }, next: join }
  b: { type: inputNode, inputType: number, next: join }
  c: { type: setVariable, variables: { ranC: true }, next: join }
  d: { type: task, next: join }
  join: { type: inclusiveGateway, next: after }
  after: { type: task, next: done }
  done: { type: endEvent }
`);
  for (let mask = 0; mask < 8; mask++) {
    const [x, y, z] = [!!(mask & 1), !!(mask & 2), !!(mask & 4)];
    let inst = m.started(pid, { x, y, z });
    if (y) {
      t.equal(inst.stateCd, STATE.RUNNING, `x=${x} y=${y} z=${z}: the join waits for the branch still running`);
      t.notOk(trail(inst).includes('join:2'));
      m.answer(inst.processInstanceId, 'b', { inputValue: 1 });
      inst = m.instance(inst.processInstanceId);
    }
    t.equal(inst.stateCd, STATE.COMPLETED, `x=${x} y=${y} z=${z}: completed`);
    const ran = ['a', 'b', 'c', 'd'].filter((n) => trail(inst).includes(`${n}:2`));
    t.same(
      ran,
      mask === 0 ? ['d'] : ['a', 'b', 'c'].filter((_, i) => mask & (1 << i)),
      `x=${x} y=${y} z=${z}: the true branches ran`,
    );
    t.equal(trail(inst).filter((s) => s === 'join:2').length, 1, `x=${x} y=${y} z=${z}: the join fired exactly once`);
    t.equal(trail(inst).filter((s) => s === 'after:2').length, 1);
  }
});

t.test('terminate end cancels every other active node and completes', async (t) => {
  const m = new FlowStep();
  const pid = await m.publish(`
processId: AUTO
name: Terminate
nodes:
  start: { type: startEvent, next: [wait, stop] }
  wait: { type: inputNode, inputType: textbox, next: done }
  stop: { type: endEvent, terminate: true }
  done: { type: endEvent }
`);
  const inst = m.started(pid);
  t.equal(inst.stateCd, STATE.COMPLETED);
  t.equal(Object.values(inst.nodes).find((n) => n.nodeId === 'wait')?.statusCd, STATUS.CANCELLED);
  t.ok(m.events.some((e) => e.type === 'NODE_CANCELLED' && e.nodeId === 'wait'));
});

t.test('a flow that loops without waiting fails with STEP_LIMIT_EXCEEDED instead of running forever', async (t) => {
  // On the live state, as the runner steps: a frozen copy per step of an execution that grows
  // to the limit's node instances copies it a hundred times over.
  const m = new FlowStep({ frozen: false });
  const pid = await m.publish(`
processId: AUTO
name: Spin
nodes:
  start: { type: startEvent, next: again }
  again: { type: ifElse, condition: "\${true}", then: again, else: done }
  done: { type: endEvent }
`);
  const first = m.start(pid).answer;
  t.ok(
    m.events.some((e) => e.type === 'PROCESS_FAILED' && e.processInstanceId === first.processInstanceId),
    'deferred steps ran it on until the limit failed it',
  );
  const inst = m.instance(first.processInstanceId);
  t.equal(inst.stateCd, STATE.FAILED);
  t.match(inst.error, { code: 'STEP_LIMIT_EXCEEDED' });
});
