import t, { type Test } from 'tap';
import { recoverLiveState, type Recovered } from '../../../src/daemon/engine/recovery.js';
import type { Effects } from '../../../src/daemon/engine/effects.js';
import { directoryLive, directorySubscriptions, directoryTasks } from '../../../src/daemon/at-rest/execution-cache.js';
import { executionSummarizer } from '../../../src/daemon/engine/executions-at-rest.js';
import { ExecutionIndex } from '../../../src/daemon/state/execution-index/execution-index.js';
import type { ExecutionSummary } from '../../../src/daemon/state/execution-summary.js';
import { ExecutionTable } from '../../../src/daemon/state/execution-table.js';
import { JobQueues } from '../../../src/daemon/state/job-queues.js';
import { LiveCounts } from '../../../src/daemon/state/live-counts.js';
import { STATE, STATUS, type Execution, type WfxState } from '../../../src/daemon/state/state.js';
import { subscriptionsFor } from '../../../src/daemon/state/subscriptions.js';
import { TaskIndex, taskKey } from '../../../src/daemon/state/task-index.js';
import { lastTriggeredStart } from '../../../src/daemon/state/trigger-fires.js';
import { IndexBuilder, parseIndex } from '../../../src/daemon/at-rest/segments/index-codec.js';
import { engineHarness, type EngineHarness } from '../../helpers/engine.js';
import { chargeFlow, registerDomain } from '../../helpers/jobs.js';

// The lazy open's recovery (decision 068 step 6b): the derived indexes a restart builds from
// cold executions' summaries alone (written to a segment index, read back into a directory)
// must be those it builds from the same executions resident. The oracle is the resident walk.

const ORG = { organization: 'default' } as const;

const ASK = `processId: AUTO
name: Ask
nodes:
  start: { type: startEvent, next: ask }
  ask: { type: inputNode, inputType: textbox, next: done }
  done: { type: endEvent }
`;

const REVIEW = `processId: AUTO
name: Review
nodes:
  start: { type: startEvent, next: review }
  review:
    type: userTask
    assignee: "{reviewer}"
    fields: [{ name: ok, type: boolean, required: true }]
    next: done
  done: { type: endEvent }
`;

const catching = (eventType: 'message' | 'signal', key: boolean) => `processId: AUTO
name: Catch ${eventType}
nodes:
  start: { type: startEvent, next: wait }
  wait:
    type: intermediateCatchEvent
    eventType: ${eventType}
    messageRef: paid
${key ? '    correlationKey: "order-{n}"\n' : ''}    next: done
  done: { type: endEvent }
`;

const TIMER = `processId: AUTO
name: Nap
nodes:
  start: { type: startEvent, next: nap }
  nap: { type: intermediateCatchEvent, eventType: timer, duration: 1d, next: done }
  done: { type: endEvent }
`;

const EMBEDDED = `processId: AUTO
name: Pack
nodes:
  start: { type: startEvent, next: pack }
  pack:
    type: subProcess
    nodes:
      s: { type: startEvent, next: packed }
      packed: { type: inputNode, inputType: textbox, next: e }
      e: { type: endEvent }
    next: done
  done: { type: endEvent }
`;

const calling = (processId: string) => `processId: AUTO
name: Call
nodes:
  start: { type: startEvent, next: sub }
  sub: { type: subProcess, processId: ${processId}, next: done }
  done: { type: endEvent }
`;

/** Calls `processId` and then waits for input (`wait`), or ends at once. */
const calls = (processId: string, wait: boolean) => `processId: AUTO
name: Calls
nodes:
  start: { type: startEvent, next: call }
  call: { type: callProcess, processId: ${processId}, next: ${wait ? 'ask' : 'done'} }
${wait ? '  ask: { type: inputNode, inputType: textbox, next: done }\n' : ''}  done: { type: endEvent }
`;

const reacting = (watched: string) => `processId: AUTO
name: React
triggers:
  - { type: execution, processId: ${watched}, states: [COMPLETED] }
nodes:
  start: { type: startEvent, next: ask }
  ask: { type: inputNode, inputType: textbox, next: done }
  done: { type: endEvent }
`;

const activate = (h: EngineHarness, worker: string) =>
  h.engine.jobs.activate({ ...ORG, domain: 'billing', worker, maxJobs: 1, lockDurationMs: 60_000 });

