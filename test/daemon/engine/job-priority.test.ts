import '../../setup/fixtures.js'; // fixtures under the OS temp dir (see there)
import { existsSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import t from 'tap';
import { IMAGE_NAME } from '../../../src/daemon/at-rest/segments/directory-image.js';
import { engineHarness, type EngineHarness } from '../../helpers/engine.js';
import { eventually } from '../../helpers/eventually.js';
import { chargeFlow, registerDomain } from '../../helpers/jobs.js';

// Work waiting for a job worker goes by its tree's start priority, highest first, oldest first
// within one (flows.md#priority), resident or cold, and over a restart from the directory's
// image or from the segment indexes alone.

const ORG = { organization: 'default' } as const;

const REFUND = `processId: AUTO
name: Refund
nodes:
  start: { type: startEvent, next: refund }
  refund: { type: domainTask, domain: billing, action: refund, input: { n: "{n}" }, next: done }
  done: { type: endEvent }
`;

const calls = (processId: string) => `processId: AUTO
name: Calls
nodes:
  start: { type: startEvent, next: call }
  call: { type: callProcess, processId: ${processId}, data: { amount: 9 }, next: done }
  done: { type: endEvent }
`;

/** Activates jobs one at a time until none is left; the executions' ids in the order taken. */
async function drain(h: EngineHarness, actions?: string[]): Promise<string[]> {
  const order: string[] = [];
  for (let i = 0; i < 20; i++) {
    const [job] = await h.engine.jobs.activate({
      ...ORG,
      domain: 'billing',
      ...(actions !== undefined && { actions }),
      worker: 'w',
      maxJobs: 1,
      lockDurationMs: 60_000,
    });
    if (job === undefined) return order;
    order.push(job.processInstanceId);
  }
  throw new Error('more jobs than the test started');
}

/** Starts `pid` with `priority` (0: none given), a second later than the one before. */
async function started(h: EngineHarness, pid: string, priority: number, data: Record<string, unknown>) {
  h.clock.advance(1000);
  const inst = await h.engine.start({ ...ORG, processId: pid, data, ...(priority !== 0 && { priority }) });
  return inst.processInstanceId;
}

t.test('jobs go highest priority first, across the actions asked for, oldest first within one', async (t) => {
  const h = await engineHarness(t);
  await registerDomain(h);
  const charge = await h.publish(chargeFlow());
  const refund = await h.publish(REFUND);
  const low = await started(h, charge, -5, { amount: 1 });
  const a = await started(h, charge, 0, { amount: 2 });
  const r = await started(h, refund, 3, { n: 1 });
  const b = await started(h, charge, 0, { amount: 3 });
  const urgent = await started(h, charge, 10, { amount: 4 });
  t.same(await drain(h, ['charge']), [urgent, a, b, low], 'one action: by priority, then by age');
  t.same(await drain(h, ['charge', 'refund']), [r], 'the refund was left');

  const h2 = await engineHarness(t);
  await registerDomain(h2);
  const charge2 = await h2.publish(chargeFlow());
  const refund2 = await h2.publish(REFUND);
  const c = await started(h2, charge2, 0, { amount: 1 });
  const r2 = await started(h2, refund2, 3, { n: 1 });
  t.same(await drain(h2, ['charge', 'refund']), [r2, c], 'a later action’s higher priority goes first');
});

t.test('a called flow’s job carries its caller’s priority', async (t) => {
  const h = await engineHarness(t);
  await registerDomain(h);
  const charge = await h.publish(chargeFlow());
  const caller = await h.publish(calls(charge));
  const plain = await started(h, charge, 0, { amount: 1 });
  const top = await started(h, caller, 4, {});
  const called = (await h.get(top)).variables.calledProcessInstanceId as string;
  await h.rest(); // the called execution starts in a step of its own
  t.equal((await h.get(called)).priority, 4, 'the called execution carries the priority');
  t.same(await drain(h), [called, plain], 'and its job goes first');
});

for (const from of ['the image', 'the indexes'] as const) {
  t.test(`cold jobs keep their priority over a restart read from ${from}`, async (t) => {
    const options = { executionCache: 0, cold: false, imageMin: 1 } as const;
    const h = await engineHarness(t, undefined, undefined, options);
    await registerDomain(h);
    const charge = await h.publish(chargeFlow());
    // A job of priority 0 first: the index's priority column is made at the second, filled in before it.
    const a = await started(h, charge, 0, { amount: 2 });
    const low = await started(h, charge, -2, { amount: 1 });
    const urgent = await started(h, charge, 7, { amount: 3 });
    const b = await started(h, charge, 0, { amount: 4 });
    const cold = () => [...h.engine.executions.coldIds()].length;
    await eventually('every execution out of memory', () => cold() === 4);
    const summary = h.store.evictable!.unread!.get(urgent)!.summary;
    t.match(summary.waits, [{ kind: 'job', priority: 7 }], 'the summary keeps the priority');
    t.notOk('priority' in h.store.evictable!.unread!.get(a)!.summary.waits[0]!, 'a priority of 0 is not written');
    await h.engine.close();
    await h.store.close();
    const image = join(h.dir, 'executions', IMAGE_NAME);
    t.ok(existsSync(image), 'the close left an image');
    if (from === 'the indexes') await rm(image);
    const h2 = await engineHarness(t, h.dir, h.clock, options);
    t.equal([...h2.engine.executions.coldIds()].length, 4, 'the restart leaves them cold');
    t.same(await drain(h2), [urgent, a, b, low]);
  });
}
