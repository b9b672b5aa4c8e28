// Child executions and timer boundary events where they need the engine: timers it arms and
// fires, restarts, history. What a step decides of subProcess, callProcess, loops and the
// failure rule is in step/composite.test.ts.
import t from 'tap';
import { liveInstances } from '../../helpers/state.js';
import { STATE, type Execution } from '../../../src/daemon/state/state.js';
import { engineHarness, trail, type EngineHarness } from '../../helpers/engine.js';
import { loopFlow as LOOP } from '../../helpers/flow-yaml.js';

/** The live child executions of a node instance, read back. */
async function children(h: EngineHarness, inst: Execution, nodeId: string): Promise<Execution[]> {
  const ni = Object.values(inst.nodes).find((n) => n.nodeId === nodeId);
  return Promise.all((ni?.children ?? []).map((id) => h.get(id)));
}

const running = (h: EngineHarness) => liveInstances(h.store.state).filter((i) => i.stateCd === STATE.RUNNING);

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

t.test('a parent that started and finished in one step still names its children once it is in history', async (t) => {
  const h = await engineHarness(t);
  const pid = await h.publish(LOOP('    collection: "{items}"'));
  const p = await h.start(pid, { items: ['a', 'b'] });
  await h.archived(p.processInstanceId);
  t.notOk(h.store.state.instances[p.processInstanceId], 'archived');
  const read = await h.get(p.processInstanceId);
  t.equal((await children(h, read, 'each')).length, 2, 'childInstanceIds survive archiving');
});
