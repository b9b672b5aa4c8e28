import t from 'tap';
import { logEntries } from '../../../src/daemon/state/log-line.js';
import { STATE, type Execution } from '../../../src/daemon/state/state.js';
import { DEFAULT_LIMITS } from '../../../src/daemon/engine/limits.js';
import { executionTriggerHealth } from '../../../src/daemon/triggers/health.js';
import { eventually } from '../../helpers/eventually.js';
import { engineHarness, type EngineHarness } from '../../helpers/engine.js';

/** Fails at `route` (NO_BRANCH_MATCHED) unless `mode` is ok; with a child execution that completes first. */
const watched = `processId: AUTO
name: Orders
nodes:
  start: { type: startEvent, next: child }
  child:
    type: subProcess
    nodes:
      s: { type: startEvent, next: e }
      e: { type: endEvent }
    next: route
  route:
    type: exclusiveGateway
    name: Route the order
    branches:
      - { condition: "\${mode == 'ok'}", next: done }
  done: { type: endEvent }
`;

/** A flow with `trigger` that ends (`fails`: fails at its gateway). */
const reacting = (name: string, trigger: string, fails = false) => `processId: AUTO
name: ${name}
triggers:
  - ${trigger}
nodes:
  start: { type: startEvent, next: route }
  route:
    type: exclusiveGateway
    branches:
      - { condition: "\${${fails ? 'false' : 'true'}}", next: keep }
  keep: { type: setVariable, variables: { seen: "{endedExecution.id}" }, next: done }
  done: { type: endEvent }
`;

/** The executions the end of `inst` started, read from its INFO lines. */
async function startedBy(h: EngineHarness, inst: Execution): Promise<Execution[]> {
  const ended = await h.get(inst.processInstanceId);
  const ids = logEntries(ended)
    .map((l) => /^execution trigger started .*: (\S+)$/.exec(l.message)?.[1])
    .filter((id): id is string => id !== undefined);
  return Promise.all(ids.map((id) => h.get(id)));
}

/** Resolves once execution `id` has ended. */
const ended = (h: EngineHarness, id: string) =>
  eventually(`execution ${id} ends`, async () => (await h.get(id)).stateCd !== STATE.RUNNING);

t.test('an execution ending starts the flows that watch its flow and state, with its summary', async (t) => {
  const h = await engineHarness(t);
  const orders = await h.publish(watched);
  const onAnyFailure = await h.publish(reacting('On any failure', '{ type: execution, states: [FAILED] }'));
  const onOrdersDone = await h.publish(
    reacting('On orders done', `{ type: execution, processId: ${orders}, states: [COMPLETED] }`),
  );
  await h.publish(reacting('Other org', '{ type: execution, states: [FAILED] }'), { organization: 'other' });
  await h.publish(reacting('Other env', '{ type: execution, states: [FAILED] }'), { environment: 'DEVELOPMENT' });

  const failed = await h.start(orders, { mode: 'fail' });
  t.equal(failed.stateCd, STATE.FAILED);
  const started = await startedBy(h, failed);
  t.same(
    started.map((i) => i.processId),
    [onAnyFailure],
    'one start: the any-failure flow (not the COMPLETED watcher, not another organization or environment, not for the child)',
  );
  const run = started[0]!;
  await ended(h, run.processInstanceId);
  const done = await h.get(run.processInstanceId);
  t.equal(done.stateCd, STATE.COMPLETED);
  t.match(done.variables, {
    triggerType: 'execution',
    seen: failed.processInstanceId,
    endedExecution: {
      id: failed.processInstanceId,
      processId: orders,
      flowName: 'Orders',
      version: failed.processVersion,
      environment: 'PRODUCTION',
      state: 'FAILED',
      failureCode: 'NO_BRANCH_MATCHED',
      failedNode: 'route',
      failedNodeName: 'Route the order',
    },
  });
  t.match(done.triggeredBy, {
    processInstanceId: failed.processInstanceId,
    processId: orders,
    depth: 1,
    chain: [orders],
  });

  const ok = await h.start(orders, { mode: 'ok' });
  t.equal(ok.stateCd, STATE.COMPLETED);
  const onOk = await startedBy(h, ok);
  t.same(
    onOk.map((i) => i.processId),
    [onOrdersDone],
    'a completion starts the flow watching it; the any-failure flow ending completed starts nothing',
  );
  t.match((onOk[0]!.variables.endedExecution as Record<string, unknown>).failureCode, null);

  const health = executionTriggerHealth(h.store.state);
  t.match(
    health.find((x) => x.processId === onAnyFailure),
    { type: 'execution', state: 'active', watchedProcessId: null, states: ['FAILED'], lastFire: run.startTime },
  );
  t.match(
    health.find((x) => x.processId === onOrdersDone),
    { watchedProcessId: orders, states: ['COMPLETED'] },
  );
});

