// A schedule's overlap (skip, buffer-one, cancel-other), its backfill (paced under allow, one at
// a time otherwise, kept over a restart), and pausing: over the engine, on the harness's clock.
import t from 'tap';
import type { Scheduler } from '../../../src/daemon/triggers/schedules.js';
import { STATE, STATUS, type Execution } from '../../../src/daemon/state/state.js';
import { SCHEDULED_FLOW, scheduler } from '../../helpers/scheduler.js';
import { engineHarness, type EngineHarness } from '../../helpers/engine.js';
import { liveInstances } from '../../helpers/state.js';
import { eventually } from '../../helpers/eventually.js';

/** The flow of these tests: every five minutes, each run waiting at an input node. */
const FLOW = (extra: string) => SCHEDULED_FLOW('*/5 * * * *', extra);

/** The executions of each flow seen so far (a restart's harness has not seen those before it). */
const seen = new Map<string, Set<string>>();

/** Every execution of `pid` (live or archived) as `<scheduledTime hh:mm> <state>`, by scheduled time. */
async function runsOf(h: EngineHarness, pid: string): Promise<string[]> {
  const word = (i: Execution) =>
    i.stateCd === STATE.RUNNING ? 'running' : i.stateCd === STATE.CANCELLED ? 'cancelled' : 'done';
  const ids = new Set(
    h.events.filter((e) => e.type === 'PROCESS_STARTED' && e.processId === pid).map((e) => e.processInstanceId),
  );
  for (const i of liveInstances(h.store.state)) if (i.processId === pid) ids.add(i.processInstanceId);
  const known = seen.get(pid) ?? new Set<string>();
  seen.set(pid, known);
  for (const id of ids) known.add(id);
  for (const id of known) ids.add(id);
  const runs = await Promise.all([...ids].map((id) => h.get(id)));
  return runs.map((i) => `${(i.variables.scheduledTime as string).slice(11, 16)} ${word(i)}`).sort();
}

/** Moves the clock `minutes` on to a fire time, and waits until the scheduler dealt with it (`fires`: it does). */
async function tick(h: EngineHarness, s: Scheduler, minutes: number, fires = true): Promise<void> {
  h.advance(minutes * 60_000);
  s.pokeTimers();
  const at = h.clock.now().toISOString();
  if (fires) await eventually(`the fire at ${at}`, () => s.health().some((x) => x.lastFire === at));
  await s.idle();
  await h.rest();
}

/** Answers every run of `pid` waiting at `ask`, then lets the turns their ends cause end. */
async function finishRunning(h: EngineHarness, s: Scheduler, pid: string): Promise<void> {
  for (const i of liveInstances(h.store.state).filter((x) => x.processId === pid && x.stateCd === STATE.RUNNING)) {
    const ask = Object.values(i.nodes).find((n) => n.nodeId === 'ask' && n.statusCd === STATUS.WAITING);
    if (ask)
      await h.engine.submitTask({
        organization: null,
        processInstanceId: i.processInstanceId,
        nodeId: 'ask',
        action: 'COMPLETE',
        data: { inputValue: 'x' },
      });
  }
  await h.rest();
  await s.idle();
  await h.rest();
}

t.test('skip: a fire while the last run runs starts nothing', async (t) => {
  const h = await engineHarness(t);
  const pid = await h.publish(FLOW(', overlap: skip'));
  const s = await scheduler(t, h);
  await tick(h, s, 5);
  await tick(h, s, 5);
  t.same(await runsOf(h, pid), ['10:05 running'], '10:10 skipped: 10:05 still runs');
  t.match(s.health()[0], { overlap: 'skip', waiting: 0, lastFire: '2026-11-21T10:10:00.000Z' });
  await finishRunning(h, s, pid);
  await tick(h, s, 5);
  t.same(await runsOf(h, pid), ['10:05 done', '10:15 running']);
});

t.test('buffer-one: one fire waits for the running run to end, the rest are dropped', async (t) => {
  const h = await engineHarness(t);
  const pid = await h.publish(FLOW(', overlap: buffer-one'));
  const s = await scheduler(t, h);
  await tick(h, s, 5);
  await tick(h, s, 5);
  await tick(h, s, 5);
  t.same(await runsOf(h, pid), ['10:05 running']);
  t.match(s.health()[0], { waiting: 1 });
  await finishRunning(h, s, pid);
  t.same(await runsOf(h, pid), ['10:05 done', '10:10 running'], 'the buffered fire starts as the run ends');
  t.match(s.health()[0], { waiting: 0 });
});

