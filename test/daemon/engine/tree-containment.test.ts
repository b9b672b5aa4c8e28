import t from 'tap';
import { STATE, STATUS, type Execution } from '../../../src/daemon/state/state.js';
import { isWfxError } from '../../../src/shared/errors.js';
import { engineHarness, type EngineHarness } from '../../helpers/engine.js';
import { liveInstances } from '../../helpers/state.js';
import { eventually } from '../../helpers/eventually.js';
import { bulkOf, MemoryStep, typesOf } from '../../helpers/step.js';
import { forkFlow, forkUntilFlow, pausedForkFlow } from '../../../bench/attack-flows.js';

// Issue #81: a tree of executions is held to a budget of what it ever starts (tree-created), an
// organization to a pace of starts (org-starts-per-second), and a tree being cancelled starts
// nothing more.

const running = (h: EngineHarness) => liveInstances(h.store.state).filter((i) => i.stateCd === STATE.RUNNING);

/** Every execution the engine started, by the lifecycle events it published. */
function countStarts(h: EngineHarness): { readonly n: number } {
  const seen = { n: 0 };
  h.engine.on('lifecycle', (e) => {
    if (e.type === 'PROCESS_STARTED') seen.n++;
  });
  return seen;
}

/** The codes the failed executions of the events so far failed with (a sample of 50). */
async function failureCodes(h: EngineHarness): Promise<Set<string>> {
  const failed = h.events.filter((e) => e.type === 'PROCESS_FAILED').map((e) => e.processInstanceId);
  const got = await Promise.all(failed.slice(0, 50).map((id) => h.get(id)));
  return new Set(got.map((i: Execution) => i.error?.code ?? '?'));
}

t.test('tree-created: the fork of issue #81 makes no more than the budget, then its tree ends', async (t) => {
  const h = await engineHarness(t, undefined, undefined, { limits: { treeCreated: 40 } });
  const pid = crypto.randomUUID();
  await h.publish(forkFlow(pid));
  const starts = countStarts(h);
  const root = await h.start(pid);
  await eventually('the tree has ended', () => running(h).length === 0);
  t.equal(starts.n, 1 + 40, 'the root and exactly the budget under it');
  t.same([...(await failureCodes(h))], ['TREE_BUDGET_EXCEEDED'], 'what would pass it failed with its code');
  t.same(h.store.state.treeCreated, {}, "the tree's tally is forgotten once nothing of it runs");
  const failed = await h.get(h.events.find((e) => e.type === 'PROCESS_FAILED')!.processInstanceId);
  t.match(failed.error?.message, /tree-created limit/, 'the message names the limit');
  t.equal(failed.root, root.processInstanceId, 'and the failure is in the root’s tree');
});

t.test('tree-created: a recursion that stops in time runs whole; one deeper fails at the budget', async (t) => {
  const h = await engineHarness(t, undefined, undefined, { limits: { treeCreated: 14 } });
  const pid = crypto.randomUUID();
  await h.publish(forkUntilFlow(pid));
  const starts = countStarts(h);
  await h.start(pid, { depth: 0, until: 3 });
  await eventually('the tree has ended', () => running(h).length === 0);
  t.equal(starts.n, 1 + 2 + 4 + 8, 'three levels: fourteen under the root');
  t.notOk(
    h.events.some((e) => e.type === 'PROCESS_FAILED'),
    'none failed',
  );

  const deeper = crypto.randomUUID();
  await h.publish(forkUntilFlow(deeper));
  const before = starts.n;
  await h.start(deeper, { depth: 0, until: 4 });
  await eventually('the tree has ended', () => running(h).length === 0);
  t.equal(starts.n - before, 1 + 14, 'a fourth level would be thirty: the budget of fourteen is all it gets');
  t.same([...(await failureCodes(h))], ['TREE_BUDGET_EXCEEDED']);
});

t.test('tree-created: the tally of a tree that still runs is kept across a restart', async (t) => {
  const h = await engineHarness(t, undefined, undefined, { limits: { treeCreated: 2 } });
  const done = await h.publish(`processId: AUTO
name: Done
nodes:
  start: { type: startEvent, next: end }
  end: { type: endEvent }
`);
  const pid = await h.publish(`processId: AUTO
name: Calls, waits, calls
nodes:
  start: { type: startEvent, next: first }
  first: { type: callProcess, processId: ${done}, next: second }
  second: { type: callProcess, processId: ${done}, next: ask }
  ask: { type: inputNode, inputType: textbox, next: third }
  third: { type: callProcess, processId: ${done}, next: end }
  end: { type: endEvent }
`);
  const root = await h.start(pid);
  await eventually('what it called ended', () => running(h).length === 1);
  t.same(h.store.state.treeCreated, { [root.processInstanceId]: 2 }, 'the root runs alone, its tally kept');
  const r = await h.restart();
  t.same(r.store.state.treeCreated, { [root.processInstanceId]: 2 }, 'restored by the restart');
  await r.engine.submitTask({
    organization: 'default',
    processInstanceId: root.processInstanceId,
    nodeId: 'ask',
    action: 'COMPLETE',
    data: { inputValue: 'go' },
  });
  const after = await r.get(root.processInstanceId);
  t.equal(after.error?.code, 'TREE_BUDGET_EXCEEDED', 'the third call is past the budget of two');
  t.equal(after.error?.nodeId, 'third');
  t.same(r.store.state.treeCreated, {}, 'and the ended tree is forgotten');
});

