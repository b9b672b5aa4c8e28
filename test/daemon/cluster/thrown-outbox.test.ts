import t, { type Test } from 'tap';
import type { ThrownEvent } from '../../../src/daemon/engine/engine-events.js';
import { engineCluster } from '../../../src/daemon/cluster/engine-part.js';
import type { ThrownPassing } from '../../../src/daemon/cluster/thrown-outbox.js';
import { STATE } from '../../../src/daemon/state/state.js';
import { catchFlow, engineHarness, TestClock, type EngineHarness } from '../../helpers/engine.js';
import { eventually } from '../../helpers/eventually.js';

/*
 * Events thrown kept until the other daemons sharing the database have them (decision 044). The
 * daemons are stood in for by `Passing`, which can refuse or hold what it is given; the real one
 * (cluster/fan-out.ts's deliverThrown) is tested across daemons in postgres-share-span.test and, with
 * a daemon killed in between, postgres-share-thrown.test.
 */

const THROW = `
processId: AUTO
name: Say paid
nodes:
  start: { type: startEvent, next: say }
  say: { type: intermediateThrowEvent, eventType: message, messageRef: paid, correlationKey: "{key}", data: { from: thrower }, next: done }
  done: { type: endEvent }
`;
const CATCH = catchFlow('paid');

/** The other daemons: what they were given, and whether they answer. */
class Passing implements ThrownPassing {
  readonly given: ThrownEvent[] = [];
  /** How many events were given with a delivery to what waits on this daemon. */
  withHere = 0;
  refuse = false;
  holding = true;

  async pass(event: ThrownEvent, here?: () => Promise<void>): Promise<void> {
    if (here) this.withHere++;
    await here?.();
    if (this.refuse) throw new Error('a daemon could not be reached');
    this.given.push(event);
  }

  holds(): boolean {
    return this.holding;
  }
}

async function setup(t: Test, passing = new Passing(), dir?: string, clock?: TestClock, cold = false) {
  const h = await engineHarness(t, dir, clock, { cold, cluster: engineCluster({ thrownPassing: passing }) });
  return { h, passing, thrower: await h.publish(THROW), catcher: await h.publish(CATCH) };
}

const kept = (h: EngineHarness) => Object.values(h.store.state.thrown);

t.test('an event thrown is kept until the other daemons have it, then forgotten', async (t) => {
  const { h, passing, thrower, catcher } = await setup(t);
  const here = await h.start(catcher, {}, { correlationKey: 'k' });
  const thrown = await h.start(thrower, { key: 'k' });
  t.equal(thrown.stateCd, STATE.COMPLETED);
  t.equal((await h.get(here.processInstanceId)).variables.from, 'thrower', 'what waits here is woken in the step');
  await eventually('given to the others', () => passing.given.length === 1);
  t.match(passing.given[0], {
    organization: 'default',
    eventType: 'paid',
    correlationKey: 'k',
    data: { from: 'thrower' },
  });
  await eventually('then forgotten', () => kept(h).length === 0);
});

t.test('an event thrown to executions here not in memory is given on to them by the outbox alone', async (t) => {
  const { h, passing, thrower, catcher } = await setup(t, new Passing(), undefined, undefined, true);
  const here = await h.start(catcher, {}, { correlationKey: 'k' });
  await h.rest();
  t.equal(h.store.state.instances[here.processInstanceId], undefined, 'the catcher is not in memory');
  await h.start(thrower, { key: 'k' });
  await eventually('given on', () => passing.given.length === 1);
  t.equal(passing.withHere, 1, 'with a delivery here: the step that threw it could not wake the catcher');
  await eventually('then forgotten', () => kept(h).length === 0);
  t.equal((await h.get(here.processInstanceId)).variables.from, 'thrower', 'the catcher, read back, has it');
});

t.test('an event given here once is given here again after partitions are taken', async (t) => {
  const passing = Object.assign(new Passing(), { refuse: true });
  const { h, thrower, catcher } = await setup(t, passing, undefined, undefined, true);
  await h.start(catcher, {}, { correlationKey: 'k' });
  await h.rest();
  await h.start(thrower, { key: 'k' });
  await eventually('given here, the others refusing', () => passing.withHere === 1);
  // A partition taken: what waits in it here has not had the event (Engine.adopt's passAll).
  await h.engine.adopt([]);
  await eventually('given here again', () => passing.withHere === 2);
  passing.refuse = false;
  await eventually('then forgotten', () => kept(h).length === 0, { withinMs: 10_000 });
});

t.test('an event the others could not be given is kept and given again', async (t) => {
  const { h, passing, thrower } = await setup(t);
  passing.refuse = true;
  await h.start(thrower, { key: 'k' });
  t.equal(kept(h).length, 1, 'kept');
  passing.refuse = false;
  await eventually('given once they answer', () => passing.given.length === 1, { withinMs: 10_000 });
  await eventually('then forgotten', () => kept(h).length === 0);
  t.equal(passing.given.length, 1, 'given once');
});

t.test('an event kept at a restart is given on, to what waits here too', async (t) => {
  const clock = new TestClock();
  const first = await setup(t, Object.assign(new Passing(), { refuse: true }), undefined, clock);
  await first.h.start(first.thrower, { key: 'k' });
  // A node that starts waiting after the throw was not woken by it here.
  const waiter = await first.h.start(first.catcher, {}, { correlationKey: 'k' });
  t.equal(waiter.stateCd, STATE.RUNNING);
  t.equal(kept(first.h).length, 1);
  await first.h.close();

  const passing = new Passing();
  const again = await engineHarness(t, first.h.dir, clock, { cluster: engineCluster({ thrownPassing: passing }) });
  await eventually('given to the others', () => passing.given.length === 1);
  t.equal(
    (await again.get(waiter.processInstanceId)).variables.from,
    'thrower',
    'the daemon that holds the thrower now also delivers it to what waits on itself',
  );
  await eventually('then forgotten', () => kept(again).length === 0);
});

t.test("an event whose thrower's partition this daemon no longer holds is left to its holder", async (t) => {
  const passing = Object.assign(new Passing(), { refuse: true });
  const { h, thrower } = await setup(t, passing);
  await h.start(thrower, { key: 'k' });
  passing.holding = false;
  passing.refuse = false;
  await h.close();
  const again = await engineHarness(t, h.dir, undefined, { cluster: engineCluster({ thrownPassing: passing }) });
  t.equal(kept(again).length, 1, 'still kept');
  t.equal(passing.given.length, 0, 'not given on by this daemon');
});

t.test('events kept by daemons that shared the database are dropped by one that shares nothing', async (t) => {
  const passing = Object.assign(new Passing(), { refuse: true });
  const { h, thrower } = await setup(t, passing);
  await h.start(thrower, { key: 'k' });
  await h.close();
  const alone = await engineHarness(t, h.dir);
  t.same(kept(alone), []);
});
