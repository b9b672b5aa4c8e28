import t from 'tap';
import { STATE, STATUS, type Execution } from '../../../src/daemon/state/state.js';
import type { ExecutionArchive } from '../../../src/daemon/engine/archive.js';
import { bucketOf } from '../../../src/daemon/state/ids.js';
import { WfxError } from '../../../src/shared/errors.js';
import { ended, engineHarness, trail, type EngineHarness } from '../../helpers/engine.js';

const ORG = { organization: 'default' } as const;

/** Fails at `check` unless `ok` is set; before it, `prep` sets a variable. */
const CHECKED = `
processId: AUTO
name: Checked
nodes:
  start: { type: startEvent, next: prep }
  prep: { type: setVariable, variables: { prepared: "yes" }, next: check }
  check: { type: scriptTask, script: "if (!vars.ok) throw new Error('not ok'); return { checked: vars.ok }", next: done }
  done: { type: endEvent }
`;

async function codeOf(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (err) {
    if (err instanceof WfxError) return err.code;
    throw err;
  }
  return 'no error';
}

const END = /^PROCESS_(COMPLETED|FAILED|CANCELLED)$/;

/** Runs `retry` and waits until the execution ends again (its earlier ends do not count). */
async function retried(h: EngineHarness, id: string, retry: () => Promise<unknown>): Promise<Execution> {
  const before = countEnds(h, id);
  await retry();
  // The harness records each event before this listener sees it.
  await h.waitFor((e) => e.processInstanceId === id && END.test(e.type) && countEnds(h, id) > before);
  return h.get(id);
}

const countEnds = (h: EngineHarness, id: string): number =>
  h.events.filter((e) => e.processInstanceId === id && END.test(e.type)).length;

async function failedRun(h: EngineHarness, pid: string, data: Record<string, unknown>): Promise<Execution> {
  const first = await h.start(pid, data);
  const inst = await ended(h, first.processInstanceId);
  if (inst.stateCd !== STATE.FAILED) throw new Error(`expected a failure, got ${inst.stateCd}`);
  return inst;
}

