import t from 'tap';
import { STATE } from '../../../src/daemon/state/state.js';
import { engineHarness, type EngineHarness } from '../../helpers/engine.js';
import { liveInstances } from '../../helpers/state.js';
import { eventually } from '../../helpers/eventually.js';
import { pausedForkFlow } from '../../../bench/attack-flows.js';

// Issue #81 where it needs the engine: a tree's tally kept across a restart, and a bulk cancel
// run by the engine while the tree's timers fire. What a step decides of the tree-created budget,
// the org-starts-per-second pace and a tree being cancelled is in step/tree-containment.test.ts.

const running = (h: EngineHarness) => liveInstances(h.store.state).filter((i) => i.stateCd === STATE.RUNNING);

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
