import t, { type Test } from 'tap';
import { partitionOf } from '../../../src/daemon/state/ids.js';
import { waitingTasks } from '../../../src/daemon/engine/tasks.js';
import { Executions } from '../../../src/daemon/state/executions.js';
import { ExecutionTable } from '../../../src/daemon/state/execution-table.js';
import { DERIVED, initialState, STATE, STATUS, type WfxState } from '../../../src/daemon/state/state.js';
import { TaskIndex } from '../../../src/daemon/state/task-index.js';
import { replacePartition } from '../../../src/daemon/store/pg/partition-state.js';
import { withCold, type MemoryCold } from '../../helpers/cold.js';
import { engineHarness, type EngineHarness } from '../../helpers/engine.js';
import { eventually } from '../../helpers/eventually.js';
import { tasksByScan } from '../../helpers/derived-oracle.js';
import { prng as random } from '../../helpers/prng.js';

// The task index (state/task-index.ts) answers GET /process/tasks and the task gauges. Its
// answers must be the full scan's it replaced: the scan is kept below as the oracle, and both
// are compared after a random mix of starts, answers, cancels, timeouts, messages, a restart
// and a partition replaced.

/** The gauges' old scan: input waits of running executions, and the oldest one's start. */
function scanGauges(state: WfxState): { count: number; oldest: string | null } {
  let count = 0;
  let oldest: string | null = null;
  for (const inst of ExecutionTable.of(state).live()) {
    if (inst.stateCd !== STATE.RUNNING) continue;
    for (const node of Object.values(inst.nodes))
      if (node.wait?.kind === 'input') {
        count++;
        if (oldest === null || Date.parse(node.startTime) < Date.parse(oldest)) oldest = node.startTime;
      }
  }
  return { count, oldest };
}

const FLOWS = {
  ask: `
processId: AUTO
name: Ask
nodes:
  start: { type: startEvent, next: ask }
  ask: { type: inputNode, inputType: textbox, timeout: 2h, next: done }
  done: { type: endEvent }
`,
  both: `
processId: AUTO
name: Both
nodes:
  start: { type: startEvent, next: split }
  split: { type: parallelGateway, next: [a, b, paid] }
  a: { type: inputNode, inputType: textbox, next: join }
  b: { type: userTask, name: Check, fields: [{ name: ok, type: boolean }], next: join }
  remind: { type: boundaryEvent, event: timer, duration: 10m, attachedTo: b, cancelActivity: false, next: noted }
  noted: { type: endEvent }
  late: { type: boundaryEvent, event: timer, duration: 30m, attachedTo: a, next: gaveUp }
  gaveUp: { type: endEvent }
  paid: { type: intermediateCatchEvent, eventType: message, messageRef: paid, next: join }
  join: { type: parallelGateway, next: done }
  done: { type: endEvent }
`,
  nap: `
processId: AUTO
name: Nap
nodes:
  start: { type: startEvent, next: wait }
  wait: { type: intermediateCatchEvent, eventType: message, messageRef: paid, next: done }
  done: { type: endEvent }
`,
};

/** An answer or cancel the engine refused with a code (a node that stopped waiting meanwhile): part of the mix. */
function refused(err: unknown): void {
  if (typeof (err as { code?: unknown }).code !== 'string') throw err;
}

/**
 * A state the task list reads: the daemon's own (its executions read through `executions`, cold
 * ones read back a page at a time), the cold side the oracles see through, and how the harness
 * lets trees at rest go cold again.
 */
interface Side {
  readonly state: WfxState;
  readonly executions: Executions;
  readonly cold: MemoryCold | null;
  readonly rest: () => Promise<void>;
}

const sideOf = (h: EngineHarness): Side => ({
  state: h.store.state,
  executions: h.engine.executions,
  cold: h.cold,
  rest: () => h.rest(),
});

/** Every page of every filter, walked with its cursors, from the index and from the scan. */
async function compare(t: Test, side: Side, pids: readonly string[], what: string): Promise<void> {
  const { state, executions } = side;
  for (const organization of [null, 'default', 'other']) {
    for (const processId of [undefined, ...pids, 'no-such-flow']) {
      for (const limit of [1, 3, 50]) {
        // Trees at rest go cold before each walk (WFX_TEST_COLD=1): its pages read them back.
        await side.rest();
        const filter = { organization, limit, ...(processId !== undefined && { processId }) };
        let cursor: string | undefined;
        for (let page = 0; page < 200; page++) {
          const f = { ...filter, ...(cursor !== undefined && { cursor }) };
          const got = await waitingTasks(state, executions, f);
          const want = tasksByScan(withCold(state, side.cold), f);
          if (JSON.stringify(got) !== JSON.stringify(want)) {
            t.same(got, want, `${what}: ${JSON.stringify(f)}`);
            return;
          }
          if (want.nextCursor === null) break;
          cursor = want.nextCursor;
        }
      }
    }
  }
  await side.rest();
  const index = TaskIndex.of(state);
  const gauges = scanGauges(withCold(state, side.cold));
  t.same({ count: index.size, oldest: index.oldestSince() }, gauges, `${what}: the gauges' figures`);
  t.pass(`${what}: every page as the scan's (${gauges.count} tasks)`);
}

