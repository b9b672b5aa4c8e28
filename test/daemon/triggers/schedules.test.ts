import { liveInstances } from '../../helpers/state.js';
import t from 'tap';
import { activateVersion } from '../../../src/daemon/flows/publish.js';
import { SCHEDULED_FLOW, scheduler } from '../../helpers/scheduler.js';
import { engineHarness, type EngineHarness } from '../../helpers/engine.js';

const FLOW = SCHEDULED_FLOW;

/** The scheduledTime of every run of `pid`, in start order, once there are at least `n`. */
async function runs(h: EngineHarness, pid: string, n: number): Promise<string[]> {
  const count = () => h.events.filter((e) => e.type === 'PROCESS_STARTED' && e.processId === pid).length;
  if (count() < n) await h.waitFor((e) => e.type === 'PROCESS_STARTED' && e.processId === pid && count() >= n);
  return liveInstances(h.store.state)
    .filter((i) => i.processId === pid)
    .map((i) => i.variables.scheduledTime as string)
    .sort();
}

t.test('a schedule fires at each match of its expression, with {scheduledTime}; its health says when', async (t) => {
  const h = await engineHarness(t);
  const pid = await h.publish(FLOW('*/5 * * * *'));
  const s = await scheduler(t, h);
  t.match(s.health(), [
    {
      type: 'schedule',
      processId: pid,
      environment: 'PRODUCTION',
      state: 'active',
      lastFire: null,
      nextFire: '2026-11-21T10:05:00.000Z',
      nextFires: [
        '2026-11-21T10:05:00.000Z',
        '2026-11-21T10:10:00.000Z',
        '2026-11-21T10:15:00.000Z',
        '2026-11-21T10:20:00.000Z',
        '2026-11-21T10:25:00.000Z',
      ],
    },
  ]);
  h.clock.advance(5 * 60_000);
  s.pokeTimers();
  t.same(await runs(h, pid, 1), ['2026-11-21T10:05:00.000Z']);
  h.clock.advance(5 * 60_000);
  s.pokeTimers();
  t.same(await runs(h, pid, 2), ['2026-11-21T10:05:00.000Z', '2026-11-21T10:10:00.000Z']);
  await s.idle();
  t.match(s.health()[0], { lastFire: '2026-11-21T10:10:00.000Z', nextFire: '2026-11-21T10:15:00.000Z' });
  t.equal(h.store.state.instances[Object.keys(h.store.state.instances)[0]!]!.variables.triggerType, 'schedule');
});

for (const [policy, want] of [
  ['skip', []],
  ['last', ['2026-11-21T11:00:00.000Z']],
  [
    'all',
    Array.from({ length: 12 }, (_, i) => new Date(Date.parse('2026-11-21T10:05:00Z') + i * 300_000).toISOString()),
  ],
] as const) {
  t.test(`runs missed while the daemon was down: missedRuns ${policy}`, async (t) => {
    let h = await engineHarness(t);
    const pid = await h.publish(FLOW('*/5 * * * *', `, missedRuns: ${policy}`));
    const first = await scheduler(t, h);
    await first.close();
    await h.close();
    h.clock.advance(60 * 60_000 + 30_000); // down from 10:00 to 11:00:30: twelve fire times pass
    h = await h.restart();
    const s = await scheduler(t, h);
    const got = want.length === 0 ? [] : await runs(h, pid, want.length);
    t.same(got, want);
    t.match(s.health()[0], { nextFire: '2026-11-21T11:05:00.000Z' });
    t.equal(liveInstances(h.store.state).length, want.length, 'nothing more');
  });
}

t.test('at most 100 missed runs are made up for', async (t) => {
  let h = await engineHarness(t);
  const pid = await h.publish(FLOW('* * * * *', ', missedRuns: all'));
  await (await scheduler(t, h)).close();
  await h.close();
  h.clock.advance(24 * 60 * 60_000);
  h = await h.restart();
  await scheduler(t, h);
  const got = await runs(h, pid, 100);
  t.equal(got.length, 100);
  t.equal(got.at(-1), '2026-11-22T10:00:00.000Z', 'the latest ones');
});

t.test('a restart right after a fire does not fire it again', async (t) => {
  let h = await engineHarness(t);
  const pid = await h.publish(FLOW('*/5 * * * *', ', missedRuns: all'));
  const s = await scheduler(t, h);
  h.clock.advance(5 * 60_000);
  s.pokeTimers();
  await runs(h, pid, 1);
  await s.close();
  h = await h.restart();
  const again = await scheduler(t, h);
  t.match(again.health()[0], { lastFire: '2026-11-21T10:05:00.000Z', nextFire: '2026-11-21T10:10:00.000Z' });
  t.equal(liveInstances(h.store.state).filter((i) => i.processId === pid).length, 1, 'one run, not two');
});

