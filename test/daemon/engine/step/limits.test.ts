// The execution limits (engine/limits.ts) as a step decides them: a node, a start or a child
// past one fails or is refused with its code. What the engine does with them across a restart,
// and what the journal holds, are in ../limits.test.ts.
import t from 'tap';
import type { WorkOrder } from '../../../../src/daemon/engine/step/index.js';
import type { WorkResult } from '../../../../src/daemon/outbound/result.js';
import { STATE } from '../../../../src/daemon/state/state.js';
import { LiveCounts } from '../../../../src/daemon/state/live-counts.js';
import { variablesSize, logSize, liveNodes } from '../../../../src/daemon/state/sizes.js';
import { failedWith, FlowStep, running } from '../../../helpers/step-flows.js';

/** What the script `return { big: 'x'.repeat(vars.n) }` returns, as the work runner would hand it back. */
function grows(order: WorkOrder): WorkResult | undefined {
  if (order.request.kind !== 'script') return undefined;
  return { ok: true, value: { big: 'x'.repeat(Number(order.request.run.vars.n)) } };
}

t.test('variables-size: a node that would pass it fails with VARIABLES_TOO_LARGE, through errorFlow', async (t) => {
  const m = new FlowStep({ limits: { variablesBytes: 4096 }, work: grows });
  const pid = await m.publish(`
processId: AUTO
name: Grows
nodes:
  start: { type: startEvent, next: grow }
  grow: { type: scriptTask, script: "return { big: 'x'.repeat(vars.n) }", next: done, errorFlow: caught }
  caught: { type: setVariable, variables: { caughtCode: "{error.code}" }, next: done }
  done: { type: endEvent }
`);
  const okRun = m.started(pid, { n: 100 });
  t.equal(okRun.stateCd, STATE.COMPLETED);
  t.equal((okRun.variables.big as string).length, 100, 'under the limit: set');
  t.equal(variablesSize(okRun), JSON.stringify(okRun.variables).length, 'the size kept is the JSON size');
  const logJson = JSON.stringify(okRun.logs).length;
  t.ok(Math.abs(logSize(okRun) - logJson) < logJson * 0.05, `the log's too (${logSize(okRun)} of ${logJson})`);

  const caught = m.started(pid, { n: 5000 });
  t.equal(caught.stateCd, STATE.COMPLETED);
  t.equal(caught.variables.caughtCode, 'VARIABLES_TOO_LARGE', 'the errorFlow took the failure by its code');
  t.notOk('big' in caught.variables, 'nothing of it was set');

  const before = Object.keys(m.state.instances).length;
  t.throws(
    () => m.start(pid, { n: 1, pad: 'y'.repeat(5000) }),
    { code: 'PAYLOAD_TOO_LARGE' },
    'start data over the limit is refused before it starts',
  );
  t.equal(Object.keys(m.state.instances).length, before, 'nothing started');
});

t.test('children: a parallel loop wider than the limit fails with CHILD_LIMIT_EXCEEDED, none started', async (t) => {
  const m = new FlowStep({ limits: { children: 3 } });
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
  const wide = m.started(await m.publish(loop(5)), { items: [1, 2, 3, 4, 5] });
  t.equal(failedWith(wide), 'CHILD_LIMIT_EXCEEDED');
  t.equal(running(m).length, 0, 'no child started');
  const fits = m.started(await m.publish(loop(3)), { items: [1, 2, 3, 4, 5] });
  t.equal(fits.stateCd, STATE.RUNNING, 'three at once fit');
  t.equal(LiveCounts.of(m.state).childrenOf(fits.processInstanceId), 3);
});

