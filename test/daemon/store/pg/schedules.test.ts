import { randomUUID } from 'node:crypto';
import t from 'tap';
import { Engine } from '../../../../src/daemon/engine/engine.js';
import { publishFlow } from '../../../../src/daemon/flows/publish.js';
import { WFX_STORE, type WfxRecord } from '../../../../src/daemon/state/records.js';
import type { WfxState } from '../../../../src/daemon/state/state.js';
import { PgStore } from '../../../../src/daemon/store/pg/pg-store.js';
import { Scheduler } from '../../../../src/daemon/triggers/schedules.js';
import { validateFlowSource } from '../../../../src/shared/flow/validate.js';
import { TestClock } from '../../../helpers/engine.js';
import { eventually } from '../../../helpers/eventually.js';
import { POSTGRES_SKIP, queryAt, startPostgres } from '../../../helpers/postgres.js';
import { prng } from '../../../helpers/prng.js';
import { liveInstances } from '../../../helpers/state.js';

const PROCESS_ID = randomUUID();
const FLOW = `
processId: ${PROCESS_ID}
name: Every minute
triggers:
  - { type: schedule, cron: "* * * * *", missedRuns: all }
nodes:
  start: { type: startEvent, next: ask }
  ask: { type: inputNode, inputType: textbox, next: done }
  done: { type: endEvent }
`;

/** One daemon's store, engine and scheduler on the database, on the test's clock. */
interface Serving {
  readonly store: PgStore<WfxState, WfxRecord>;
  readonly scheduler: Scheduler;
  /** The scheduled times of the runs this daemon sees (started by it or by those before it). */
  runs(): string[];
  close(): Promise<void>;
}

// Every daemon of a database may fire a schedule, so a tick must fire once whichever daemon
// serves when it comes, across takeovers: a fire records its tick (`schedule.fired`) in the
// commit that starts its run, and a daemon that lost its lease commits nothing. Here the takeovers
// come at chosen moments on a test clock: right after a fire, with a fire in flight (its commit
// lands before the takeover or is fenced), and with ticks passing while no daemon serves (the
// next one makes them up). Every minute must have exactly one run at the end.
t.test('a schedule fires once per tick across takeovers', { skip: POSTGRES_SKIP }, async (t) => {
  const server = await startPostgres(t);
  const url = await server.createDatabase('schedules');
  const seed = Number(process.env.WFX_CHAOS_SEED ?? Math.floor(Math.random() * 1_000_000));
  t.comment(`seed ${seed} (WFX_CHAOS_SEED repeats a run)`);
  const random = prng(seed);
  const clock = new TestClock();
  const start = clock.ms;

  const open = async (owner: string): Promise<Serving> => {
    // A long lease: the takeovers below are made by hand, at chosen moments.
    const store = await PgStore.open<WfxState, WfxRecord>({
      connectionString: url,
      owner,
      leaseMs: 120_000,
      ...WFX_STORE,
    });
    const history = store.history();
    // A fenced daemon's errors are expected: its commits are refused.
    const engine = new Engine({ store, history, now: clock.now, onError: () => undefined });
    await engine.recover();
    const scheduler = new Scheduler({ store, engine, now: clock.now, onError: () => undefined });
    await scheduler.start();
    let closed = false;
    return {
      store,
      scheduler,
      runs: () =>
        liveInstances(store.state)
          .filter((i) => i.processId === PROCESS_ID)
          .map((i) => i.variables.scheduledTime as string),
      async close() {
        if (closed) return;
        closed = true;
        await scheduler.close();
        await engine.close().catch(() => undefined);
        await store.close({ checkpoint: false }).catch(() => undefined);
        await history.close().catch(() => undefined);
      },
    };
  };
  /** What a takeover does once a lease has lapsed: the epoch moves on, the old owner is fenced. */
  const lapse = () =>
    queryAt(
      url,
      "UPDATE wfx_partitions SET owner = 'gone', epoch = epoch + 1, lease_until = now() - interval '1 second'",
    );
  const minutesSoFar = () => Math.floor((clock.ms - start) / 60_000);
  const tick = async (daemon: Serving): Promise<void> => {
    clock.advance(60_000);
    daemon.scheduler.pokeTimers();
    await eventually('the tick fired', () => daemon.runs().length >= minutesSoFar());
  };

  let serving = await open('d0');
  t.teardown(() => serving.close());
  await serving.store.commit({ type: 'organization.created', name: 'default', at: clock.now().toISOString() });
  const flow = validateFlowSource(FLOW);
  if (!flow.ok) throw new Error(`the test flow does not validate: ${JSON.stringify(flow.problems)}`);
  await publishFlow(serving.store, {
    definition: flow.flow,
    organization: 'default',
    environment: 'PRODUCTION',
    now: clock.now(),
  });
  await serving.scheduler.synced();

  const modes: string[] = [];
  let fenced = 0;
  let landed = 0;
  for (let round = 1; round <= 12; round++) {
    const ticks = 1 + Math.floor(random() * 3);
    for (let i = 0; i < ticks; i++) await tick(serving);
    const old = serving;
    const mode = (['after a fire', 'a fire in flight', 'ticks while none serves'] as const)[Math.floor(random() * 3)]!;
    modes.push(mode);
    if (mode === 'a fire in flight') {
      clock.advance(60_000);
      old.scheduler.pokeTimers(); // its fire races the takeover below
      await lapse();
    } else {
      await lapse();
      if (mode === 'ticks while none serves') clock.advance((1 + Math.floor(random() * 3)) * 60_000);
    }
    serving = await open(`d${round}`);
    await old.scheduler.idle();
    if (mode === 'a fire in flight') {
      if (old.store.failed) {
        t.equal(old.store.failed.code, 'STORE_LEASE_LOST', 'a fire that lost the race is fenced');
        fenced++;
      } else landed++;
    }
    await old.close();
    await eventually('the new daemon made up what it missed', () => serving.runs().length >= minutesSoFar());
    await serving.scheduler.idle();
  }
  await tick(serving);

  const runs = serving.runs().sort();
  const every = Array.from({ length: minutesSoFar() }, (_, i) => new Date(start + (i + 1) * 60_000).toISOString());
  t.same(runs, every, `each of ${every.length} ticks fired once over 12 takeovers (${modes.join(', ')})`);
  t.comment(`fires in flight at a takeover: ${fenced} fenced (made up by the next daemon), ${landed} landed first`);
  await serving.close();
});
