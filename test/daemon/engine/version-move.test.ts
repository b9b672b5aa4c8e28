import { randomUUID } from 'node:crypto';
import t, { type Test } from 'tap';
import { planEffects } from '../../../src/daemon/engine/effect-plan.js';
import { boundaryKey, nodeKey } from '../../../src/daemon/engine/keys.js';
import { STATE, STATUS } from '../../../src/daemon/state/state.js';
import { crashImage, engineHarness, trail, type EngineHarness } from '../../helpers/engine.js';
import { codeOf } from '../../helpers/error-code.js';
import { MemoryStep } from '../../helpers/step.js';

const HOUR = 3_600_000;

/**
 * A userTask `ask` (a timeout of 4h; 3h with `extra`) with a timer boundary event `t1` (`t2`
 * with `extra`) of `duration` to `late`; `extra`: a node `extra` after the task.
 */
const guarded = (pid: string, duration: string, extra: boolean) => `processId: ${pid}
name: Guarded task
nodes:
  start: { type: startEvent, next: ask }
  ask: { type: userTask, timeout: ${extra ? '3h' : '4h'}, next: ${extra ? 'extra' : 'done'} }
  t${extra ? 2 : 1}: { type: boundaryEvent, attachedTo: ask, event: timer, duration: ${duration}, next: late }
  late: { type: setVariable, variables: { late: "version ${extra ? 2 : 1}" }, next: done }
${extra ? '  extra: { type: setVariable, variables: { extra: "v2 ran" }, next: done }\n' : ''}  done: { type: endEvent }
`;

t.test("a move re-arms the live nodes' timers from the target, once durable", async (t) => {
  const m = new MemoryStep();
  const pid = randomUUID();
  await m.publish(guarded(pid, '1h', false));
  await m.publish(guarded(pid, '2h', true));
  const id = m.run({ kind: 'start', request: { organization: 'default', processId: pid, versionNumber: '1' } }).answer
    .processInstanceId;
  const ask = m.node(id, 'ask');
  const startedAt = Date.parse(ask.startTime);
  m.ms += 60_000;
  const moved = m.run({ kind: 'move', instanceId: id, toVersion: '2', by: 'key:k1' });
  const plan = planEffects(m.state, m.ctx, moved.records, moved.effects, {
    lifecycle: false,
    jobs: false,
    spans: false,
    metrics: false,
  });
  t.same(plan, [
    { kind: 'timer.delete', key: boundaryKey(id, ask.id, 't1') },
    { kind: 'timer.set', key: boundaryKey(id, ask.id, 't2'), at: startedAt + 2 * HOUR },
    { kind: 'timer.set', key: nodeKey(id, ask.id), at: startedAt + 3 * HOUR },
  ]);
});

/** Publishes versions 1 and 2 of a guarded task and starts an execution of version 1; answers the flow and the execution. */
async function waitingInVersion1(h: EngineHarness): Promise<{ pid: string; id: string }> {
  const pid = randomUUID();
  await h.publish(guarded(pid, '1h', false));
  await h.publish(guarded(pid, '2h', true));
  const inst = await h.engine.start({
    organization: 'default',
    processId: pid,
    versionNumber: '1',
    correlationKey: null,
    data: {},
  });
  return { pid, id: inst.processInstanceId };
}

/** Answers the task of `id` on `h` and checks it went on in version 2. */
async function answerInVersion2(t: Test, h: EngineHarness, id: string): Promise<void> {
  const before = await h.get(id);
  t.equal(before.processVersion, '2', 'it runs version 2');
  t.equal(before.nodes[Object.keys(before.nodes).find((k) => before.nodes[k]!.nodeId === 'ask')!]!.statusCd, 1);
  await h.engine.submitTask({ organization: 'default', processInstanceId: id, nodeId: 'ask', action: 'COMPLETE' });
  const after = await h.get(id);
  t.equal(after.stateCd, STATE.COMPLETED);
  t.equal(after.variables.extra, 'v2 ran', 'the node only version 2 has ran');
}

t.test('a moved wait survives a restart: from the journal, and from a snapshot', async (t) => {
  const h = await engineHarness(t);
  const a = await waitingInVersion1(h);
  const b = await waitingInVersion1(h);
  const dry = await h.engine.move({
    organization: 'default',
    processInstanceId: a.id,
    toVersion: '2',
    by: 'key:k1',
    dryRun: true,
  });
  t.same(dry, { processInstanceId: a.id, fromVersion: '1', toVersion: '2', moved: false, children: [] });
  t.equal((await h.get(a.id)).processVersion, '1', 'a dry run changes nothing');
  for (const { id } of [a, b])
    t.match(await h.engine.move({ organization: 'default', processInstanceId: id, toVersion: '2', by: 'key:k1' }), {
      moved: true,
    });
  t.equal(
    await codeOf(h.engine.move({ organization: 'acme', processInstanceId: a.id, toVersion: '2', by: 'key:k2' })),
    'INSTANCE_NOT_FOUND',
    "another organization's execution is not found",
  );

  const fromJournal = await engineHarness(t, await crashImage(t, h));
  await answerInVersion2(t, fromJournal, a.id);
  await fromJournal.close();

  const fromSnapshot = await h.restart();
  await answerInVersion2(t, fromSnapshot, b.id);
});

t.test("after a move the target's timer boundary event fires, at the node's start plus its duration", async (t) => {
  const h = await engineHarness(t);
  const { id } = await waitingInVersion1(h);
  await h.engine.move({ organization: 'default', processInstanceId: id, toVersion: '2', by: 'key:k1' });
  h.advance(2 * HOUR + 1000);
  await h.waitFor((e) => e.processInstanceId === id && e.type === 'PROCESS_COMPLETED');
  const done = await h.get(id);
  t.equal(done.variables.late, 'version 2', "the target's boundary path ran");
  t.same(trail(done), ['start:2', `ask:${STATUS.CANCELLED}`, 't2:2', 'late:2', 'done:2']);
  // Had the timer of version 1's t1 (due first) been left armed, its step would have thrown: the harness fails on it.
});