t.test('a failed execution retried with a variable set goes on where it failed, same id', async (t) => {
  const h = await engineHarness(t);
  const pid = await h.publish(CHECKED);
  const failed = await failedRun(h, pid, { ok: false });
  const id = failed.processInstanceId;
  t.equal(failed.error?.code, 'SCRIPT_ERROR');
  t.equal(failed.error?.nodeId, 'check');
  const again = await retried(h, id, () => h.engine.retry({ ...ORG, processInstanceId: id, by: 'key:k1' }));
  t.equal(again.stateCd, STATE.FAILED, 'without the fix it fails again, at the same node');
  t.equal(again.retries?.length, 1);

  await h.archived(id);
  const done = await retried(h, id, () =>
    h.engine.retry({ ...ORG, processInstanceId: id, data: { ok: 'fixed' }, by: 'key:k2' }),
  );
  t.equal(done.stateCd, STATE.COMPLETED, 'retried from history with the fix, it completes');
  t.equal(done.processInstanceId, id);
  t.equal(done.variables.checked, 'fixed');
  t.equal(done.variables.prepared, 'yes', 'what ran before the failure is kept');
  t.same(trail(done), ['start:2', 'prep:2', 'check:3', 'check:3', 'check:2', 'done:2'], 'each attempt a node instance');
  t.same(
    done.retries?.map((r) => [r.by, r.error.code, r.set]),
    [
      ['key:k1', 'SCRIPT_ERROR', undefined],
      ['key:k2', 'SCRIPT_ERROR', ['ok']],
    ],
  );
  t.equal(done.error, null);
  const messages = h.logs.filter((l) => l.processInstanceId === id).map((l) => l.entry.message);
  t.ok(
    messages.some((m) => /^execution retried by key:k2 with ok set \(attempt 3/.test(m)),
    'the log says who retried',
  );
  t.ok(h.events.some((e) => e.type === 'PROCESS_RETRIED' && e.processInstanceId === id));

  t.equal(await codeOf(h.engine.retry({ ...ORG, processInstanceId: id, by: 'key:k1' })), 'INSTANCE_NOT_FAILED');
  t.equal(
    await codeOf(h.engine.retry({ organization: 'other', processInstanceId: id, by: 'key:k1' })),
    'INSTANCE_NOT_FOUND',
    'another organization sees nothing',
  );
});

t.test('a retried execution survives a restart mid-wait; a cancelled one is not retried', async (t) => {
  const h = await engineHarness(t);
  const pid = await h.publish(`
processId: AUTO
name: Wait then check
nodes:
  start: { type: startEvent, next: check }
  check: { type: scriptTask, script: "if (!vars.ok) throw new Error('no'); return {}", next: ask }
  ask: { type: userTask, next: done }
  done: { type: endEvent }
`);
  const failed = await failedRun(h, pid, {});
  const id = failed.processInstanceId;
  await h.archived(id);
  const failedList = () => h.engine.listExecutions({ ...ORG, stateCd: STATE.FAILED, limit: 10 });
  t.same(
    (await failedList()).items.map((i) => i.processInstanceId),
    [id],
  );
  await h.engine.retry({ ...ORG, processInstanceId: id, data: { ok: true }, by: 'key:k' });
  await h.waitFor((e) => e.processInstanceId === id && e.type === 'NODE_WAITING');
  t.same((await failedList()).items, [], "history's failed copy is not listed while it runs again");
  const h2 = await h.restart();
  const live = await h2.get(id);
  t.equal(live.stateCd, STATE.RUNNING, 'the revived execution is in the journal');
  t.same(trail(live), ['start:2', 'check:3', 'check:2', 'ask:1']);
  await h2.engine.cancel({ ...ORG, processInstanceId: id });
  t.equal(await codeOf(h2.engine.retry({ ...ORG, processInstanceId: id, by: 'key:k' })), 'INSTANCE_NOT_FAILED');
});

t.test(
  'a parallel branch that failed comes back with the branches the failure cancelled and the join it held',
  async (t) => {
    const h = await engineHarness(t);
    const pid = await h.publish(`
processId: AUTO
name: Branches
nodes:
  start: { type: startEvent, next: fork }
  fork: { type: parallelGateway, next: [a, b, c] }
  a: { type: setVariable, variables: { a: 1 }, next: join }
  b: { type: userTask, next: join }
  c: { type: scriptTask, script: "if (!vars.ok) throw new Error('no'); return { c: 1 }", next: join }
  join: { type: parallelGateway, next: done }
  done: { type: endEvent }
`);
    const failed = await failedRun(h, pid, {});
    const id = failed.processInstanceId;
    t.equal(
      failed.nodes[Object.keys(failed.nodes).find((k) => failed.nodes[k]!.nodeId === 'b')!]!.statusCd,
      STATUS.CANCELLED,
    );
    await h.engine.retry({ ...ORG, processInstanceId: id, data: { ok: true }, by: 'key:k' });
    await h.waitFor((e) => e.processInstanceId === id && e.type === 'NODE_WAITING');
    const done = await retried(h, id, () =>
      h.engine.submitTask({ ...ORG, processInstanceId: id, nodeId: 'b', action: 'COMPLETE', data: {} }),
    );
    t.equal(done.stateCd, STATE.COMPLETED, "a's arrival at the join was kept: the join fires");
    t.equal(trail(done).filter((n) => n === 'done:2').length, 1);
    t.equal(trail(done).filter((n) => n.startsWith('a:')).length, 1, 'the branch that had finished is not run again');
  },
);

t.test('a failed subProcess child is retried in place, through its parent', async (t) => {
  const h = await engineHarness(t);
  const pid = await h.publish(`
processId: AUTO
name: Parent
nodes:
  start: { type: startEvent, next: sub }
  sub:
    type: subProcess
    nodes:
      s: { type: startEvent, next: work }
      work: { type: scriptTask, script: "if (!vars.ok) throw new Error('no'); return { worked: true }", next: e }
      e: { type: endEvent }
    next: done
  done: { type: endEvent }
`);
  const failed = await failedRun(h, pid, {});
  const id = failed.processInstanceId;
  const sub = Object.values(failed.nodes).find((n) => n.nodeId === 'sub')!;
  const childId = sub.children![0]!;
  const child = await h.get(childId);
  t.equal(child.stateCd, STATE.FAILED);
  t.equal(await codeOf(h.engine.retry({ ...ORG, processInstanceId: childId, by: 'key:k' })), 'INSTANCE_IS_CHILD');
  await h.archived(id);
  await h.archived(childId);
  const done = await retried(h, id, () =>
    h.engine.retry({ ...ORG, processInstanceId: id, data: { ok: true }, by: 'key:k' }),
  );
  t.equal(done.stateCd, STATE.COMPLETED);
  t.same(trail(done), ['start:2', 'sub:2', 'done:2'], 'the parent node waited again, no second child');
  const again = await h.get(childId);
  t.equal(again.stateCd, STATE.COMPLETED, 'the same child completed');
  t.same(trail(again), ['s:2', 'work:3', 'work:2', 'e:2']);
  t.equal(done.variables.worked, true);
});

t.test('replay from a middle node starts a new execution with the variables of that moment', async (t) => {
  const h = await engineHarness(t);
  const pid = await h.publish(`
processId: AUTO
name: Steps
nodes:
  start: { type: startEvent, next: one }
  one: { type: setVariable, variables: { step: 1, first: "{x}" }, next: two }
  two: { type: setVariable, variables: { step: 2 }, next: three }
  three: { type: setVariable, variables: { step: 3, seen: "{step}" }, next: done }
  done: { type: endEvent }
`);
  const original = await h.start(pid, { x: 'in' });
  t.equal(original.stateCd, STATE.COMPLETED);
  t.equal(original.variables.seen, 2);
  await h.archived(original.processInstanceId);
  const replay = await h.engine.replay({
    ...ORG,
    processInstanceId: original.processInstanceId,
    nodeId: 'two',
    data: { extra: true },
    by: 'key:k',
  });
  t.not(replay.processInstanceId, original.processInstanceId);
  const done = await ended(h, replay.processInstanceId);
  t.same(done.replayOf, { processInstanceId: original.processInstanceId, nodeId: 'two', by: 'key:k' });
  t.same(trail(done), ['two:2', 'three:2', 'done:2'], 'it starts at the node');
  t.same(done.variables, { x: 'in', step: 3, first: 'in', seen: 2, extra: true });
  const fromStart = await h.engine.replay({
    ...ORG,
    processInstanceId: original.processInstanceId,
    nodeId: 'start',
    by: 'k',
  });
  t.same((await ended(h, fromStart.processInstanceId)).variables, original.variables, 'a rerun from the start');
  const codes = await Promise.all([
    codeOf(h.engine.replay({ ...ORG, processInstanceId: original.processInstanceId, nodeId: 'nope', by: 'k' })),
    codeOf(h.engine.replay({ ...ORG, processInstanceId: 'missing', nodeId: 'two', by: 'k' })),
  ]);
  t.same(codes, ['NODE_NOT_FOUND', 'INSTANCE_NOT_FOUND']);
});

t.test('replay refuses a node the execution never reached', async (t) => {
  const h = await engineHarness(t);
  const pid = await h.publish(CHECKED);
  const failed = await failedRun(h, pid, {});
  t.equal(
    await codeOf(h.engine.replay({ ...ORG, processInstanceId: failed.processInstanceId, nodeId: 'done', by: 'k' })),
    'NODE_NOT_REACHED',
  );
  const replay = await h.engine.replay({
    ...ORG,
    processInstanceId: failed.processInstanceId,
    nodeId: 'check',
    data: { ok: 1 },
    by: 'k',
  });
  t.equal((await ended(h, replay.processInstanceId)).stateCd, STATE.COMPLETED);
});

t.test('an execution held for a read before a step stays live until released, then is archived', async (t) => {
  const h = await engineHarness(t);
  const pid = await h.publish(`
processId: AUTO
name: Ask
nodes:
  start: { type: startEvent, next: ask }
  ask: { type: userTask, next: done }
  done: { type: endEvent }
`);
  const id = (await h.start(pid)).processInstanceId;
  const archive = (h.engine as unknown as { parts: { archive: ExecutionArchive } }).parts.archive;
  const release = archive.hold([id]);
  await h.engine.cancel({ ...ORG, processInstanceId: id });
  await archive.idle();
  t.equal(h.store.state.instances[id]?.stateCd, STATE.CANCELLED, 'finished, and kept live while held');
  release();
  await h.archived(id);
  t.equal(h.store.state.instances[id], undefined, 'archived once released');
  t.equal((await h.get(id)).stateCd, STATE.CANCELLED);
});

t.test('a subProcess whose failed child is not retried with it runs again whole', async (t) => {
  const h = await engineHarness(t);
  const pid = await h.publish(`
processId: AUTO
name: Parent
nodes:
  start: { type: startEvent, next: sub }
  sub:
    type: subProcess
    nodes:
      s: { type: startEvent, next: work }
      work: { type: scriptTask, script: "if (!vars.ok) throw new Error('no'); return { worked: true }", next: e }
      e: { type: endEvent }
    next: done
  done: { type: endEvent }
`);
  const failed = await failedRun(h, pid, {});
  const id = failed.processInstanceId;
  const childId = Object.values(failed.nodes).find((n) => n.nodeId === 'sub')!.children![0]!;
  await h.archived(id);
  await h.archived(childId);
  // History no longer holds it as failed (as if changed since): the parent's node starts a new child.
  const child = await h.get(childId);
  await h.history.put(bucketOf(childId)!, childId, { instance: { ...child, stateCd: STATE.CANCELLED } });
  const done = await retried(h, id, () =>
    h.engine.retry({ ...ORG, processInstanceId: id, data: { ok: true }, by: 'k' }),
  );
  t.equal(done.stateCd, STATE.COMPLETED);
  const subs = Object.values(done.nodes).filter((n) => n.nodeId === 'sub');
  t.same(
    subs.map((n) => n.statusCd),
    [STATUS.FAILED, STATUS.COMPLETED],
    'the node ran again, as a new node instance',
  );
  t.not(subs[1]!.children![0], childId, 'with a new child');
});