t.test('activating a version re-arms its schedules; a version without them stops them', async (t) => {
  const h = await engineHarness(t);
  const pid = await h.publish(FLOW('0 9 * * *'));
  const s = await scheduler(t, h);
  t.match(s.health(), [{ cron: '0 9 * * *', version: '1', nextFire: '2026-11-22T09:00:00.000Z' }]);
  await h.publish(FLOW('30 12 * * *', ', timezone: Europe/Berlin').replace(/processId: AUTO/, `processId: ${pid}`));
  await s.synced();
  t.match(
    s.health(),
    [{ cron: '30 12 * * *', timezone: 'Europe/Berlin', version: '2', nextFire: '2026-11-21T11:30:00.000Z' }],
    'the new expression, in its zone',
  );
  await h.publish(
    FLOW('0 9 * * *')
      .replace(/triggers:\n.*\n/, '')
      .replace(/processId: AUTO/, `processId: ${pid}`),
  );
  await s.synced();
  t.same(s.health(), [], 'no schedule once the active version has none');
  await activateVersion(h.store, { processId: pid, organization: 'default', environment: 'PRODUCTION', version: '1' });
  await s.synced();
  t.match(s.health(), [{ version: '1' }], 'rolling back re-arms it');
});

t.test('schedules are checked at publish: five fields, a known zone', async (t) => {
  const h = await engineHarness(t);
  await t.rejects(h.publish(FLOW('*/5 * * *')), /BAD_SCHEDULE[\s\S]*five fields/);
  await t.rejects(h.publish(FLOW('*/5 * * * *', ', timezone: Mars/Olympus')), /BAD_SCHEDULE[\s\S]*IANA/);
});

t.test(
  'a schedule re-activated after a while fires from then on: the time it was inactive is not made up for',
  async (t) => {
    const h = await engineHarness(t);
    const pid = await h.publish(FLOW('0 * * * *', ', missedRuns: all'));
    const s = await scheduler(t, h);
    await h.publish(
      FLOW('0 * * * *')
        .replace(/triggers:\n.*\n/, '')
        .replace(/processId: AUTO/, `processId: ${pid}`),
    );
    await s.synced();
    t.same(s.health(), []);
    h.clock.advance(10 * 3_600_000);
    await activateVersion(h.store, {
      processId: pid,
      organization: 'default',
      environment: 'PRODUCTION',
      version: '1',
    });
    await s.synced();
    await s.idle();
    t.equal(
      liveInstances(h.store.state).filter((i) => i.processId === pid).length,
      0,
      'no run for the ten inactive hours',
    );
    t.match(s.health(), [{ nextFire: '2026-11-21T21:00:00.000Z' }]);
  },
);

t.test("a fire whose start data the flow's inputs refuse starts nothing; its health says why", async (t) => {
  const h = await engineHarness(t);
  const inputs = (properties: string) =>
    `inputs: { type: object, additionalProperties: false, properties: { ${properties} } }\nnodes:`;
  // What a schedule gives, but not as the inputs take it: a publish cannot tell (a time is a string).
  const refusing = await h.publish(
    FLOW('*/5 * * * *').replace('nodes:', inputs('scheduledTime: { type: number }, triggerType: { type: string }')),
  );
  const taking = await h.publish(
    FLOW('*/5 * * * *').replace(
      'nodes:',
      inputs(
        'scheduledTime: { type: string }, triggerType: { const: schedule }, shift: { type: string, default: day }',
      ),
    ),
  );
  const s = await scheduler(t, h);
  h.clock.advance(5 * 60_000);
  s.pokeTimers();
  await runs(h, taking, 1);
  await s.idle();
  t.equal(liveInstances(h.store.state).filter((i) => i.processId === refusing).length, 0, 'nothing started');
  t.match(
    s.health().find((x) => x.processId === refusing),
    {
      state: 'failing',
      lastFire: '2026-11-21T10:05:00.000Z',
      lastError: /^1 of 1 runs could not start at .*: VALIDATION_ERROR: data\.scheduledTime /,
    },
  );
  const [run] = liveInstances(h.store.state).filter((i) => i.processId === taking);
  t.same(
    run!.variables,
    { scheduledTime: '2026-11-21T10:05:00.000Z', triggerType: 'schedule', shift: 'day' },
    'inputs that take the schedule variables: the run starts, defaults filled in',
  );
  t.match(
    s.health().find((x) => x.processId === taking),
    { state: 'active', lastError: null },
  );
});
