import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { STATE, type Execution } from '../../../src/daemon/state/state.js';
import { LiveCounts } from '../../../src/daemon/state/live-counts.js';
import { variablesSize, logSize, liveNodes } from '../../../src/daemon/state/sizes.js';
import { isWfxError } from '../../../src/shared/errors.js';
import { engineHarness, type EngineHarness } from '../../helpers/engine.js';
import { liveInstances } from '../../helpers/state.js';
import { eventually } from '../../helpers/eventually.js';

/** The execution's error code (it failed), or what it is instead. */
const failedWith = (inst: Execution): string =>
  inst.stateCd === STATE.FAILED ? (inst.error?.code ?? 'no error') : `state ${inst.stateCd}`;

const running = (h: EngineHarness) => liveInstances(h.store.state).filter((i) => i.stateCd === STATE.RUNNING);

t.test('variables-size: a node that would pass it fails with VARIABLES_TOO_LARGE, through errorFlow', async (t) => {
  const h = await engineHarness(t, undefined, undefined, { limits: { variablesBytes: 4096 } });
  const pid = await h.publish(`
processId: AUTO
name: Grows
nodes:
  start: { type: startEvent, next: grow }
  grow: { type: scriptTask, script: "return { big: 'x'.repeat(vars.n) }", next: done, errorFlow: caught }
  caught: { type: setVariable, variables: { caughtCode: "{error.code}" }, next: done }
  done: { type: endEvent }
`);
  const small = await h.get((await h.start(pid, { n: 100 })).processInstanceId);
  await h.waitFor((e) => e.type === 'PROCESS_COMPLETED' && e.processInstanceId === small.processInstanceId);
  const okRun = await h.get(small.processInstanceId);
  t.equal((okRun.variables.big as string).length, 100, 'under the limit: set');
  t.equal(variablesSize(okRun), JSON.stringify(okRun.variables).length, 'the size kept is the JSON size');
  const logJson = JSON.stringify(okRun.logs).length;
  t.ok(Math.abs(logSize(okRun) - logJson) < logJson * 0.05, `the log's too (${logSize(okRun)} of ${logJson})`);

  const big = await h.start(pid, { n: 5000 });
  await h.waitFor((e) => e.type === 'PROCESS_COMPLETED' && e.processInstanceId === big.processInstanceId);
  const caught = await h.get(big.processInstanceId);
  t.equal(caught.variables.caughtCode, 'VARIABLES_TOO_LARGE', 'the errorFlow took the failure by its code');
  t.notOk('big' in caught.variables, 'nothing of it was set');

  const err = await h.start(pid, { n: 1, pad: 'y'.repeat(5000) }).catch((e: unknown) => e);
  t.ok(isWfxError(err) && err.code === 'PAYLOAD_TOO_LARGE', 'start data over the limit is refused before it starts');
});

t.test('children: a parallel loop wider than the limit fails with CHILD_LIMIT_EXCEEDED, none started', async (t) => {
  const h = await engineHarness(t, undefined, undefined, { limits: { children: 3 } });
  const loop = (concurrency: number) => `
processId: AUTO
name: Wide loop ${concurrency}
nodes:
  start: { type: startEvent, next: each }
  each:
    type: loopNode
    collection: "{items}"
    parallel: true
    concurrency: ${concurrency}
    nodes:
      s: { type: startEvent, next: ask }
      ask: { type: inputNode, inputType: textbox, next: e }
      e: { type: endEvent }
    next: done
  done: { type: endEvent }
`;
  const wide = await h.start(await h.publish(loop(5)), { items: [1, 2, 3, 4, 5] });
  t.equal(failedWith(wide), 'CHILD_LIMIT_EXCEEDED');
  t.equal(running(h).length, 0, 'no child started');
  const fits = await h.start(await h.publish(loop(3)), { items: [1, 2, 3, 4, 5] });
  t.equal(fits.stateCd, STATE.RUNNING, 'three at once fit');
  t.equal(LiveCounts.of(h.store.state).childrenOf(fits.processInstanceId), 3);
});