t.test('branches: more active or waiting nodes than the limit fail the execution', async (t) => {
  const m = new FlowStep({ limits: { branches: 3 } });
  const pid = await m.publish(`
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
  const inst = m.started(pid);
  t.equal(failedWith(inst), 'BRANCH_LIMIT_EXCEEDED');
  t.equal(liveNodes(inst), 0, 'every branch ended with it');
});

t.test('tree-executions: a flow that calls itself twice over stops at the limit, and the daemon goes on', async (t) => {
  const m = new FlowStep({ limits: { treeExecutions: 20 } });
  const pid = crypto.randomUUID();
  await m.publish(`
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
  m.start(pid);
  // Everything it started ends (each level holds at most the limit, and depth is capped at 32).
  t.equal(running(m).length, 0, 'the tree has ended');
  const started = m.events.filter((e) => e.type === 'PROCESS_STARTED').length;
  t.ok(started <= 32 * 20 * 2, `bounded: ${started} executions started`);
  const failed = m.events.filter((e) => e.type === 'PROCESS_FAILED').map((e) => e.processInstanceId);
  t.ok(failed.length > 0, 'executions past the limit failed');
  const codes = new Set(failed.slice(0, 20).map((id) => failedWith(m.instance(id))));
  t.same([...codes], ['TREE_LIMIT_EXCEEDED'], 'with TREE_LIMIT_EXCEEDED');
  const other = await m.publish(`
processId: AUTO
name: Plain
nodes:
  start: { type: startEvent, next: done }
  done: { type: endEvent }
`);
  t.equal(m.started(other).stateCd, STATE.COMPLETED, 'another execution runs as ever');
});

t.test('loop-iterations: the daemon caps a loop whatever its maxIterations', async (t) => {
  const m = new FlowStep({ limits: { loopIterations: 5 } });
  const pid = await m.publish(`
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
  const inst = m.started(pid);
  t.equal(failedWith(inst), 'LOOP_LIMIT');
  t.match(inst.error?.message, /loop-iterations limit is 5/);
  const items = await m.publish(`
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
  t.equal(failedWith(m.started(items, { items: [1, 2, 3, 4, 5, 6] })), 'LOOP_LIMIT', 'a collection too');
  t.equal(m.started(items, { items: [1, 2, 3, 4, 5] }).stateCd, STATE.COMPLETED, 'at the limit: runs');
});

t.test('live-executions: a start past the limit is refused; callProcess fails; room comes back', async (t) => {
  const m = new FlowStep({ limits: { organizationExecutions: 2 } });
  const wait = await m.publish(`
processId: AUTO
name: Wait
nodes:
  start: { type: startEvent, next: ask }
  ask: { type: inputNode, inputType: textbox, next: done }
  done: { type: endEvent }
`);
  const caller = await m.publish(`
processId: AUTO
name: Caller
nodes:
  start: { type: startEvent, next: ask }
  ask: { type: inputNode, inputType: textbox, next: call }
  call: { type: callProcess, processId: ${wait}, next: done }
  done: { type: endEvent }
`);
  const first = m.started(wait);
  const second = m.started(caller);
  t.throws(() => m.start(wait), { code: 'EXECUTION_LIMIT_EXCEEDED' }, 'the third start is refused');
  m.answer(second.processInstanceId, 'ask', { inputValue: 'go' });
  t.equal(failedWith(m.instance(second.processInstanceId)), 'EXECUTION_LIMIT_EXCEEDED', 'callProcess: the node fails');
  m.cancel(first.processInstanceId);
  t.equal(m.started(wait).stateCd, STATE.RUNNING, 'a start fits again once one ended');
  const otherOrg = await m.publish(
    `
processId: AUTO
name: Elsewhere
nodes:
  start: { type: startEvent, next: ask }
  ask: { type: inputNode, inputType: textbox, next: done }
  done: { type: endEvent }
`,
    'other',
  );
  const elsewhere = m.startIn('other', otherOrg).answer.processInstanceId;
  t.equal(m.instance(elsewhere).stateCd, STATE.RUNNING, 'each organization its own');
});

t.test('log-size: an execution whose log passes it fails with LOG_LIMIT_EXCEEDED', async (t) => {
  const m = new FlowStep({ limits: { logBytes: 8192 } });
  const pid = await m.publish(`
processId: AUTO
name: Chatty
nodes:
  start: { type: startEvent, next: count }
  count: { type: setVariable, variables: { i: 1 }, next: again }
  again: { type: ifElse, condition: "\${true}", then: count, else: done }
  done: { type: endEvent }
`);
  const inst = m.started(pid);
  t.equal(failedWith(inst), 'LOG_LIMIT_EXCEEDED');
  t.ok(inst.nodeCount < 1000, `stopped early: ${inst.nodeCount} nodes, not the step limit`);
  t.ok(logSize(inst) < 8192 * 2, 'the log stayed near its limit');
});

t.test('a log line stops copying the variables once the log is large; the size kept is the JSON size', async (t) => {
  const m = new FlowStep();
  const pid = await m.publish(`
processId: AUTO
name: Big variables
nodes:
  start: { type: startEvent, next: set }
  set: { type: setVariable, variables: { n: "{n}" }, next: ask }
  ask: { type: inputNode, inputType: textbox, next: done }
  done: { type: endEvent }
`);
  const inst = m.started(pid, { blob: 'z'.repeat(3 * 1024 * 1024), n: 1 });
  const withVars = inst.logs.filter((l) => Array.isArray(l) && l.length === 5);
  t.equal(withVars.length, 1, 'the start line copies them; the set line, past 4 MiB, does not');
  t.ok(Math.abs(logSize(inst) - JSON.stringify(inst.logs).length) < 64, 'log size kept as its JSON size');
});

t.test('STEP_TOO_LARGE: the iterations one node starts may not carry more than a step writes', async (t) => {
  const m = new FlowStep();
  const pid = await m.publish(`
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
  const inst = m.started(pid, { items: Array.from({ length: 100 }, (_, i) => i), pad: 'p'.repeat(1024 * 1024) });
  t.equal(failedWith(inst), 'STEP_TOO_LARGE');
  t.equal(running(m).length, 0, 'no iteration started');
});

t.test('counts: kept by the reducer as executions start and end, the same as counted afresh', async (t) => {
  const m = new FlowStep();
  const pid = await m.publish(`
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
  const counts = LiveCounts.of(m.state);
  const a = m.started(pid, { items: [1, 2, 3] });
  const b = m.started(pid, { items: [1] });
  t.equal(counts.organization('default'), 6);
  t.equal(counts.childrenOf(a.processInstanceId), 3);
  t.equal(counts.tree(a), 4);
  m.cancel(a.processInstanceId);
  t.equal(counts.organization('default'), 2, 'cancelled with its children');
  t.equal(counts.childrenOf(a.processInstanceId), 0);
  m.state.liveCounts = undefined;
  const fresh = LiveCounts.of(m.state);
  t.equal(fresh.organization('default'), 2, 'counted afresh: the same');
  t.equal(fresh.tree(b), 2);
});