t.test(
  'org-starts-per-second: starts past the pace are refused, or fail their node; each organization its own',
  async (t) => {
    const h = await engineHarness(t, undefined, undefined, { limits: { organizationStartsPerSecond: 3 } });
    const plain = await h.publish(`processId: AUTO
name: Plain
nodes:
  start: { type: startEvent, next: end }
  end: { type: endEvent }
`);
    const caller = await h.publish(`processId: AUTO
name: Caller
nodes:
  start: { type: startEvent, next: call }
  call: { type: callProcess, processId: ${plain}, next: end }
  end: { type: endEvent }
`);
    for (let i = 0; i < 3; i++) t.equal((await h.start(plain)).stateCd, STATE.COMPLETED, `start ${i + 1} of 3`);
    const refused = await h.start(plain).catch((e: unknown) => e);
    t.ok(isWfxError(refused) && refused.code === 'ORG_RATE_EXCEEDED', 'the fourth in the same second is refused');
    t.match(isWfxError(refused) && refused.details, { retryAfter: 1 }, 'with when to retry');
    const elsewhere = await h.publish(
      `processId: AUTO
name: Elsewhere
nodes:
  start: { type: startEvent, next: end }
  end: { type: endEvent }
`,
      { organization: 'other' },
    );
    t.equal(
      (await h.start(elsewhere, {}, { organization: 'other' })).stateCd,
      STATE.COMPLETED,
      'another organization starts',
    );

    h.clock.advance(400);
    // One start's room came back: the caller takes it, and its call finds none.
    const called = await h.start(caller);
    t.equal(called.stateCd, STATE.FAILED);
    t.equal(called.error?.code, 'ORG_RATE_EXCEEDED', 'a callProcess past the pace fails its node');
    t.match(called.error?.message, /org-starts-per-second/);
    h.clock.advance(1000);
    t.equal((await h.start(caller)).stateCd, STATE.COMPLETED, 'a second later both go');
  },
);

t.test('a bulk cancel of a tree ends it, even after its root ended, and the tree starts nothing after', async (t) => {
  const h = await engineHarness(t, undefined, undefined, { limits: { treeCreated: 100_000 }, bulkRate: 100_000 });
  const pid = crypto.randomUUID();
  // The fork, each execution waiting a second first: the tree grows one level per timer.
  await h.publish(pausedForkFlow('1s', pid));
  const root = await h.start(pid);
  for (let level = 0; level < 4; level++) {
    await h.advance(1000);
    const n = 2 ** (level + 1);
    await eventually(`level ${level + 1} waits`, () => running(h).length === n && h.engine.timerCount === n);
  }
  t.equal((await h.get(root.processInstanceId)).stateCd, STATE.COMPLETED, 'the root ended long ago');
  const page = await h.engine.listExecutions({ organization: 'default', rootId: root.processInstanceId, limit: 200 });
  t.equal(page.items.length, 1 + 2 + 4 + 8 + 16, 'the tree lists its root and everything under it');
  const bulk = await h.engine.bulk.create({
    organization: 'default',
    operation: 'cancel',
    params: null,
    query: { rootId: root.processInstanceId },
    by: 'key:k1',
  });
  await h.advance(1000); // every waiting one's timer is due: those not cancelled yet would fork
  await eventually('the bulk completed', () => h.engine.bulk.get('default', bulk.bulkId).state === 'COMPLETED');
  await eventually('nothing of the tree runs', () => running(h).length === 0);
  const after = await h.engine.listExecutions({ organization: 'default', rootId: root.processInstanceId, limit: 200 });
  t.equal(after.items.length, page.items.length, 'nothing was started under the root since');
  const waited = page.items.filter((i) => i.stateCd === STATE.RUNNING).map((i) => i.processInstanceId);
  t.equal(waited.length, 16, 'the last level waited when the bulk was created');
  const states = new Map(after.items.map((i) => [i.processInstanceId, i.stateCd]));
  t.ok(
    waited.every((id) => states.get(id) === STATE.CANCELLED),
    'each is cancelled: by the bulk, or where it would have started more',
  );
});

t.test('step: an execution whose tree is being cancelled is cancelled where it would start another', async (t) => {
  const m = new MemoryStep();
  const target = await m.publish(`processId: AUTO
name: Target
nodes:
  start: { type: startEvent, next: end }
  end: { type: endEvent }
`);
  const pid = await m.publish(`processId: AUTO
name: Asks then calls
nodes:
  start: { type: startEvent, next: ask }
  ask: { type: inputNode, inputType: textbox, next: call }
  call: { type: callProcess, processId: ${target}, next: end }
  end: { type: endEvent }
`);
  const id = m.start(pid).answer.processInstanceId;
  bulkOf(m, [], { bulkId: 'b1', query: { rootId: id } });
  const { records } = m.run({
    kind: 'answer',
    instanceId: id,
    nodeId: 'ask',
    action: 'COMPLETE',
    data: { inputValue: 'go' },
  });
  t.notOk(typesOf(records).includes('instance.started'), 'nothing started');
  t.equal(m.instance(id).stateCd, STATE.CANCELLED, 'the execution is cancelled');
  t.equal(m.node(id, 'call').statusCd, STATUS.CANCELLED, 'at the node that would have started one');
  t.match(JSON.stringify(m.instance(id).logs), /cancelled by bulk operation b1/, 'its log says why');
});