t.test(
  'the task index pages as the full scan did, through a random mix, a restart and a partition replaced',
  async (t) => {
    let h: EngineHarness = await engineHarness(t);
    const pids = [await h.publish(FLOWS.ask), await h.publish(FLOWS.both), await h.publish(FLOWS.nap)];
    const rand = random(60);
    const pick = <T>(list: readonly T[]): T | undefined => list[Math.floor(rand() * list.length)];
    // Cold executions included (copies), so that the mix is the same with WFX_TEST_COLD=1.
    const running = () =>
      [...ExecutionTable.of(withCold(h.store.state, h.cold)).live()].filter(
        (i) => i.stateCd === STATE.RUNNING && i.parentInstanceId === null,
      );
    let earlier: { partition: number; saved: unknown } | null = null;
    for (let op = 0; op < 160; op++) {
      const r = rand();
      if (r < 0.55) {
        await h.start(pick(pids)!, {}, { correlationKey: `k${op % 5}` });
      } else if (r < 0.75) {
        const waiting = running().flatMap((i) =>
          Object.values(i.nodes)
            .filter((n) => n.statusCd === STATUS.WAITING && n.wait?.kind === 'input')
            .map((n) => ({ i, n })),
        );
        const task = pick(waiting);
        const data = task?.n.nodeType === 'userTask' ? { ok: true } : { inputValue: 'x' };
        if (task)
          await h.engine
            .submitTask({
              organization: 'default',
              processInstanceId: task.i.processInstanceId,
              nodeId: task.n.nodeId,
              action: rand() < 0.8 ? 'COMPLETE' : 'CANCEL',
              data,
            })
            .catch(refused);
      } else if (r < 0.8) {
        const inst = pick(running());
        if (inst)
          await h.engine.cancel({ organization: 'default', processInstanceId: inst.processInstanceId }).catch(refused);
      } else if (r < 0.9) {
        await h.engine
          .publishEvent({ organization: 'default', eventType: 'paid', correlationKey: `k${op % 5}`, data: {} })
          .catch(refused);
      } else {
        // Mostly ten minutes (reminders fire), at times an hour (the two-hour timeouts of some).
        h.advance(rand() < 0.8 ? 10 * 60_000 : 60 * 60_000);
        const now = h.clock.ms;
        await eventually('the overdue input timeouts fired', () =>
          running().every((i) =>
            Object.values(i.nodes).every(
              (n) => n.wait?.kind !== 'input' || n.wait.dueAt === null || Date.parse(n.wait.dueAt) > now,
            ),
          ),
        );
      }
      h.clock.advance(1000);
      if (op % 20 === 19) await compare(t, sideOf(h), pids, `after op ${op}`);
      if (op === 80) {
        h = await h.restart();
        await compare(t, sideOf(h), pids, 'after the restart');
      }
      if (op === 100) {
        // An earlier copy of partition 1's executions (of 4), loaded back at the end.
        const partition = 1;
        const instances: Record<string, unknown> = {};
        for (const inst of ExecutionTable.of(withCold(h.store.state, h.cold)).live())
          if (partitionOf(inst.processInstanceId, 4) === partition) instances[inst.processInstanceId] = inst;
        earlier = { partition, saved: JSON.parse(JSON.stringify({ instances })) };
      }
    }
    await compare(t, sideOf(h), pids, 'at the end of the mix');
    t.ok(TaskIndex.of(h.store.state).size > 0, 'some tasks wait at the end');
    // The partition replaced on a copy of the state (the engine keeps running on its own), every
    // execution resident in it.
    const state = JSON.parse(JSON.stringify(withCold(h.store.state, h.cold))) as WfxState;
    TaskIndex.of(state);
    const layout = {
      count: 4,
      collection: { key: 'instances', touched: () => {} },
      initialState,
      derived: DERIVED,
    };
    replacePartition(state, layout, earlier!.partition, earlier!.saved);
    t.equal(state.taskIndex, undefined, 'the index is reset with the executions replaced');
    await compare(
      t,
      { state, executions: new Executions(state), cold: null, rest: () => Promise.resolve() },
      pids,
      'after a partition was replaced',
    );
  },
);

t.test('a page whose task stops waiting while its tree is read back is filled from after it', async (t) => {
  const h = await engineHarness(t, undefined, undefined, { cold: true });
  const ask = await h.publish(FLOWS.ask);
  const ids: string[] = [];
  for (let i = 0; i < 3; i++) {
    ids.push((await h.start(ask)).processInstanceId);
    h.clock.advance(1000);
  }
  await h.rest();
  t.equal(h.cold!.size, 3, 'the three wait cold');
  // The answer reads its tree back first, so it is given before the page renders its tasks.
  const answered = h.engine.submitTask({
    organization: 'default',
    processInstanceId: ids[0]!,
    nodeId: 'ask',
    action: 'COMPLETE',
    data: { inputValue: 'x' },
  });
  const page = await waitingTasks(h.store.state, h.engine.executions, { organization: 'default', limit: 1 });
  await answered;
  t.same(
    page.items.map((i) => i.processInstanceId),
    [ids[1]],
    'the answered task is left out, the next one listed',
  );
  t.not(page.nextCursor, null, 'and the page says a third one follows');
  const rest = await waitingTasks(h.store.state, h.engine.executions, {
    organization: 'default',
    limit: 1,
    cursor: page.nextCursor!,
  });
  t.same(
    rest.items.map((i) => i.processInstanceId),
    [ids[2]],
    'the next page lists it',
  );
  t.equal(rest.nextCursor, null);
});
