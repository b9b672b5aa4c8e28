import t from 'tap';
import { LiveCounts } from '../../../src/daemon/state/live-counts.js';
import { STATE, STATUS, type Execution } from '../../../src/daemon/state/state.js';
import { engineHarness, type EngineHarness } from '../../helpers/engine.js';
import { withCold } from '../../helpers/cold.js';
import { compareWithScans } from '../../helpers/derived-oracle.js';
import { chargeFlow, registerDomain } from '../../helpers/jobs.js';
import { liveInstances } from '../../helpers/state.js';
import { prng as random } from '../../helpers/prng.js';

// The indexes kept in place of full scans (issue #60, decision 068 step 2): the live counts
// (limits and wfx_executions_running), the job queues and the triggered starts trigger health
// reads, compared with the scans they replaced after each of a seeded random mix of starts,
// answers, cancels and finishes, across a restart; and made by the restart's recovery walk,
// never by a first read.

const ORG = { organization: 'default' } as const;

const ASK = `processId: AUTO
name: Ask
nodes:
  start: { type: startEvent, next: ask }
  ask: { type: inputNode, inputType: textbox, next: done }
  done: { type: endEvent }
`;

const LOOP = `processId: AUTO
name: Loop
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

/** Every live execution of `h`, cold ones included (copies): what the mix picks from. */
const everyLive = (h: EngineHarness): Execution[] => liveInstances(withCold(h.store.state, h.cold));

/** The running executions with a waiting input node `ask` (loop iterations included). */
const asking = (h: EngineHarness): Execution[] =>
  everyLive(h).filter(
    (i) =>
      i.stateCd === STATE.RUNNING &&
      Object.values(i.nodes).some((n) => n.nodeId === 'ask' && n.statusCd === STATUS.WAITING),
  );

t.test('kept counts, job queues and triggered starts answer as the scans did', async (t) => {
  let h = await engineHarness(t);
  await registerDomain(h);
  const ask = await h.publish(ASK);
  const flows = [ask, await h.publish(LOOP), await h.publish(chargeFlow()), await h.publish(reacting(ask))];
  const next = random(60);
  const pick = <T>(xs: readonly T[]): T | undefined => xs[Math.floor(next() * xs.length)];
  let triggered = new Map<string, string>();
  await compareWithScans(t, h.store.state, 'at start', triggered, h.cold);
  for (let step = 0; step < 60; step++) {
    const roll = next();
    let what: string;
    if (step === 30) {
      h = await h.restart();
      // What this daemon knows of triggered starts begins again with the executions it recovered.
      triggered = new Map();
      what = 'restart';
    } else if (roll < 0.45) {
      const flow = pick(flows.slice(0, 3))!;
      h.clock.advance(1000);
      await h.start(flow, { amount: 5, items: [1, 2, 3].slice(0, 1 + Math.floor(next() * 3)) });
      what = `start ${flow}`;
    } else if (roll < 0.75) {
      const inst = pick(asking(h));
      if (!inst) continue;
      h.clock.advance(1000);
      await h.engine.submitTask({
        ...ORG,
        processInstanceId: inst.processInstanceId,
        nodeId: 'ask',
        action: 'COMPLETE',
        data: { inputValue: 'yes' },
      });
      what = `answer ${inst.processInstanceId}`;
    } else {
      const roots = everyLive(h).filter((i) => i.stateCd === STATE.RUNNING && i.root === undefined);
      const inst = pick(roots);
      if (!inst) continue;
      await h.engine.cancel({ ...ORG, processInstanceId: inst.processInstanceId });
      what = `cancel ${inst.processInstanceId}`;
    }
    await compareWithScans(t, h.store.state, `step ${step} (${what})`, triggered, h.cold);
  }
  t.ok(
    everyLive(h).some((i) => i.triggeredBy !== undefined),
    'the mix started executions by trigger',
  );
});

t.test('a restart makes the counts and job queues in its recovery walk, before any read', async (t) => {
  let h = await engineHarness(t);
  await registerDomain(h);
  const charge = await h.publish(chargeFlow());
  const ask = await h.publish(ASK);
  await h.start(charge, { amount: 1 });
  await h.start(ask);
  h = await h.restart();
  const counts = LiveCounts.held(h.store.state);
  t.ok(counts, 'live counts made by the recovery walk');
  t.ok(h.store.state.jobQueues, 'job queues made by the recovery walk');
  t.equal(counts?.organization('default'), 2);
  t.same(
    [...(counts?.perFlow() ?? [])].sort(),
    [
      [ask, [1, 1]],
      [charge, [1, 1]],
    ].sort(),
    'both only wait',
  );
});