t.test('branches: more active or waiting nodes than the limit fail the execution', async (t) => {
  const h = await engineHarness(t, undefined, undefined, { limits: { branches: 3 } });
  const pid = await h.publish(`
processId: AUTO
name: Fork
nodes:
  start: { type: startEvent, next: fork }
  fork: { type: parallelGateway, next: [a, b, c, d] }
  a: { type: inputNode, inputType: textbox, next: done }
  b: { type: inputNode, inputType: textbox, next: done }
  c: { type: inputNode, inputType: textbox, next: done }
  d: { type: inputNode, inputType: textbox, next: done }
  done: { type: endEvent }
`);
  const inst = await h.start(pid);
  t.equal(failedWith(inst), 'BRANCH_LIMIT_EXCEEDED');
  t.equal(liveNodes(inst), 0, 'every branch ended with it');
});

t.test('tree-executions: a flow that calls itself twice over stops at the limit, and the daemon goes on', async (t) => {
  const h = await engineHarness(t, undefined, undefined, { limits: { treeExecutions: 20 } });
  const pid = crypto.randomUUID();
  await h.publish(`
processId: ${pid}
name: Fork bomb
nodes:
  start: { type: startEvent, next: fork }
  fork: { type: parallelGateway, next: [left, right] }
  left: { type: callProcess, processId: ${pid}, next: end1 }
  right: { type: callProcess, processId: ${pid}, next: end2 }
  end1: { type: endEvent }
  end2: { type: endEvent }
`);
  let started = 0;
  h.engine.on('lifecycle', (e) => {
    if (e.type === 'PROCESS_STARTED') started++;
  });
  await h.start(pid);
  // Everything it started ends (each level holds at most the limit, and depth is capped at 32).
  await eventually('the tree has ended', () => running(h).length === 0);
  t.ok(started <= 32 * 20 * 2, `bounded: ${started} executions started`);
  const failed = h.events.filter((e) => e.type === 'PROCESS_FAILED').map((e) => e.processInstanceId);
  t.ok(failed.length > 0, 'executions past the limit failed');
  const codes = new Set((await Promise.all(failed.slice(0, 20).map((id) => h.get(id)))).map(failedWith));
  t.same([...codes], ['TREE_LIMIT_EXCEEDED'], 'with TREE_LIMIT_EXCEEDED');
  const other = await h.publish(`
processId: AUTO
name: Plain
nodes:
  start: { type: startEvent, next: done }
  done: { type: endEvent }
`);
  t.equal((await h.start(other)).stateCd, STATE.COMPLETED, 'another execution runs as ever');
});

t.test('loop-iterations: the daemon caps a loop whatever its maxIterations', async (t) => {
  const h = await engineHarness(t, undefined, undefined, { limits: { loopIterations: 5 } });
  const pid = await h.publish(`
processId: AUTO
name: Forever
nodes:
  start: { type: startEvent, next: each }
  each:
    type: loopNode
    condition: \${true}
    maxIterations: 100000
    nodes:
      s: { type: startEvent, next: e }
      e: { type: endEvent }
    next: done
  done: { type: endEvent }
`);
  const inst = await h.start(pid);
  t.equal(failedWith(inst), 'LOOP_LIMIT');
  t.match(inst.error?.message, /loop-iterations limit is 5/);
  const items = await h.publish(`
processId: AUTO
name: Items
nodes:
  start: { type: startEvent, next: each }
  each:
    type: loopNode
    collection: "{items}"
    nodes:
      s: { type: startEvent, next: e }
      e: { type: endEvent }
    next: done
  done: { type: endEvent }
`);
  t.equal(failedWith(await h.start(items, { items: [1, 2, 3, 4, 5, 6] })), 'LOOP_LIMIT', 'a collection too');
  t.equal((await h.start(items, { items: [1, 2, 3, 4, 5] })).stateCd, STATE.COMPLETED, 'at the limit: runs');
});

