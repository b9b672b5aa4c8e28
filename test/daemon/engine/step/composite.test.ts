// Child executions (subProcess, callProcess, loops) and the failure rule, decided by the step in
// memory. Timers the engine arms and fires, restarts and history are in ../composite.test.ts.
import t from 'tap';
import type { WorkOrder } from '../../../../src/daemon/engine/step/index.js';
import type { WorkResult } from '../../../../src/daemon/outbound/result.js';
import { STATE, STATUS } from '../../../../src/daemon/state/state.js';
import { childrenOf, FlowStep, running, trail } from '../../../helpers/step-flows.js';
import { loopFlow as LOOP } from '../../../helpers/flow-yaml.js';

/** What the script `return { n: vars.n + 1 }` returns, as the work runner would hand it back. */
function increments(order: WorkOrder): WorkResult | undefined {
  if (order.request.kind !== 'script' || order.request.run.script !== 'return { n: vars.n + 1 }') return undefined;
  return { ok: true, value: { n: Number(order.request.run.vars.n) + 1 } };
}

t.test('an embedded subProcess runs as a child execution linked both ways, and its variables come back', async (t) => {
  const m = new FlowStep();
  const pid = await m.publish(`
processId: AUTO
name: Parent
nodes:
  start: { type: startEvent, next: sub }
  sub:
    type: subProcess
    input: { n: "{n}" }
    output: [doubled]
    nodes:
      s: { type: startEvent, next: calc }
      calc: { type: setVariable, variables: { doubled: "{n}{n}", scratch: 1 }, next: e }
      e: { type: endEvent }
    next: done
  done: { type: endEvent }
`);
  const parent = m.started(pid, { n: 4, other: 'x' });
  t.equal(parent.stateCd, STATE.COMPLETED);
  t.same(trail(parent), ['start:2', 'sub:2', 'done:2']);
  t.equal(parent.variables.doubled, '44', 'the output variable came back');
  t.notOk('scratch' in parent.variables, 'only the listed outputs');
  const [child] = childrenOf(m, parent, 'sub');
  t.ok(child, 'the node names its child');
  t.equal(child!.parentInstanceId, parent.processInstanceId, 'the child names its parent');
  t.equal(child!.processId, parent.processId, 'an embedded child carries the parent flow');
  t.equal(child!.processVersion, parent.processVersion);
  t.same(child!.variables, { n: 4, doubled: '44', scratch: 1 }, 'input mapped: only n went in');
  t.same(trail(child!), ['s:2', 'calc:2', 'e:2']);
});

t.test(
  'a subProcess by processId waits for the child; its failure fails the node, an error boundary takes it by code',
  async (t) => {
    const m = new FlowStep();
    const child = await m.publish(`
processId: AUTO
name: Child
nodes:
  start: { type: startEvent, next: ask }
  ask: { type: inputNode, inputType: textbox, next: route }
  route:
    type: exclusiveGateway
    branches: [{ condition: "\${inputValue == 'ok'}", next: end }]
  end: { type: endEvent }
`);
    const parentFlow = (boundaryCode: string) => `
processId: AUTO
name: Parent
nodes:
  start: { type: startEvent, next: sub }
  sub: { type: subProcess, processId: ${child}, next: done }
  caught: { type: boundaryEvent, attachedTo: sub, event: error, errorCode: ${boundaryCode}, next: handled }
  handled: { type: endEvent }
  done: { type: endEvent }
`;
    const pid = await m.publish(parentFlow('NO_BRANCH_MATCHED'));
    const p1 = m.started(pid);
    t.equal(p1.stateCd, STATE.RUNNING);
    const sub = Object.values(p1.nodes).find((n) => n.nodeId === 'sub')!;
    t.equal(sub.statusCd, STATUS.WAITING, 'the subProcess node waits');
    const [c1] = childrenOf(m, p1, 'sub');
    t.equal(c1!.processId, child);
    m.answer(c1!.processInstanceId, 'ask', { inputValue: 'ok' });
    t.equal(m.instance(p1.processInstanceId).stateCd, STATE.COMPLETED, 'the child completed, so did the parent');

    const p2 = m.started(pid);
    const [c2] = childrenOf(m, p2, 'sub');
    m.answer(c2!.processInstanceId, 'ask', { inputValue: 'no' });
    const after = m.instance(p2.processInstanceId);
    t.equal(m.instance(c2!.processInstanceId).stateCd, STATE.FAILED);
    t.equal(after.stateCd, STATE.COMPLETED, 'the error boundary took the failure');
    t.same(trail(after), ['start:2', 'sub:3', 'caught:2', 'handled:2']);
    t.equal((after.variables.error as { code: string }).code, 'NO_BRANCH_MATCHED', 'the path gets the error');

    const other = await m.publish(parentFlow('SOMETHING_ELSE'));
    const p3 = m.started(other);
    const [c3] = childrenOf(m, p3, 'sub');
    m.answer(c3!.processInstanceId, 'ask', { inputValue: 'no' });
    const failed = m.instance(p3.processInstanceId);
    t.equal(failed.stateCd, STATE.FAILED, 'a boundary for another code does not take it');
    t.equal(failed.error?.code, 'NO_BRANCH_MATCHED');
    t.equal(failed.error?.nodeId, 'sub');
  },
);

