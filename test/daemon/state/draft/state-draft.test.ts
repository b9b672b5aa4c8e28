import t from 'tap';
import { runStep, type StepInput } from '../../../../src/daemon/engine/step/index.js';
import type { WfxRecord } from '../../../../src/daemon/state/records.js';
import { jobKey, JobQueues } from '../../../../src/daemon/state/job-queues.js';
import { LiveCounts } from '../../../../src/daemon/state/live-counts.js';
import { subscriptionsFor } from '../../../../src/daemon/state/subscriptions.js';
import { TaskIndex } from '../../../../src/daemon/state/task-index.js';
import type { WfxState } from '../../../../src/daemon/state/state.js';
import { frozenCopy } from '../../../helpers/frozen-state.js';
import { chargeFlow } from '../../../helpers/jobs.js';
import { MemoryStep, typesOf } from '../../../helpers/step.js';

// The same steps taken twice: once deciding on a frozen copy with the records applied by the
// reducer (what recovery's replay does), once committing the draft as the engine's runner does.
// The states must agree after every step, and the committed one's indexes must be what a walk
// over its executions makes.

const id = (n: number) => `0193a000-0000-7000-8000-${String(n).padStart(12, '0')}`;
const CATCH = `processId: ${id(1)}
name: Catch
nodes:
  start: { type: startEvent, next: wait }
  wait: { type: intermediateCatchEvent, eventType: message, messageRef: paid, correlationKey: "{orderId}", next: done }
  done: { type: endEvent }
`;
const THROW = `processId: ${id(2)}
name: Throw
nodes:
  start: { type: startEvent, next: say }
  say: { type: intermediateThrowEvent, eventType: message, messageRef: paid, correlationKey: "{orderId}", data: { by: thrower }, next: done }
  done: { type: endEvent }
`;
const ASK = `processId: ${id(3)}
name: Ask
nodes:
  start: { type: startEvent, next: ask }
  ask: { type: inputNode, inputType: textbox, next: done }
  done: { type: endEvent }
`;
const PARENT = `processId: ${id(4)}
name: Parent
nodes:
  start: { type: startEvent, next: sub }
  sub: { type: subProcess, processId: ${id(3)}, next: done }
  done: { type: endEvent }
`;
const CHARGE = chargeFlow().replace('processId: AUTO', `processId: ${id(5)}`);

/** What two states must agree on: their data, and their indexes as each keeps them. */
function seen(state: WfxState) {
  const counts = LiveCounts.of(state);
  const queues = JobQueues.of(state);
  return {
    data: JSON.parse(JSON.stringify(state)) as unknown,
    running: counts.organization('default'),
    perFlow: [...counts.perFlow()].sort(),
    subs: ['o1', 'o2', 'o3'].map((key) => subscriptionsFor(state, 'default', 'paid', key)),
    jobs: [...queues.queue('default', 'billing', 'charge').values()],
    tasks: TaskIndex.of(state).page(null, undefined, undefined, 100),
  };
}

t.test('a committed draft leaves the state its records applied once would', async (t) => {
  const twins = [new MemoryStep(), new MemoryStep({ frozen: false })];
  for (const m of twins) {
    m.registerBilling();
    for (const flow of [CATCH, THROW, ASK, PARENT, CHARGE]) await m.publish(flow);
    TaskIndex.of(m.state); // made: steps keep it up from here
  }
  const [replayed, committed] = twins as [MemoryStep, MemoryStep];
  const start = (processId: string, data: Record<string, unknown> = {}): StepInput => ({
    kind: 'start',
    request: { organization: 'default', processId, data, correlationKey: null },
  });
  const event = (key: string, ttlSeconds = 0): StepInput => ({
    kind: 'event',
    organization: 'default',
    eventType: 'paid',
    correlationKey: key,
    data: { amount: 5 },
    ttlSeconds,
    messageId: null,
    dedupKey: null,
    elsewhere: [],
  });
  const idOf = (m: MemoryStep, n: number) => Object.keys(m.state.instances)[n]!;
  const steps: Array<(m: MemoryStep) => StepInput> = [
    () => start(id(1), { orderId: 'o1' }),
    () => start(id(1), { orderId: 'o2' }),
    () => start(id(3)),
    () => start(id(4)),
    () => start(id(5), { amount: 10 }),
    () => ({
      kind: 'job.activate',
      req: { organization: 'default', domain: 'billing', worker: 'w1', maxJobs: 5, lockDurationMs: 30_000 },
      actions: ['charge'],
    }),
    () => start(id(2), { orderId: 'o1' }), // its thrown message wakes the first catch
    () => event('o3', 60), // nothing waits: kept for a minute
    () => start(id(1), { orderId: 'o3' }), // consumes the kept message
    (m) => ({ kind: 'answer', instanceId: idOf(m, 2), nodeId: 'ask', action: 'COMPLETE', data: { inputValue: 'x' } }),
    (m) => ({ kind: 'answer', instanceId: idOf(m, 4), nodeId: 'ask', action: 'COMPLETE', data: { inputValue: 'y' } }),
    (m) => {
      const charge = idOf(m, 5);
      const key = jobKey(charge, Object.values(m.state.instances[charge]!.nodes).at(-1)!.id);
      return { kind: 'job.complete', req: { organization: 'default', key, worker: 'w1', output: { receipt: 'r1' } } };
    },
    () => event('o2'),
  ];
  for (const [i, input] of steps.entries()) {
    for (const m of twins) {
      m.ms += 1000;
      m.run(input(m));
    }
    t.same(seen(committed.state), seen(replayed.state), `step ${i + 1}: the same state both ways`);
    t.same(seen(committed.state), seen(frozenCopy(committed.state)), `step ${i + 1}: the kept indexes are a walk's`);
  }
  const finished = Object.values(committed.state.instances).filter((inst) => inst?.stateCd === 1).length;
  t.equal(finished, 8, 'the steps ran through: catches, throw, asks, parent and charge completed');
});

t.test('a step that throws after writing records leaves the state it decided on as it was', async (t) => {
  const m = new MemoryStep({ frozen: false });
  await m.publish(ASK);
  const started = m.start(id(3)).answer.processInstanceId;
  const before = JSON.stringify(m.state);
  const counts = [...LiveCounts.of(m.state).perFlow()];
  let written = 0;
  // A check that throws once the answer's second record is applied to the draft.
  const failing = (_draft: WfxState, apply: (r: WfxRecord) => void) => ({
    apply: (r: WfxRecord) => {
      apply(r);
      if (++written === 2) throw new Error('a defect half-way');
    },
    reach: () => undefined,
  });
  const answer: StepInput = {
    kind: 'answer',
    instanceId: started,
    nodeId: 'ask',
    action: 'COMPLETE',
    data: { inputValue: 'x' },
  };
  t.throws(() => runStep(m.state, m.ctx, m.now, answer, failing), /half-way/);
  t.equal(written, 2, 'two records were applied to the draft');
  t.equal(JSON.stringify(m.state), before, 'the state is as it was');
  t.same([...LiveCounts.of(m.state).perFlow()], counts, 'and its counts');
  t.same(
    typesOf(m.run(answer).records),
    ['node.completed', 'node.ran', 'instance.finished'],
    'the step runs again whole',
  );
});
