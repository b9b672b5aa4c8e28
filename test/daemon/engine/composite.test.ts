import t from 'tap';
import { liveInstances } from '../../helpers/state.js';
import { STATE, STATUS, type Execution } from '../../../src/daemon/state/state.js';
import { engineHarness, trail, type EngineHarness } from '../../helpers/engine.js';

/** The live child executions of a node instance, read back. */
async function children(h: EngineHarness, inst: Execution, nodeId: string): Promise<Execution[]> {
  const ni = Object.values(inst.nodes).find((n) => n.nodeId === nodeId);
  return Promise.all((ni?.children ?? []).map((id) => h.get(id)));
}

const running = (h: EngineHarness) => liveInstances(h.store.state).filter((i) => i.stateCd === STATE.RUNNING);

t.test('an embedded subProcess runs as a child execution linked both ways, and its variables come back', async (t) => {
  const h = await engineHarness(t);
  const pid = await h.publish(`
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
  const parent = await h.start(pid, { n: 4, other: 'x' });
  t.equal(parent.stateCd, STATE.COMPLETED);
  t.same(trail(parent), ['start:2', 'sub:2', 'done:2']);
  t.equal(parent.variables.doubled, '44', 'the output variable came back');
  t.notOk('scratch' in parent.variables, 'only the listed outputs');
  const [child] = await children(h, parent, 'sub');
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
    const h = await engineHarness(t);
    const child = await h.publish(`
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
    const pid = await h.publish(parentFlow('NO_BRANCH_MATCHED'));
    const p1 = await h.start(pid);
    t.equal(p1.stateCd, STATE.RUNNING);
    const sub = Object.values(p1.nodes).find((n) => n.nodeId === 'sub')!;
    t.equal(sub.statusCd, STATUS.WAITING, 'the subProcess node waits');
    const [c1] = await children(h, p1, 'sub');
    t.equal(c1!.processId, child);
    await h.engine.submitTask({
      organization: null,
      processInstanceId: c1!.processInstanceId,
      nodeId: 'ask',
      action: 'COMPLETE',
      data: { inputValue: 'ok' },
    });
    t.equal((await h.get(p1.processInstanceId)).stateCd, STATE.COMPLETED, 'the child completed, so did the parent');

    const p2 = await h.start(pid);
    const [c2] = await children(h, p2, 'sub');
    await h.engine.submitTask({
      organization: null,
      processInstanceId: c2!.processInstanceId,
      nodeId: 'ask',
      action: 'COMPLETE',
      data: { inputValue: 'no' },
    });
    const after = await h.get(p2.processInstanceId);
    t.equal((await h.get(c2!.processInstanceId)).stateCd, STATE.FAILED);
    t.equal(after.stateCd, STATE.COMPLETED, 'the error boundary took the failure');
    t.same(trail(after), ['start:2', 'sub:3', 'caught:2', 'handled:2']);
    t.equal((after.variables.error as { code: string }).code, 'NO_BRANCH_MATCHED', 'the path gets the error');

    const other = await h.publish(parentFlow('SOMETHING_ELSE'));
    const p3 = await h.start(other);
    const [c3] = await children(h, p3, 'sub');
    await h.engine.submitTask({
      organization: null,
      processInstanceId: c3!.processInstanceId,
      nodeId: 'ask',
      action: 'COMPLETE',
      data: { inputValue: 'no' },
    });
    const failed = await h.get(p3.processInstanceId);
    t.equal(failed.stateCd, STATE.FAILED, 'a boundary for another code does not take it');
    t.equal(failed.error?.code, 'NO_BRANCH_MATCHED');
    t.equal(failed.error?.nodeId, 'sub');
  },
);

t.test(
  'cancelling the parent cancels the child; cancelling the child fails the parent node (CHILD_CANCELLED)',
  async (t) => {
    const h = await engineHarness(t);
    const pid = await h.publish(`
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
    const p1 = await h.start(pid);
    const [c1] = await children(h, p1, 'sub');
    await h.engine.cancel({ organization: null, processInstanceId: p1.processInstanceId });
    t.equal((await h.get(p1.processInstanceId)).stateCd, STATE.CANCELLED);
    const c1After = await h.get(c1!.processInstanceId);
    t.equal(c1After.stateCd, STATE.CANCELLED, 'the child is cancelled with its parent');
    t.same(trail(c1After), ['s:2', 'ask:4']);

    const p2 = await h.start(pid);
    const [c2] = await children(h, p2, 'sub');
    await h.engine.cancel({ organization: null, processInstanceId: c2!.processInstanceId });
    const p2After = await h.get(p2.processInstanceId);
    t.equal(p2After.stateCd, STATE.FAILED);
    t.equal(p2After.error?.code, 'CHILD_CANCELLED');
    t.equal(running(h).length, 0, 'nothing left running');
  },
);

t.test('a subProcess naming a flow that does not exist or is not published fails the node with its code', async (t) => {
  const h = await engineHarness(t);
  const draft = await h.publish(
    `
processId: AUTO
name: Only in development
nodes:
  s: { type: startEvent, next: e }
  e: { type: endEvent }
`,
    { environment: 'DEVELOPMENT' },
  );
  for (const [target, code] of [
    ['00000000-0000-4000-8000-000000000000', 'PROCESS_NOT_FOUND'],
    [draft, 'PROCESS_NOT_PUBLISHED'],
  ] as const) {
    const pid = await h.publish(`
processId: AUTO
name: Parent
nodes:
  start: { type: startEvent, next: sub }
  sub: { type: subProcess, processId: ${target}, next: done }
  done: { type: endEvent }
`);
    const p = await h.start(pid);
    t.equal(p.stateCd, STATE.FAILED, `${code}: the execution fails`);
    t.equal(p.error?.code, code);
    t.equal(p.error?.nodeId, 'sub');
  }
});

t.test('callProcess starts another execution, passes on at once and sets calledProcessInstanceId', async (t) => {
  const h = await engineHarness(t);
  const target = await h.publish(`
processId: AUTO
name: Called
nodes:
  s: { type: startEvent, next: ask }
  ask: { type: inputNode, inputType: textbox, next: e }
  e: { type: endEvent }
`);
  const pid = await h.publish(`
processId: AUTO
name: Caller
nodes:
  start: { type: startEvent, next: call }
  call: { type: callProcess, processId: ${target}, data: { orderId: "{orderId}" }, correlationKey: "order-{orderId}", next: done }
  done: { type: endEvent }
`);
  const caller = await h.start(pid, { orderId: 7 });
  t.equal(caller.stateCd, STATE.COMPLETED, 'the caller does not wait');
  const calledId = caller.variables.calledProcessInstanceId as string;
  const called = await h.get(calledId);
  t.equal(called.processId, target);
  t.equal(called.stateCd, STATE.RUNNING, 'the called execution goes on on its own');
  t.same(called.variables, { orderId: 7 });
  t.equal(called.correlationKey, 'order-7');
  t.equal(called.parentInstanceId, null, 'not a child: nothing waits for it');

  const missing = await h.publish(`
processId: AUTO
name: Caller of nothing
nodes:
  start: { type: startEvent, next: call }
  call: { type: callProcess, processId: 00000000-0000-4000-8000-000000000001, next: done, errorFlow: oops }
  done: { type: endEvent }
  oops: { type: endEvent }
`);
  const m = await h.start(missing);
  t.equal(m.stateCd, STATE.COMPLETED, 'errorFlow took the failure');
  t.same(trail(m), ['start:2', 'call:3', 'oops:2']);
  t.equal((m.variables.error as { code: string }).code, 'PROCESS_NOT_FOUND');
});

const TIMER_BOUNDARY = (cancelActivity: boolean) => `
processId: AUTO
name: Reminder
nodes:
  start: { type: startEvent, next: ask }
  ask: { type: inputNode, inputType: textbox, next: done }
  remind: { type: boundaryEvent, attachedTo: ask, event: timer, duration: 1h, cancelActivity: ${cancelActivity}, next: note }
  note: { type: setVariable, variables: { reminded: true }, next: noted }
  noted: { type: endEvent }
  done: { type: endEvent }
`;

t.test('an interrupting timer boundary event cancels the node it watches and takes its path', async (t) => {
  const h = await engineHarness(t);
  const pid = await h.publish(TIMER_BOUNDARY(true));
  const inst = await h.start(pid);
  t.equal(h.engine.timerCount, 1, 'armed while the node waits');
  h.advance(59 * 60_000);
  t.equal((await h.get(inst.processInstanceId)).stateCd, STATE.RUNNING, 'not yet');
  h.advance(60_000);
  await h.waitFor((e) => e.type === 'PROCESS_COMPLETED' && e.processInstanceId === inst.processInstanceId);
  const after = await h.get(inst.processInstanceId);
  t.same(trail(after), ['start:2', 'ask:4', 'remind:2', 'note:2', 'noted:2']);
  t.ok(
    h.events.some((e) => e.type === 'NODE_CANCELLED' && e.nodeId === 'ask'),
    'NODE_CANCELLED published',
  );
  t.equal(h.engine.timerCount, 0);
});

t.test('a non-interrupting timer boundary event fires once beside the node, which goes on waiting', async (t) => {
  const h = await engineHarness(t);
  const pid = await h.publish(TIMER_BOUNDARY(false));
  const inst = await h.start(pid);
  h.advance(3_600_000);
  await h.waitFor(
    (e) => e.type === 'NODE_COMPLETED' && e.nodeId === 'noted' && e.processInstanceId === inst.processInstanceId,
  );
  const mid = await h.get(inst.processInstanceId);
  t.equal(mid.stateCd, STATE.RUNNING);
  t.same(
    trail(mid),
    ['start:2', 'ask:1', 'remind:2', 'note:2', 'noted:2'],
    'the boundary path ran; the node still waits',
  );
  t.equal(mid.variables.reminded, true);
  h.advance(10 * 3_600_000);
  t.equal(
    Object.values((await h.get(inst.processInstanceId)).nodes).filter((n) => n.nodeId === 'remind').length,
    1,
    'it fired once',
  );
  await h.engine.submitTask({
    organization: null,
    processInstanceId: inst.processInstanceId,
    nodeId: 'ask',
    action: 'COMPLETE',
    data: { inputValue: 'x' },
  });
  t.equal((await h.get(inst.processInstanceId)).stateCd, STATE.COMPLETED);
  t.equal(h.engine.timerCount, 0);
});

t.test('a timer boundary event armed before a restart fires after it, at the same instant', async (t) => {
  let h = await engineHarness(t);
  const pid = await h.publish(TIMER_BOUNDARY(true));
  const inst = await h.start(pid);
  h.advance(30 * 60_000);
  h = await h.restart();
  t.equal(h.engine.timerCount, 1, 'armed again from the node start time');
  h.advance(29 * 60_000);
  t.equal((await h.get(inst.processInstanceId)).stateCd, STATE.RUNNING);
  h.advance(60_000);
  await h.waitFor((e) => e.type === 'PROCESS_COMPLETED' && e.processInstanceId === inst.processInstanceId);

  // Fired while down: overdue at restart, so it fires at once.
  const again = await h.start(pid);
  await h.close();
  h.clock.advance(2 * 3_600_000);
  h = await h.restart();
  await h.waitFor((e) => e.type === 'PROCESS_COMPLETED' && e.processInstanceId === again.processInstanceId);
  const after = await h.get(again.processInstanceId);
  t.same(trail(after), ['start:2', 'ask:4', 'remind:2', 'note:2', 'noted:2']);
});

t.test('a timer boundary on a subProcess cancels the child under it', async (t) => {
  const h = await engineHarness(t);
  const pid = await h.publish(`
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
  const p = await h.start(pid);
  const [c] = await children(h, p, 'sub');
  h.advance(5 * 60_000);
  await h.waitFor((e) => e.type === 'PROCESS_COMPLETED' && e.processInstanceId === p.processInstanceId);
  const after = await h.get(p.processInstanceId);
  t.same(trail(after), ['start:2', 'sub:4', 'late:2', 'expired:2']);
  t.equal((await h.get(c!.processInstanceId)).stateCd, STATE.CANCELLED, 'the child under it is cancelled');
  t.same(h.store.state.subscriptions, {}, "the child's subscription is gone");
});

t.test(
  'the failure rule: error boundary, else errorFlow, else the execution fails and every other node is cancelled',
  async (t) => {
    const h = await engineHarness(t);
    const pid = await h.publish(`
processId: AUTO
name: Fork and fail
nodes:
  start: { type: startEvent, next: [wait, boom] }
  wait: { type: inputNode, inputType: textbox, next: join }
  boom: { type: ifElse, condition: "\${nosuch > 1}", then: join, else: join }
  join: { type: parallelGateway, next: end }
  end: { type: endEvent }
`);
    const p = await h.start(pid);
    t.equal(p.stateCd, STATE.FAILED);
    t.same(p.error, { code: 'EXPRESSION_ERROR', message: p.error?.message, nodeId: 'boom' });
    t.equal(
      Object.values(p.nodes).find((n) => n.nodeId === 'wait')?.statusCd,
      STATUS.CANCELLED,
      'the other branch is cancelled',
    );
  },
);

const LOOP = (
  props: string,
  body = `
      s: { type: startEvent, next: calc }
      calc: { type: setVariable, variables: { square: "{item}", seen: "{index}" }, next: e }
      e: { type: endEvent }`,
) => `
processId: AUTO
name: Loop
nodes:
  start: { type: startEvent, next: each }
  each:
    type: loopNode
${props}
    nodes:${body}
    next: done
  done: { type: endEvent }
`;

t.test('a collection loop runs its body once per item, in order, and collects one value per iteration', async (t) => {
  const h = await engineHarness(t);
  const pid = await h.publish(LOOP('    collection: "{items}"\n    collect: square'));
  const p = await h.start(pid, { items: [3, 1, 2] });
  t.equal(p.stateCd, STATE.COMPLETED);
  t.same(p.variables.square, [3, 1, 2], 'collected in item order');
  t.equal(p.variables.seen, 2, 'a sequential iteration hands its variables on');
  const iterations = await children(h, p, 'each');
  t.same(
    iterations.map((c) => c.iteration),
    [0, 1, 2],
  );
  t.same(
    iterations.map((c) => c.variables.item),
    [3, 1, 2],
  );

  const empty = await h.start(pid, { items: [] });
  t.equal(empty.stateCd, STATE.COMPLETED);
  t.same(empty.variables.square, [], 'no items: an empty collection');

  const notArray = await h.start(pid, { items: 'abc' });
  t.equal(notArray.error?.code, 'LOOP_COLLECTION');
  const tooMany = await h.publish(LOOP('    collection: "{items}"\n    maxIterations: 2'));
  t.equal((await h.start(tooMany, { items: [1, 2, 3] })).error?.code, 'LOOP_LIMIT');
});

t.test(
  'a condition loop runs while its condition holds, and maxIterations stops an endless one (LOOP_LIMIT)',
  async (t) => {
    const h = await engineHarness(t);
    const body = `
      s: { type: startEvent, next: inc }
      inc: { type: scriptTask, script: "return { n: vars.n + 1 }", next: e }
      e: { type: endEvent }`;
    const setBody = `
      s: { type: startEvent, next: e }
      e: { type: endEvent }`;
    const counting = await h.publish(LOOP('    condition: "${n < 5}"\n    collect: n', body));
    const p = await h.start(counting, { n: 0 });
    const done = await waitDone(h, p.processInstanceId);
    t.equal(done.stateCd, STATE.COMPLETED, JSON.stringify(done.error));
    t.same(
      done.variables.n,
      [1, 2, 3, 4, 5],
      "the condition saw each iteration's n; collect gathered them under the same name",
    );

    const endless = await h.publish(LOOP('    condition: "${true}"\n    maxIterations: 3', setBody));
    const e = await h.start(endless);
    t.equal(e.stateCd, STATE.FAILED);
    t.equal(e.error?.code, 'LOOP_LIMIT');
    t.equal((await children(h, e, 'each')).length, 3, 'exactly maxIterations ran');
  },
);

t.test(
  'a parallel loop runs at most `concurrency` iterations at once, each with its own copy of the variables',
  async (t) => {
    const h = await engineHarness(t);
    const pid = await h.publish(
      LOOP(
        '    collection: "{items}"\n    parallel: true\n    concurrency: 2\n    collect: got',
        `
      s: { type: startEvent, next: wait }
      wait: { type: intermediateCatchEvent, eventType: message, messageRef: go, correlationKey: "{item}", next: e }
      e: { type: endEvent }`,
      ),
    );
    const p = await h.start(pid, { items: ['a', 'b', 'c', 'd'] });
    const live = () => running(h).filter((i) => i.parentInstanceId === p.processInstanceId);
    t.equal(live().length, 2, 'two at once');
    await h.engine.publishEvent({ organization: 'default', eventType: 'go', correlationKey: 'b', data: { got: 'B' } });
    t.same(
      live()
        .map((i) => i.variables.item)
        .sort(),
      ['a', 'c'],
      'the next item started when one finished',
    );
    for (const k of ['c', 'a', 'd'])
      await h.engine.publishEvent({
        organization: 'default',
        eventType: 'go',
        correlationKey: k,
        data: { got: k.toUpperCase() },
      });
    const after = await h.get(p.processInstanceId);
    t.equal(after.stateCd, STATE.COMPLETED);
    t.same(after.variables.got, ['A', 'B', 'C', 'D'], 'collected by index, whatever the finishing order');
    t.notOk('item' in after.variables, 'parallel iterations do not write back');
  },
);

t.test('a loop resumes where it was after a restart', async (t) => {
  let h = await engineHarness(t);
  const pid = await h.publish(
    LOOP(
      '    collection: "{items}"\n    collect: answer',
      `
      s: { type: startEvent, next: ask }
      ask: { type: inputNode, inputType: textbox, next: keep }
      keep: { type: setVariable, variables: { answer: "{inputValue}" }, next: e }
      e: { type: endEvent }`,
    ),
  );
  const p = await h.start(pid, { items: [1, 2, 3] });
  const answer = async (value: string) => {
    const child = running(h).find((i) => i.parentInstanceId === p.processInstanceId)!;
    await h.engine.submitTask({
      organization: null,
      processInstanceId: child.processInstanceId,
      nodeId: 'ask',
      action: 'COMPLETE',
      data: { inputValue: value },
    });
  };
  await answer('one');
  h = await h.restart();
  await answer('two');
  h = await h.restart();
  await answer('three');
  const after = await h.get(p.processInstanceId);
  t.equal(after.stateCd, STATE.COMPLETED);
  t.same(after.variables.answer, ['one', 'two', 'three']);
});

/** Waits (bounded) until the execution is no longer running: for work done outside the step (scripts, HTTP). */
async function waitDone(h: EngineHarness, id: string): Promise<Execution> {
  const done = (e: { type: string; processInstanceId: string }) =>
    e.processInstanceId === id && e.type.startsWith('PROCESS_') && e.type !== 'PROCESS_STARTED';
  await h.waitFor(done);
  return h.get(id);
}

t.test(
  'an inclusive join fed by a child that finishes at once fires (settling goes round until nothing changes)',
  async (t) => {
    const h = await engineHarness(t);
    const pid = await h.publish(`
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
    const inst = await h.start(pid, { items: [1] });
    t.equal(inst.stateCd, STATE.COMPLETED, 'not left hanging with nothing live');
    t.same(trail(inst).slice(-2), ['join:2', 'done:2']);
  },
);

t.test('a flow that calls itself with callProcess stops at 32 levels (CHILD_DEPTH_EXCEEDED)', async (t) => {
  const h = await engineHarness(t);
  const pid = await h.publish(
    `
processId: AUTO
name: Calls itself
nodes:
  start: { type: startEvent, next: again }
  again: { type: callProcess, processId: SELF, data: { selfId: "{selfId}" }, next: done }
  done: { type: endEvent }
`.replace('SELF', '"{selfId}"'),
  );
  await h.start(pid, { selfId: pid });
  // Each called execution runs in a step of its own after its caller's.
  const failure = await h.waitFor((e) => e.type === 'PROCESS_FAILED' && e.processId === pid);
  t.equal((await h.get(failure.processInstanceId)).error?.code, 'CHILD_DEPTH_EXCEEDED');
  await h.get(failure.processInstanceId); // what was left to run has run
  const started = h.events.filter((e) => e.type === 'PROCESS_STARTED' && e.processId === pid);
  const failed = h.events.filter((e) => e.type === 'PROCESS_FAILED' && e.processId === pid);
  t.equal(failed.length, 1, 'exactly one link of the chain fails');
  t.ok(started.length <= 34, `the chain stopped (${started.length} executions)`);
});

t.test('a parent that started and finished in one step still names its children once it is in history', async (t) => {
  const h = await engineHarness(t);
  const pid = await h.publish(LOOP('    collection: "{items}"'));
  const p = await h.start(pid, { items: ['a', 'b'] });
  await h.archived(p.processInstanceId);
  t.notOk(h.store.state.instances[p.processInstanceId], 'archived');
  const read = await h.get(p.processInstanceId);
  t.equal((await children(h, read, 'each')).length, 2, 'childInstanceIds survive archiving');
});