t.test(
  'cancelling the parent cancels the child; cancelling the child fails the parent node (CHILD_CANCELLED)',
  async (t) => {
    const m = new FlowStep();
    const pid = await m.publish(`
processId: AUTO
name: Parent
nodes:
  start: { type: startEvent, next: sub }
  sub:
    type: subProcess
    nodes:
      s: { type: startEvent, next: ask }
      ask: { type: inputNode, inputType: textbox, next: e }
      e: { type: endEvent }
    next: done
  done: { type: endEvent }
`);
    const p1 = m.started(pid);
    const [c1] = childrenOf(m, p1, 'sub');
    m.cancel(p1.processInstanceId);
    t.equal(m.instance(p1.processInstanceId).stateCd, STATE.CANCELLED);
    const c1After = m.instance(c1!.processInstanceId);
    t.equal(c1After.stateCd, STATE.CANCELLED, 'the child is cancelled with its parent');
    t.same(trail(c1After), ['s:2', 'ask:4']);

    const p2 = m.started(pid);
    const [c2] = childrenOf(m, p2, 'sub');
    m.cancel(c2!.processInstanceId);
    const p2After = m.instance(p2.processInstanceId);
    t.equal(p2After.stateCd, STATE.FAILED);
    t.equal(p2After.error?.code, 'CHILD_CANCELLED');
    t.equal(running(m).length, 0, 'nothing left running');
  },
);

t.test('a subProcess naming a flow that does not exist or is not published fails the node with its code', async (t) => {
  const m = new FlowStep();
  const draft = await m.publish(
    `
processId: AUTO
name: Only in development
nodes:
  s: { type: startEvent, next: e }
  e: { type: endEvent }
`,
    'default',
    'DEVELOPMENT',
  );
  for (const [target, code] of [
    ['00000000-0000-4000-8000-000000000000', 'PROCESS_NOT_FOUND'],
    [draft, 'PROCESS_NOT_PUBLISHED'],
  ] as const) {
    const pid = await m.publish(`
processId: AUTO
name: Parent
nodes:
  start: { type: startEvent, next: sub }
  sub: { type: subProcess, processId: ${target}, next: done }
  done: { type: endEvent }
`);
    const p = m.started(pid);
    t.equal(p.stateCd, STATE.FAILED, `${code}: the execution fails`);
    t.equal(p.error?.code, code);
    t.equal(p.error?.nodeId, 'sub');
  }
});

t.test('callProcess starts another execution, passes on at once and sets calledProcessInstanceId', async (t) => {
  const m = new FlowStep();
  const target = await m.publish(`
processId: AUTO
name: Called
nodes:
  s: { type: startEvent, next: ask }
  ask: { type: inputNode, inputType: textbox, next: e }
  e: { type: endEvent }
`);
  const pid = await m.publish(`
processId: AUTO
name: Caller
nodes:
  start: { type: startEvent, next: call }
  call: { type: callProcess, processId: ${target}, data: { orderId: "{orderId}" }, correlationKey: "order-{orderId}", next: done }
  done: { type: endEvent }
`);
  const caller = m.started(pid, { orderId: 7 });
  t.equal(caller.stateCd, STATE.COMPLETED, 'the caller does not wait');
  const calledId = caller.variables.calledProcessInstanceId as string;
  const called = m.instance(calledId);
  t.equal(called.processId, target);
  t.equal(called.stateCd, STATE.RUNNING, 'the called execution goes on on its own');
  t.same(called.variables, { orderId: 7 });
  t.equal(called.correlationKey, 'order-7');
  t.equal(called.parentInstanceId, null, 'not a child: nothing waits for it');

  const missing = await m.publish(`
processId: AUTO
name: Caller of nothing
nodes:
  start: { type: startEvent, next: call }
  call: { type: callProcess, processId: 00000000-0000-4000-8000-000000000001, next: done, errorFlow: oops }
  done: { type: endEvent }
  oops: { type: endEvent }
`);
  const missed = m.started(missing);
  t.equal(missed.stateCd, STATE.COMPLETED, 'errorFlow took the failure');
  t.same(trail(missed), ['start:2', 'call:3', 'oops:2']);
  t.equal((missed.variables.error as { code: string }).code, 'PROCESS_NOT_FOUND');
});

