import t from 'tap';
import { randomUUID } from 'node:crypto';
import { LiveCounts } from '../../../src/daemon/state/live-counts.js';
import { applyRecord, type WfxRecord } from '../../../src/daemon/state/records.js';
import { nodeRan } from '../../../src/daemon/state/records/nodes.js';
import { initialState, STATE, STATUS, type WfxState } from '../../../src/daemon/state/state.js';
import { runningByScan } from '../../helpers/derived-oracle.js';
import { applyStart, liveInstances } from '../../helpers/state.js';
import { prng as random } from '../../helpers/prng.js';

// The running counts per flow that wfx_executions_running reads (active, or only waiting), kept
// by the reducer through every node status change, against the scan the scrape made, after
// each record of a seeded random mix, nodes left active included (an engine at rest has none);
// and the counts a load makes from the executions (LiveCounts.of) against those kept.

const sorted = <T>(m: Iterable<[string, T]>) => [...m].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));

/** The kept counts of `state` as the scan gives them: flow -> [active, waiting]. */
const kept = (counts: LiveCounts) => sorted([...counts.perFlow()].map(([f, [n, w]]) => [f, [n - w, w]] as const));

t.test('running and waiting-only counts per flow follow every record as the scan would', async (t) => {
  let state: WfxState = initialState();
  LiveCounts.of(state);
  const next = random(60);
  const pick = <T>(xs: readonly T[]): T | undefined => xs[Math.floor(next() * xs.length)];
  let ms = Date.parse('2026-11-26T10:00:00.000Z');
  let checks = 0;
  let waitingSeen = 0;
  for (let step = 0; step < 2000; step++) {
    const at = new Date((ms += 1000)).toISOString();
    const insts = liveInstances(state);
    const inst = pick(insts);
    const nodes = inst ? Object.values(inst.nodes) : [];
    const live = nodes.filter((n) => n.statusCd === STATUS.ACTIVE || n.statusCd === STATUS.WAITING);
    const roll = next();
    let r: WfxRecord | null = null;
    if (step === 1000) {
      // A restart: the state loaded from its JSON, its counts made afresh from the executions.
      const before = kept(LiveCounts.held(state)!);
      state = JSON.parse(JSON.stringify(state)) as WfxState;
      t.equal(LiveCounts.held(state), null, 'no counts in a loaded state');
      t.same(kept(LiveCounts.of(state)), before, 'made from the executions: the same');
      continue;
    }
    let what = 'nothing';
    if (!inst || roll < 0.15) {
      applyStart(state, randomUUID(), at, { processId: pick(['p1', 'p2', 'p3'])! });
      what = 'start';
    } else if (roll < 0.35) {
      r = {
        type: 'node.entered',
        instanceId: inst.processInstanceId,
        nodeInstanceId: `n${inst.nodeCount + 1}`,
        nodeId: 'a',
        at,
      };
    } else if (roll < 0.4) {
      r = nodeRan(inst.processInstanceId, `n${inst.nodeCount + 1}`, 'b', at);
    } else if (roll < 0.55) {
      const node = pick(live);
      if (node)
        r = {
          type: 'node.waiting',
          instanceId: inst.processInstanceId,
          nodeInstanceId: node.id,
          at,
          wait: { kind: 'timer', dueAt: at },
        };
    } else if (roll < 0.65) {
      const node = pick(nodes.filter((n) => n.statusCd === STATUS.WAITING));
      if (node) r = { type: 'node.working', instanceId: inst.processInstanceId, nodeInstanceId: node.id, at };
    } else if (roll < 0.75) {
      const node = pick(live);
      if (node) r = { type: 'node.completed', instanceId: inst.processInstanceId, nodeInstanceId: node.id, at };
    } else if (roll < 0.82) {
      const node = pick(live);
      const statusCd = pick([STATUS.FAILED, STATUS.CANCELLED, STATUS.TIMED_OUT] as const)!;
      if (node)
        r = {
          type: 'node.left',
          instanceId: inst.processInstanceId,
          nodeInstanceId: node.id,
          statusCd,
          at,
          reason: 'x',
        };
    } else if (roll < 0.9) {
      const stateCd = pick([STATE.COMPLETED, STATE.FAILED, STATE.CANCELLED] as const)!;
      if (inst.stateCd === STATE.RUNNING)
        r = { type: 'instance.finished', instanceId: inst.processInstanceId, stateCd, at };
    } else if (roll < 0.95) {
      const error = { code: 'X', message: 'x', nodeId: null };
      if (inst.stateCd === STATE.FAILED)
        r = { type: 'instance.revived', instanceId: inst.processInstanceId, at, by: 'op', error } as WfxRecord;
      const node = nodes.find((n) => n.statusCd === STATUS.FAILED);
      if (node && inst.stateCd === STATE.RUNNING)
        r = { type: 'node.revived', instanceId: inst.processInstanceId, nodeInstanceId: node.id, at };
    } else if (inst.stateCd !== STATE.RUNNING) {
      r = { type: 'instance.archived', instanceId: inst.processInstanceId };
    }
    if (r) {
      applyRecord(state, r);
      what = r.type;
    }
    const counts = LiveCounts.held(state)!;
    t.same(kept(counts), sorted(runningByScan(state)), `after step ${step} (${what})`);
    checks++;
    waitingSeen += [...counts.perFlow()].reduce((n, [, [, w]]) => n + w, 0);
  }
  t.ok(checks > 1000, 'compared after most records');
  t.ok(waitingSeen > 0, 'the mix had executions that only wait');
  t.ok(
    [...LiveCounts.held(state)!.perFlow()].some(([, [n, w]]) => n > w),
    'and executions with an active node',
  );
});
