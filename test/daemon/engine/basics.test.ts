// What the engine makes of a run: one durable step, history, listing. What paths a flow's
// tokens take (gateways, terminate, the step limit) is decided in step/basics.test.ts.
import t from 'tap';
import { logEntries } from '../../../src/daemon/state/log-line.js';
import { STATE } from '../../../src/daemon/state/state.js';
import { engineHarness, trail } from '../../helpers/engine.js';

t.test('a linear flow runs to completion in one durable step, with events and logs', async (t) => {
  const h = await engineHarness(t);
  const pid = await h.publish(`
processId: AUTO
name: Linear
nodes:
  start: { type: startEvent, next: work }
  work: { type: task, name: Do the work, next: set }
  set:
    type: setVariable
    variables: { total: "{order.amount}", label: "order {order.id} of {customer}", nothing: "{missing.value}" }
    next: out
  out: { type: outputNode, outputs: { result: "{total}" }, next: done }
  done: { type: endEvent }
`);
  const seqBefore = h.store.lastSeq;
  const inst = await h.start(pid, { order: { id: 7, amount: 12.5 }, customer: 'ACME' });
  await h.archived(inst.processInstanceId);
  t.equal(
    h.store.lastSeq - seqBefore,
    0,
    'nothing journaled: a run that starts and finishes in one step is written to history alone',
  );
  t.same(
    await h.engine.getInstance({ organization: null }, inst.processInstanceId),
    inst,
    'read back from history as it was live',
  );
  t.equal(inst.stateCd, STATE.COMPLETED);
  t.same(trail(inst), ['start:2', 'work:2', 'set:2', 'out:2', 'done:2']);
  t.equal(inst.variables.total, 12.5, 'a lone {ref} keeps its type');
  t.equal(inst.variables.label, 'order 7 of ACME');
  t.equal(inst.variables.nothing, '', 'a missing reference resolves to an empty string');
  t.same(inst.output, { result: 12.5 });
  t.ok(inst.endTime);
  t.match(
    logEntries(inst).find((l) => l.level === 'WARN'),
    { nodeId: 'set', message: /\{missing\.value\}/ },
    'the missing reference is logged as WARN',
  );
  t.match(
    logEntries(inst).find((l) => l.nodeId === 'work'),
    { nodeName: 'Do the work', nodeType: 'task', level: 'INFO' },
  );
  const types = h.events.filter((e) => e.processInstanceId === inst.processInstanceId).map((e) => e.type);
  t.same(types.slice(0, 3), ['PROCESS_STARTED', 'NODE_STARTED', 'NODE_COMPLETED']);
  t.equal(types.at(-1), 'PROCESS_COMPLETED');
  t.equal(
    h.logs.filter((l) => l.processInstanceId === inst.processInstanceId).length,
    inst.logs.length,
    'every log entry streamed',
  );
  t.same(h.logs.map((l) => l.id).slice(0, 3), [1, 2, 3], 'log ids number the entries');
  t.notOk(h.store.state.instances[inst.processInstanceId], 'archived out of the live state');
});

t.test('runs written to history alone leave nothing for the next checkpoint to write', async (t) => {
  const h = await engineHarness(t);
  const linear = await h.publish(`
processId: AUTO
name: Linear
nodes:
  start: { type: startEvent, next: done }
  done: { type: endEvent }
`);
  const waits = await h.publish(`
processId: AUTO
name: Waits
nodes:
  start: { type: startEvent, next: ask }
  ask: { type: inputNode, inputType: textbox, next: done }
  done: { type: endEvent }
`);
  await h.store.checkpoint();
  t.equal(h.store.changedSinceCheckpoint, 0, 'nothing changed since the checkpoint');
  const ran = await Promise.all(Array.from({ length: 50 }, () => h.start(linear, {})));
  for (const inst of ran) await h.archived(inst.processInstanceId);
  // Checkpoints follow the journal's growth, which these runs leave alone: a mark of each would
  // stay until a restart.
  t.equal(h.store.changedSinceCheckpoint, 0, 'fifty runs in history: none marked changed');
  const waiting = await h.start(waits, {});
  t.equal(h.store.changedSinceCheckpoint, 1, 'a journaled execution is marked, for the checkpoint to write');
  await h.store.checkpoint();
  t.equal(h.store.changedSinceCheckpoint, 0, 'and written by it');
  t.equal(h.store.state.instances[waiting.processInstanceId]?.stateCd, STATE.RUNNING);
});