t.test('live-executions: a start past the limit is refused; callProcess fails; room comes back', async (t) => {
  const h = await engineHarness(t, undefined, undefined, { limits: { organizationExecutions: 2 } });
  const wait = await h.publish(`
processId: AUTO
name: Wait
nodes:
  start: { type: startEvent, next: ask }
  ask: { type: inputNode, inputType: textbox, next: done }
  done: { type: endEvent }
`);
  const caller = await h.publish(`
processId: AUTO
name: Caller
nodes:
  start: { type: startEvent, next: ask }
  ask: { type: inputNode, inputType: textbox, next: call }
  call: { type: callProcess, processId: ${wait}, next: done }
  done: { type: endEvent }
`);
  const first = await h.start(wait);
  const second = await h.start(caller);
  const refused = await h.start(wait).catch((e: unknown) => e);
  t.ok(isWfxError(refused) && refused.code === 'EXECUTION_LIMIT_EXCEEDED', 'the third start is refused');
  await h.engine.submitTask({
    organization: 'default',
    processInstanceId: second.processInstanceId,
    nodeId: 'ask',
    action: 'COMPLETE',
    data: { inputValue: 'go' },
  });
  t.equal(failedWith(await h.get(second.processInstanceId)), 'EXECUTION_LIMIT_EXCEEDED', 'callProcess: the node fails');
  await h.engine.cancel({ organization: 'default', processInstanceId: first.processInstanceId });
  t.equal((await h.start(wait)).stateCd, STATE.RUNNING, 'a start fits again once one ended');
  const otherOrg = await h.publish(
    `
processId: AUTO
name: Elsewhere
nodes:
  start: { type: startEvent, next: ask }
  ask: { type: inputNode, inputType: textbox, next: done }
  done: { type: endEvent }
`,
    { organization: 'other' },
  );
  t.equal((await h.start(otherOrg, {}, { organization: 'other' })).stateCd, STATE.RUNNING, 'each organization its own');
});

t.test('log-size: an execution whose log passes it fails with LOG_LIMIT_EXCEEDED', async (t) => {
  const h = await engineHarness(t, undefined, undefined, { limits: { logBytes: 8192 } });
  const pid = await h.publish(`
processId: AUTO
name: Chatty
nodes:
  start: { type: startEvent, next: count }
  count: { type: setVariable, variables: { i: 1 }, next: again }
  again: { type: ifElse, condition: "\${true}", then: count, else: done }
  done: { type: endEvent }
`);
  const inst = await h.start(pid);
  t.equal(failedWith(inst), 'LOG_LIMIT_EXCEEDED');
  t.ok(inst.nodeCount < 1000, `stopped early: ${inst.nodeCount} nodes, not the step limit`);
  t.ok(logSize(inst) < 8192 * 2, 'the log stayed near its limit');
});

t.test('a log line stops copying the variables once the log is large; the size kept is the JSON size', async (t) => {
  const h = await engineHarness(t);
  const pid = await h.publish(`
processId: AUTO
name: Big variables
nodes:
  start: { type: startEvent, next: set }
  set: { type: setVariable, variables: { n: "{n}" }, next: ask }
  ask: { type: inputNode, inputType: textbox, next: done }
  done: { type: endEvent }
`);
  const inst = await h.start(pid, { blob: 'z'.repeat(3 * 1024 * 1024), n: 1 });
  const withVars = inst.logs.filter((l) => Array.isArray(l) && l.length === 5);
  t.equal(withVars.length, 1, 'the start line copies them; the set line, past 4 MiB, does not');
  t.ok(Math.abs(logSize(inst) - JSON.stringify(inst.logs).length) < 64, 'log size kept as its JSON size');
});

t.test('STEP_TOO_LARGE: the iterations one node starts may not carry more than a step writes', async (t) => {
  const h = await engineHarness(t);
  const pid = await h.publish(`
processId: AUTO
name: Heavy iterations
nodes:
  start: { type: startEvent, next: each }
  each:
    type: loopNode
    collection: "{items}"
    parallel: true
    concurrency: 100
    nodes:
      s: { type: startEvent, next: ask }
      ask: { type: inputNode, inputType: textbox, next: e }
      e: { type: endEvent }
    next: done
  done: { type: endEvent }
`);
  // Each iteration gets a copy of the variables: 100 copies of 1 MiB is more than 64 MiB.
  const inst = await h.start(pid, { items: Array.from({ length: 100 }, (_, i) => i), pad: 'p'.repeat(1024 * 1024) });
  t.equal(failedWith(inst), 'STEP_TOO_LARGE');
  t.equal(running(h).length, 0, 'no iteration started');
});

t.test('recovery: an execution over limits lowered since the last start is failed, the others go on', async (t) => {
  let h = await engineHarness(t);
  const pid = await h.publish(`
processId: AUTO
name: Holds a lot
nodes:
  start: { type: startEvent, next: ask }
  ask: { type: inputNode, inputType: textbox, next: done }
  done: { type: endEvent }
`);
  const heavy = await h.start(pid, { blob: 'b'.repeat(64 * 1024) });
  const light = await h.start(pid, { n: 1 });
  await h.close();
  h = await engineHarness(t, h.dir, h.clock, { limits: { variablesBytes: 16 * 1024 } });
  t.equal(failedWith(await h.get(heavy.processInstanceId)), 'VARIABLES_TOO_LARGE', 'over the new limit: failed');
  t.equal((await h.get(light.processInstanceId)).stateCd, STATE.RUNNING, 'within it: still waits');
});