t.test('a cancel fires CANCELLED watchers, with its reason', async (t) => {
  const h = await engineHarness(t);
  const waits = await h.publish(`processId: AUTO
name: Waits
nodes:
  start: { type: startEvent, next: ask }
  ask: { type: inputNode, inputType: textbox, next: done }
  done: { type: endEvent }
`);
  const on = await h.publish(reacting('On cancel', `{ type: execution, processId: ${waits}, states: [CANCELLED] }`));
  const inst = await h.start(waits);
  await h.engine.cancel({ organization: null, processInstanceId: inst.processInstanceId });
  const [started] = await startedBy(h, inst);
  t.equal(started?.processId, on);
  t.match(started?.variables.endedExecution, { state: 'CANCELLED', failureCode: null, error: 'cancelled by request' });
});

t.test('a start is durable with the end that makes it: a restart neither loses nor repeats it', async (t) => {
  let h = await engineHarness(t);
  const orders = await h.publish(watched);
  const on = await h.publish(reacting('On failure', `{ type: execution, processId: ${orders}, states: [FAILED] }`));
  const failed = await h.start(orders, { mode: 'fail' });
  h = await h.restart();
  const started = await startedBy(h, failed);
  t.equal(started.length, 1);
  await ended(h, started[0]!.processInstanceId);
  t.equal((await h.get(started[0]!.processInstanceId)).stateCd, STATE.COMPLETED, 'run after the restart');
  const all = Object.values(h.store.state.instances).filter((i) => i?.processId === on);
  t.ok(all.length <= 1, 'not started twice');
});

t.test('the loop guard: no flow in the chain starts again, and chains stop at trigger-depth', async (t) => {
  const h = await engineHarness(t);
  const orders = await h.publish(watched);
  const l = await h.publish(reacting('L', '{ type: execution, states: [FAILED] }', true));
  const m = await h.publish(reacting('M', '{ type: execution, states: [FAILED] }', true));
  const failed = await h.start(orders, { mode: 'fail' });
  const first = await startedBy(h, failed);
  t.same(first.map((i) => i.processId).sort(), [l, m].sort(), 'both failure flows start');
  const second: Execution[] = [];
  for (const i of first) {
    await ended(h, i.processInstanceId);
    const next = await startedBy(h, i);
    t.equal(next.length, 1, 'each starts the other, never itself');
    t.not(next[0]!.processId, i.processId);
    second.push(next[0]!);
  }
  for (const i of second) {
    await ended(h, i.processInstanceId);
    t.same(await startedBy(h, i), [], 'the chain stops: the other flow is in it');
    const warn = logEntries(await h.get(i.processInstanceId)).filter((x) => x.level === 'WARN');
    t.match(
      warn,
      [{ message: /not started: TRIGGER_LOOP/ }],
      'the skipped start is a WARN line on the ended execution',
    );
    t.equal(i.triggeredBy?.depth, 2);
  }
});

t.test('a chain of distinct flows stops at the trigger-depth limit', async (t) => {
  const h = await engineHarness(t, undefined, undefined, { limits: { ...DEFAULT_LIMITS, triggerDepth: 2 } });
  const orders = await h.publish(watched);
  const a = await h.publish(reacting('A', `{ type: execution, processId: ${orders}, states: [FAILED] }`, true));
  const b = await h.publish(reacting('B', `{ type: execution, processId: ${a}, states: [FAILED] }`, true));
  await h.publish(reacting('C', `{ type: execution, processId: ${b}, states: [FAILED] }`));
  const failed = await h.start(orders, { mode: 'fail' });
  const [ai] = await startedBy(h, failed);
  await ended(h, ai!.processInstanceId);
  const [bi] = await startedBy(h, ai!);
  t.equal(bi?.processId, b);
  await ended(h, bi!.processInstanceId);
  t.same(await startedBy(h, bi!), [], 'C would be the third in the chain');
  t.match(
    logEntries(await h.get(bi!.processInstanceId)).filter((x) => x.level === 'WARN'),
    [{ message: /C \(.*\) not started: TRIGGER_DEPTH_EXCEEDED/ }],
  );
});