t.test('cancel-other: a fire cancels the run still running', async (t) => {
  const h = await engineHarness(t);
  const pid = await h.publish(FLOW(', overlap: cancel-other'));
  const s = await scheduler(t, h);
  await tick(h, s, 5);
  await tick(h, s, 5);
  t.same(await runsOf(h, pid), ['10:05 cancelled', '10:10 running']);
});

t.test('backfill: one execution per fire time; one at a time under skip, kept over a restart', async (t) => {
  let h = await engineHarness(t);
  const pid = await h.publish(FLOW(', overlap: skip'));
  let s = await scheduler(t, h);
  const times = await s.backfill(
    pid,
    'PRODUCTION',
    0,
    new Date('2026-11-21T08:00:00Z'),
    new Date('2026-11-21T08:14:59Z'),
  );
  t.same(times, ['2026-11-21T08:00:00.000Z', '2026-11-21T08:05:00.000Z', '2026-11-21T08:10:00.000Z']);
  await h.rest();
  t.same(await runsOf(h, pid), ['08:00 running'], 'the next waits for the first');
  await s.close();
  h = await h.restart();
  s = await scheduler(t, h);
  await finishRunning(h, s, pid);
  t.same(await runsOf(h, pid), ['08:00 done', '08:05 running'], 'after a restart, the next in turn');
  await finishRunning(h, s, pid);
  await finishRunning(h, s, pid);
  t.same(await runsOf(h, pid), ['08:00 done', '08:05 done', '08:10 done']);
  await t.rejects(
    s.backfill(pid, 'PRODUCTION', 0, new Date('2026-01-01T00:00:00Z'), new Date('2026-12-01T00:00:00Z')),
    { code: 'BACKFILL_TOO_LARGE' },
  );
});

t.test('backfill under allow: ten at once, the rest a turn later', async (t) => {
  const h = await engineHarness(t);
  const pid = await h.publish(FLOW(''));
  const s = await scheduler(t, h);
  const times = await s.backfill(
    pid,
    'PRODUCTION',
    0,
    new Date('2026-11-20T00:00:00Z'),
    new Date('2026-11-20T01:10:00Z'),
  );
  t.equal(times.length, 15);
  await h.rest();
  t.equal((await runsOf(h, pid)).length, 10, 'the first ten');
  // The pace is real time (a second): the rest start at the next turn.
  await eventually('the rest start', async () => (await runsOf(h, pid)).length === 15, { withinMs: 10_000 });
  await s.idle();
  t.same(
    (await runsOf(h, pid)).map((r) => r.slice(0, 5)),
    times.map((x) => x.slice(11, 16)),
    'each with its time, in order',
  );
});

t.test('a paused flow does not fire; resumed, it fires from then on', async (t) => {
  const h = await engineHarness(t);
  const pid = await h.publish(FLOW(''));
  const s = await scheduler(t, h);
  await h.store.commit({ type: 'flow.schedules', processId: pid, environment: 'PRODUCTION', on: false });
  await s.synced();
  t.match(s.health(), [{ state: 'disabled', nextFire: null }]);
  await tick(h, s, 30, false);
  t.same(await runsOf(h, pid), [], 'no fire while paused');
  await h.store.commit({ type: 'flow.schedules', processId: pid, environment: 'PRODUCTION', on: true });
  await s.synced();
  await tick(h, s, 5);
  t.same(await runsOf(h, pid), ['10:35 running'], 'the fires while paused are not made up for');
});

t.test('backfill under skip of runs that end at once: each starts as the one before ends', async (t) => {
  const h = await engineHarness(t);
  const pid = await h.publish(
    FLOW(', overlap: skip')
      .replace('next: ask', 'next: done')
      .replace(/  ask:.*\n/, ''),
  );
  const s = await scheduler(t, h);
  const times = await s.backfill(
    pid,
    'PRODUCTION',
    0,
    new Date('2026-11-21T08:00:00Z'),
    new Date('2026-11-21T08:20:00Z'),
  );
  t.equal(times.length, 5);
  await eventually('all five ran', async () => (await runsOf(h, pid)).length === 5, { withinMs: 10_000 });
  await s.idle();
  t.same(await runsOf(h, pid), ['08:00 done', '08:05 done', '08:10 done', '08:15 done', '08:20 done']);
});