t.test('counts: kept by the reducer as executions start and end, the same as counted afresh', async (t) => {
  const h = await engineHarness(t);
  const pid = await h.publish(`
processId: AUTO
name: Parent
nodes:
  start: { type: startEvent, next: each }
  each:
    type: loopNode
    collection: "{items}"
    parallel: true
    nodes:
      s: { type: startEvent, next: ask }
      ask: { type: inputNode, inputType: textbox, next: e }
      e: { type: endEvent }
    next: done
  done: { type: endEvent }
`);
  const counts = LiveCounts.of(h.store.state);
  const a = await h.start(pid, { items: [1, 2, 3] });
  const b = await h.start(pid, { items: [1] });
  t.equal(counts.organization('default'), 6);
  t.equal(counts.childrenOf(a.processInstanceId), 3);
  t.equal(counts.tree(a), 4);
  await h.engine.cancel({ organization: 'default', processInstanceId: a.processInstanceId });
  t.equal(counts.organization('default'), 2, 'cancelled with its children');
  t.equal(counts.childrenOf(a.processInstanceId), 0);
  h.store.state.liveCounts = undefined;
  const fresh = LiveCounts.of(h.store.state);
  t.equal(fresh.organization('default'), 2, 'counted afresh: the same');
  t.equal(fresh.tree(b), 2);
});

t.test("a loop's progress writes its items once: the journal grows with the collection, not its square", async (t) => {
  const h = await engineHarness(t);
  const pid = await h.publish(`
processId: AUTO
name: Long loop
nodes:
  start: { type: startEvent, next: each }
  each:
    type: loopNode
    collection: "{items}"
    collect: out
    nodes:
      s: { type: startEvent, next: ask }
      ask: { type: inputNode, inputType: textbox, next: keep }
      keep: { type: setVariable, variables: { out: "{inputValue}" }, next: e }
      e: { type: endEvent }
    next: done
  done: { type: endEvent }
`);
  const items = Array.from({ length: 300 }, (_, i) => `item ${i} `.padEnd(200, '.'));
  const itemsBytes = JSON.stringify(items).length;
  const inst = await h.start(pid, { items });
  // What the journal holds, without the zeros its segments are written over (decision 014).
  const journal = () =>
    readdirSync(join(h.dir, 'journal'))
      .map((f) => readFileSync(join(h.dir, 'journal', f), 'utf8').replace(/\0+$/, ''))
      .join('');
  const journalBytes = () => journal().length;
  const before = journalBytes();
  for (let i = 0; i < items.length; i++) {
    const child = liveInstances(h.store.state).find(
      (c) => c.parentInstanceId === inst.processInstanceId && c.stateCd === STATE.RUNNING,
    );
    await h.engine.submitTask({
      organization: 'default',
      processInstanceId: child!.processInstanceId,
      nodeId: 'ask',
      action: 'COMPLETE',
      data: { inputValue: `v${i}` },
    });
  }
  const done = await h.get(inst.processInstanceId);
  t.equal(done.stateCd, STATE.COMPLETED);
  t.same(
    done.variables.out,
    items.map((_, i) => `v${i}`),
    'every value collected in order',
  );
  // What the loop's own progress wrote: its counts and each collected value, never its items
  // or the variables its iterations left as they were (each iteration's start still carries a
  // copy of the variables: that is linear in them, once per iteration).
  // A journal frame is `<crc32> <seq> <write-key> <records as JSON>`, one a line.
  const progress = journal()
    .split('\n')
    .flatMap((line) => {
      const json = /^\S+ \S+ \S+ (.*)$/.exec(line)?.[1];
      return json === undefined ? [] : (JSON.parse(json) as Array<{ type: string }>);
    })
    .filter((r) => r.type === 'loop.progressed')
    .map((r) => JSON.stringify(r));
  const progressBytes = progress.reduce((sum, r) => sum + r.length, 0);
  t.ok(progressBytes < items.length * 1024, `progress: ${progressBytes} bytes for ${items.length} iterations`);
  t.ok(journalBytes() - before < items.length * (2 * itemsBytes), 'the journal grew by about one copy per iteration');
  t.ok(progress.length >= items.length - 1, 'progress written as loop.progressed records');
});