t.test('a timer boundary on a subProcess cancels the child under it', async (t) => {
  const m = new FlowStep();
  const pid = await m.publish(`
processId: AUTO
name: Deadline
nodes:
  start: { type: startEvent, next: sub }
  sub:
    type: subProcess
    nodes:
      s: { type: startEvent, next: wait }
      wait: { type: intermediateCatchEvent, eventType: message, messageRef: never, next: e }
      e: { type: endEvent }
    next: done
  late: { type: boundaryEvent, attachedTo: sub, event: timer, duration: 5m, next: expired }
  expired: { type: endEvent }
  done: { type: endEvent }
`);
  const p = m.started(pid);
  const [c] = childrenOf(m, p, 'sub');
  m.ms += 5 * 60_000;
  m.run({
    kind: 'timer',
    instanceId: p.processInstanceId,
    nodeInstanceId: m.node(p.processInstanceId, 'sub').id,
    boundaryId: 'late',
  });
  const after = m.instance(p.processInstanceId);
  t.same(trail(after), ['start:2', 'sub:4', 'late:2', 'expired:2']);
  t.equal(m.instance(c!.processInstanceId).stateCd, STATE.CANCELLED, 'the child under it is cancelled');
  t.same(m.state.subscriptions, {}, "the child's subscription is gone");
});

t.test(
  'the failure rule: error boundary, else errorFlow, else the execution fails and every other node is cancelled',
  async (t) => {
    const m = new FlowStep();
    const pid = await m.publish(`
processId: AUTO
name: Fork and fail
nodes:
  start: { type: startEvent, next: [wait, boom] }
  wait: { type: inputNode, inputType: textbox, next: join }
  boom: { type: ifElse, condition: "\${nosuch > 1}", then: join, else: join }
  join: { type: parallelGateway, next: end }
  end: { type: endEvent }
`);
    const p = m.started(pid);
    t.equal(p.stateCd, STATE.FAILED);
    t.same(p.error, { code: 'EXPRESSION_ERROR', message: p.error?.message, nodeId: 'boom' });
    t.equal(
      Object.values(p.nodes).find((n) => n.nodeId === 'wait')?.statusCd,
      STATUS.CANCELLED,
      'the other branch is cancelled',
    );
  },
);

t.test('a collection loop runs its body once per item, in order, and collects one value per iteration', async (t) => {
  const m = new FlowStep();
  const pid = await m.publish(LOOP('    collection: "{items}"\n    collect: square'));
  const p = m.started(pid, { items: [3, 1, 2] });
  t.equal(p.stateCd, STATE.COMPLETED);
  t.same(p.variables.square, [3, 1, 2], 'collected in item order');
  t.equal(p.variables.seen, 2, 'a sequential iteration hands its variables on');
  const iterations = childrenOf(m, p, 'each');
  t.same(
    iterations.map((c) => c.iteration),
    [0, 1, 2],
  );
  t.same(
    iterations.map((c) => c.variables.item),
    [3, 1, 2],
  );

  const empty = m.started(pid, { items: [] });
  t.equal(empty.stateCd, STATE.COMPLETED);
  t.same(empty.variables.square, [], 'no items: an empty collection');

  const notArray = m.started(pid, { items: 'abc' });
  t.equal(notArray.error?.code, 'LOOP_COLLECTION');
  const tooMany = await m.publish(LOOP('    collection: "{items}"\n    maxIterations: 2'));
  t.equal(m.started(tooMany, { items: [1, 2, 3] }).error?.code, 'LOOP_LIMIT');
});