/** The flows of the corpus, and a harness whose live state holds a waiting execution of every kind. */
async function corpus(t: Test): Promise<{ h: EngineHarness; flows: string[] }> {
  const h = await engineHarness(t, undefined, undefined, { cold: false });
  await registerDomain(h);
  const ask = await h.publish(ASK);
  const review = await h.publish(REVIEW);
  const message = await h.publish(catching('message', true));
  const messageNoKey = await h.publish(catching('message', false));
  const signal = await h.publish(catching('signal', true));
  const signalNoKey = await h.publish(catching('signal', false));
  const timer = await h.publish(TIMER);
  const charge = await h.publish(chargeFlow('    retry: { maxAttempts: 3, initialInterval: 5s }\n'));
  const embedded = await h.publish(EMBEDDED);
  const called = await h.publish(calling(review));
  const callsWaiting = await h.publish(calls(ask, true));
  const callsEnding = await h.publish(calls(ask, false));
  const react = await h.publish(reacting(ask));
  const flows = [ask, review, message, messageNoKey, signal, signalNoKey, timer, charge, embedded, called];
  flows.push(callsWaiting, callsEnding, react);
  for (let i = 0; i < 3; i++) {
    h.clock.advance(1000);
    await h.start(ask);
    await h.start(review, { reviewer: i === 0 ? 'ann' : 'bob' });
    await h.start(review, {});
    await h.start(message, { n: i }, { correlationKey: `c-${i}` });
    await h.start(messageNoKey, {});
    await h.start(signal, { n: i % 2 });
    await h.start(signalNoKey, {});
    await h.start(timer);
    await h.start(embedded);
    await h.start(called, { reviewer: 'cy' });
    await h.start(callsWaiting);
    await h.start(callsEnding);
  }
  // Jobs: three unlocked, one locked by a worker, one failed once and waiting out its backoff.
  for (let i = 0; i < 5; i++) await h.start(charge, { amount: i });
  await activate(h, 'w1');
  const [failing] = await activate(h, 'w2');
  await h.engine.jobs.fail({ ...ORG, key: failing!.key, worker: 'w2', errorCode: 'DECLINED', errorMessage: 'no' });
  // Executions started by an execution trigger: an Ask completes, twice.
  for (let i = 0; i < 2; i++) {
    h.clock.advance(1000);
    const done = await h.start(ask);
    const node = Object.values(done.nodes).find((n) => n.nodeId === 'ask')!;
    await h.engine.submitTask({
      ...ORG,
      processInstanceId: done.processInstanceId,
      nodeId: node.nodeId,
      action: 'COMPLETE',
      data: { inputValue: 'yes' },
    });
  }
  await h.rest();
  return { h, flows };
}

/**
 * The live executions as a restart would recover them, copied: a few with a node Active (a
 * step that was under way) and one running with nothing live (its join fired).
 */
function recovered(state: WfxState): Execution[] {
  const out: Execution[] = [];
  for (const id of ExecutionTable.of(state).ids()) {
    const inst = state.instances[id];
    if (inst !== undefined) out.push(JSON.parse(JSON.stringify(inst)) as Execution);
  }
  let activeMade = 0;
  let settled = false;
  for (const inst of out) {
    if (inst.stateCd !== STATE.RUNNING || inst.root !== undefined) continue;
    const waiting = Object.values(inst.nodes).find((n) => n.statusCd === STATUS.WAITING && n.wait?.kind === 'input');
    if (waiting === undefined) continue;
    if (activeMade < 3) {
      Object.assign(waiting, { statusCd: STATUS.ACTIVE, wait: null });
      activeMade++;
    } else if (!settled) {
      Object.assign(waiting, { statusCd: STATUS.COMPLETED, wait: null });
      if (inst.liveNodes !== undefined) Object.assign(inst, { liveNodes: inst.liveNodes - 1 });
      settled = true;
    }
  }
  return out;
}

/** The events asked for in `derived`: every bucket the corpus subscribes in, and a key none waits for. */
const EVENTS: ReadonlyArray<readonly [string, string, string | null]> = [
  ['default', 'paid', null],
  ['default', 'paid', 'order-0'],
  ['default', 'paid', 'order-1'],
  ['default', 'paid', 'order-2'],
  ['default', 'paid', 'no-one'],
];

/** A state holding `insts` resident (nothing else: the walk reads only its executions). */
function holding(insts: readonly Execution[]): WfxState {
  const state = { instances: {}, subscriptions: {} } as unknown as WfxState;
  const table = ExecutionTable.of(state);
  for (const inst of insts) table.put(inst);
  return state;
}