t.test('an execution read back from history is what it was live, whichever way it was archived', async (t) => {
  const h = await engineHarness(t);
  const straight = await h.publish(`
processId: AUTO
name: Straight
nodes:
  start: { type: startEvent, next: set }
  set: { type: setVariable, variables: { x: "{a}", y: "{missing}" }, next: out }
  out: { type: outputNode, outputs: { r: "{x}" }, next: done }
  done: { type: endEvent }
`);
  const waits = await h.publish(`
processId: AUTO
name: Waits
nodes:
  start: { type: startEvent, next: ask }
  ask: { type: inputNode, inputType: number, next: done }
  done: { type: endEvent }
`);
  // Snapshot the live state the moment each finishes, before it is archived.
  const live = new Map<string, string>();
  h.engine.on('lifecycle', (e) => {
    if (e.type === 'PROCESS_COMPLETED')
      live.set(e.processInstanceId, JSON.stringify(h.store.state.instances[e.processInstanceId]));
  });
  const one = await h.engine.start({ processId: straight, organization: 'default', data: { a: [1, { b: 2 }] } });
  const two = await h.engine.start({ processId: waits, organization: 'default' });
  await h.engine.submitTask({
    organization: 'default',
    processInstanceId: two.processInstanceId,
    nodeId: 'ask',
    action: 'COMPLETE',
    data: { inputValue: 5 },
  });
  for (const inst of [one, two]) {
    await h.archived(inst.processInstanceId);
    t.notOk(h.store.state.instances[inst.processInstanceId], 'no longer live');
    const archived = await h.engine.getInstance({ organization: null }, inst.processInstanceId);
    t.same(
      JSON.parse(JSON.stringify(archived)),
      JSON.parse(live.get(inst.processInstanceId)!),
      `${inst.processName}: the same from history`,
    );
    t.equal(
      await h.engine.getInstance({ organization: 'other' }, inst.processInstanceId),
      null,
      'invisible to another organization',
    );
  }
  const raw = await (await import('../../../src/daemon/store/history.js')).History.open(`${h.dir}/history`);
  t.ok(
    'records' in ((await raw.get(new Date(h.clock.ms).toISOString().slice(0, 10), one.processInstanceId)) as object),
    'a one-step execution is kept as its journaled records',
  );
  await raw.close();
});

t.test('listing executions: live and archived together, newest first, pages that skip nothing', async (t) => {
  const h = await engineHarness(t);
  const pid = await h.publish(`
processId: AUTO
name: Mixed
nodes:
  start: { type: startEvent, next: gate }
  gate: { type: ifElse, condition: "\${wait}", then: ask, else: done }
  ask: { type: inputNode, inputType: textbox, next: done }
  done: { type: endEvent }
`);
  // Two long-running ones early in the day, then one that finishes (archived) later the same day.
  const early1 = await h.engine.start({ processId: pid, organization: 'default', data: { wait: true } });
  h.advance(3_600_000);
  const early2 = await h.engine.start({ processId: pid, organization: 'default', data: { wait: true } });
  h.advance(8 * 3_600_000);
  const late = await h.engine.start({ processId: pid, organization: 'default', data: { wait: false } });
  await h.archived(late.processInstanceId);
  const seen: string[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < 5; page++) {
    const res = await h.engine.listInstances({ organization: 'default' }, pid, { limit: 1, ...(cursor && { cursor }) });
    seen.push(...res.items.map((i) => i.processInstanceId));
    if (!res.nextCursor) break;
    cursor = res.nextCursor;
  }
  t.same(
    seen,
    [late.processInstanceId, early2.processInstanceId, early1.processInstanceId],
    'one per page, newest first, the archived one included',
  );
  const completed = await h.engine.listInstances({ organization: 'default' }, pid, { limit: 10, stateCd: 1 });
  t.same(
    completed.items.map((i) => i.processInstanceId),
    [late.processInstanceId],
  );
});