t.test(
  'a condition loop runs while its condition holds, and maxIterations stops an endless one (LOOP_LIMIT)',
  async (t) => {
    const m = new FlowStep({ work: increments });
    const body = `
      s: { type: startEvent, next: inc }
      inc: { type: scriptTask, script: "return { n: vars.n + 1 }", next: e }
      e: { type: endEvent }`;
    const setBody = `
      s: { type: startEvent, next: e }
      e: { type: endEvent }`;
    const counting = await m.publish(LOOP('    condition: "${n < 5}"\n    collect: n', body));
    const done = m.started(counting, { n: 0 });
    t.equal(done.stateCd, STATE.COMPLETED, JSON.stringify(done.error));
    t.same(
      done.variables.n,
      [1, 2, 3, 4, 5],
      "the condition saw each iteration's n; collect gathered them under the same name",
    );

    const endless = await m.publish(LOOP('    condition: "${true}"\n    maxIterations: 3', setBody));
    const e = m.started(endless);
    t.equal(e.stateCd, STATE.FAILED);
    t.equal(e.error?.code, 'LOOP_LIMIT');
    t.equal(childrenOf(m, e, 'each').length, 3, 'exactly maxIterations ran');
  },
);

t.test(
  'a parallel loop runs at most `concurrency` iterations at once, each with its own copy of the variables',
  async (t) => {
    const m = new FlowStep();
    const pid = await m.publish(
      LOOP(
        '    collection: "{items}"\n    parallel: true\n    concurrency: 2\n    collect: got',
        `
      s: { type: startEvent, next: wait }
      wait: { type: intermediateCatchEvent, eventType: message, messageRef: go, correlationKey: "{item}", next: e }
      e: { type: endEvent }`,
      ),
    );
    const p = m.started(pid, { items: ['a', 'b', 'c', 'd'] });
    const live = () => running(m).filter((i) => i.parentInstanceId === p.processInstanceId);
    t.equal(live().length, 2, 'two at once');
    m.event('go', 'b', { got: 'B' });
    t.same(
      live()
        .map((i) => i.variables.item)
        .sort(),
      ['a', 'c'],
      'the next item started when one finished',
    );
    for (const k of ['c', 'a', 'd']) m.event('go', k, { got: k.toUpperCase() });
    const after = m.instance(p.processInstanceId);
    t.equal(after.stateCd, STATE.COMPLETED);
    t.same(after.variables.got, ['A', 'B', 'C', 'D'], 'collected by index, whatever the finishing order');
    t.notOk('item' in after.variables, 'parallel iterations do not write back');
  },
);

t.test(
  'an inclusive join fed by a child that finishes at once fires (settling goes round until nothing changes)',
  async (t) => {
    const m = new FlowStep();
    const pid = await m.publish(`
processId: AUTO
name: OR-join after a loop
nodes:
  start: { type: startEvent, next: split }
  split:
    type: inclusiveGateway
    branches:
      - { condition: "\${true}", next: loop }
      - { condition: "\${true}", next: join }
  loop:
    type: loopNode
    collection: "{items}"
    nodes:
      s: { type: startEvent, next: e }
      e: { type: endEvent }
    next: join
  join: { type: inclusiveGateway, next: done }
  done: { type: endEvent }
`);
    const inst = m.started(pid, { items: [1] });
    t.equal(inst.stateCd, STATE.COMPLETED, 'not left hanging with nothing live');
    t.same(trail(inst).slice(-2), ['join:2', 'done:2']);
  },
);

t.test('a flow that calls itself with callProcess stops at 32 levels (CHILD_DEPTH_EXCEEDED)', async (t) => {
  const m = new FlowStep();
  const pid = await m.publish(
    `
processId: AUTO
name: Calls itself
nodes:
  start: { type: startEvent, next: again }
  again: { type: callProcess, processId: SELF, data: { selfId: "{selfId}" }, next: done }
  done: { type: endEvent }
`.replace('SELF', '"{selfId}"'),
  );
  // Each called execution runs in a step of its own after its caller's: FlowStep runs them all.
  m.start(pid, { selfId: pid });
  const failure = m.events.find((e) => e.type === 'PROCESS_FAILED' && e.processId === pid);
  t.equal(m.instance(failure!.processInstanceId).error?.code, 'CHILD_DEPTH_EXCEEDED');
  const started = m.events.filter((e) => e.type === 'PROCESS_STARTED' && e.processId === pid);
  const failed = m.events.filter((e) => e.type === 'PROCESS_FAILED' && e.processId === pid);
  t.equal(failed.length, 1, 'exactly one link of the chain fails');
  t.ok(started.length <= 34, `the chain stopped (${started.length} executions)`);
});