/** Effects that re-arm nothing: the walk's indexes are what is compared. */
const effects = {
  recovered: (inst: Execution) => inst.stateCd === STATE.RUNNING,
  recoveredWait: () => undefined,
  armBoundaries: () => undefined,
} as unknown as Effects;

/**
 * The summaries of `insts` as a restart reads them: made at a checkpoint, written to a segment
 * index, its text parsed and loaded into a directory, each read back. Returns the directory too.
 */
function throughIndex(
  insts: readonly Execution[],
  flowsState: WfxState,
  into: WfxState,
): { summaries: ExecutionSummary[]; directory: ExecutionIndex } {
  const summarize = executionSummarizer();
  const index = new IndexBuilder(1);
  insts.forEach((inst, i) => index.add(inst.processInstanceId, i * 10, 10, summarize(inst, flowsState)));
  const doc = parseIndex(JSON.stringify(index.finish(insts.length * 10, [])), 1);
  if (typeof doc === 'string') throw new Error(doc);
  const directory = new ExecutionIndex(16);
  directory.loadColumns(doc, 1);
  // As the cache sets them: the cold executions' event waits and tasks are the directory's to answer for.
  into.coldSubscriptions = directorySubscriptions(directory);
  into.coldTasks = directoryTasks(directory);
  const summaries = insts.map((inst) => directory.get(inst.processInstanceId)!.summary);
  return { summaries, directory };
}

/** The resident finished executions of `state`. */
function finishedIn(state: WfxState): string[] {
  return ExecutionTable.of(state)
    .ids()
    .filter((id) => state.instances[id] !== undefined && state.instances[id].stateCd !== STATE.RUNNING);
}

/** What the walk built in `state`, in a form to compare (`ordered`: job queues in their order). */
function derived(state: WfxState, all: readonly Execution[], flows: readonly string[], result: Recovered) {
  // What each event the corpus waits for resumes, the cold side's subscriptions included.
  const subscriptions: string[] = [];
  for (const [org, ref, key] of EVENTS)
    for (const s of subscriptionsFor(state, org, ref, key))
      subscriptions.push(`${org}|${ref}|${key}|${s.instanceId}|${s.nodeInstanceId}|${s.nodeId}`);
  const tasks = TaskIndex.held(state)!;
  const jobs = JobQueues.held(state)!;
  const queues: string[] = [];
  for (const [org, domain] of jobs.domains())
    for (const action of jobs.actions(org, domain))
      queues.push(`${org}/${domain}/${action}: ${[...jobs.queue(org, domain, action).keys()].join(' ')}`);
  const counts = LiveCounts.held(state)!;
  return {
    subscriptions: subscriptions.sort(),
    tasks: tasks.page(null, undefined, undefined, Infinity).map(taskKey),
    taskCount: tasks.size,
    oldestTask: tasks.oldestSince(),
    flowTasks: flows.map((f) => tasks.page('default', f, undefined, Infinity).map(taskKey)),
    jobs: queues,
    jobCount: jobs.size,
    perFlow: [...counts.perFlow()].map(([f, c]) => `${f} ${c[0]} ${c[1]}`).sort(),
    organization: counts.organization('default'),
    trees: all.map((i) => `${i.processInstanceId} ${counts.tree(i)}`),
    children: all.map((i) => `${i.processInstanceId} ${counts.childrenOf(i.processInstanceId)}`),
    triggered: flows.map((f) => lastTriggeredStart(state, f, 'PRODUCTION')),
    toContinue: [...result.running.map((i) => i.processInstanceId), ...result.coldRunning].sort(),
    // What a resident walk queues for archiving (effects.recovered), and the cold ones it returns.
    finished: [...finishedIn(state), ...result.coldFinished].sort(),
  };
}

t.test('recovery from summaries alone builds the indexes the resident walk builds', async (t) => {
  const { h, flows } = await corpus(t);
  const all = recovered(h.store.state);
  const running = all.filter((i) => i.stateCd === STATE.RUNNING);
  const byKind = new Set(running.flatMap((i) => Object.values(i.nodes).map((n) => n.wait?.kind)));
  t.same([...byKind].filter((k) => k !== undefined && k !== null).sort(), ['child', 'event', 'input', 'job', 'timer']);
  t.ok(
    running.some((i) => Object.values(i.nodes).some((n) => n.wait?.kind === 'job' && n.wait.lock !== null)),
    'a job is locked',
  );
  t.ok(
    running.some((i) => Object.values(i.nodes).some((n) => n.wait?.kind === 'job' && n.wait.notBefore !== null)),
    'a job waits out a backoff',
  );
  t.ok(
    running.some((i) => i.triggeredBy !== undefined),
    'an execution trigger started one',
  );
  t.ok(
    running.some((i) => i.root !== undefined && i.parentInstanceId === null),
    'a called execution is in a tree',
  );

  const resident = holding(all);
  const residentResult = recoverLiveState(resident, effects);
  const oracle = derived(resident, all, flows, residentResult);
  t.ok(oracle.subscriptions.length >= 12 && oracle.tasks.length >= 15 && oracle.jobCount === 5, 'the corpus waits');
  t.ok(residentResult.running.length >= 4, 'some are to continue');
  t.ok(
    all.some((i) => LiveCounts.held(resident)!.tree(i) > 1),
    'a tree counts more than its root',
  );

  const cold = holding([]);
  const { summaries, directory } = throughIndex(all, h.store.state, cold);
  const coldResult = recoverLiveState(cold, effects, undefined, undefined, directoryLive(directory));
  t.same(
    summaries.map((s) => s.id),
    all.map((i) => i.processInstanceId),
    'every summary read back from the index',
  );
  // Job queues in id order (the directory's walk), the resident walk's in the table's: the same
  // but within a millisecond, where ids order at random.
  const sortJobs = (d: ReturnType<typeof derived>) => ({
    ...d,
    jobs: d.jobs.map((q) => q.split(' ').sort().join(' ')).sort(),
  });
  t.same(sortJobs(derived(cold, all, flows, coldResult)), sortJobs(oracle), 'every execution cold');
  t.same(coldResult.running, [], 'no resident one to continue');

  // Half the trees cold, half resident.
  // Trees with an execution to continue alternate, so that each side has some whatever the ids.
  const treeOf = (i: Execution) => i.root ?? i.processInstanceId;
  const continued = [...new Set(residentResult.running.map(treeOf))].sort();
  const coldTree = (i: Execution) => {
    const at = continued.indexOf(treeOf(i));
    return at >= 0 ? at % 2 === 0 : treeOf(i).charCodeAt(35) % 2 === 0;
  };
  const mixed = holding(all.filter((i) => !coldTree(i)));
  const part = throughIndex(
    all.filter((i) => coldTree(i)),
    h.store.state,
    mixed,
  );
  const mixedResult = recoverLiveState(mixed, effects, undefined, undefined, directoryLive(part.directory));
  t.ok(mixedResult.running.length > 0 && mixedResult.coldRunning.length > 0, 'both sides continue some');
  t.same(sortJobs(derived(mixed, all, flows, mixedResult)), sortJobs(oracle), 'half the trees cold');
});

t.test('an index written before the flags and flow node columns reads as their defaults', (t) => {
  const base: ExecutionSummary = {
    id: 'x',
    organization: 'o',
    processId: 'p',
    processVersion: '1',
    environment: 'PRODUCTION',
    stateCd: STATE.RUNNING,
    root: 'r',
    parent: 'r',
    startMs: 1_700_000_000_000,
    triggered: true,
    child: false,
    correlationKey: null,
    dueMs: null,
    active: 0,
    waits: [{ kind: 'event', node: 'n2', eventType: 'message', nodeId: 'wait', ref: 'paid', key: 'k' }],
  };
  const index = new IndexBuilder(1);
  index.add('x', 0, 10, base);
  const written = index.finish(10, []) as unknown as Record<string, unknown>;
  const now = parseIndex(JSON.stringify(written), 1);
  const dir = new ExecutionIndex(16);
  if (typeof now === 'string') throw new Error(now);
  dir.loadColumns(now, 1);
  t.same(dir.get('x')?.summary, base, 'the new columns round trip');
  delete written.flags;
  delete written.waitFlowNode;
  const old = parseIndex(JSON.stringify(written), 1);
  if (typeof old === 'string') throw new Error(old);
  const before = new ExecutionIndex(16);
  before.loadColumns(old, 1);
  t.same(
    before.get('x')?.summary,
    { ...base, triggered: false, child: true, waits: [{ ...base.waits[0]!, nodeId: '' }] },
    'absent: not triggered, a child when it has a parent, no flow node',
  );
  t.end();
});
