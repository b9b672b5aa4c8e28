import type { Test } from 'tap';
import { DaemonMetrics } from '../../src/daemon/observe/metrics.js';
import { taskOf, type TaskFilter, type WaitingTask } from '../../src/daemon/engine/tasks.js';
import { ExecutionTable } from '../../src/daemon/state/execution-table.js';
import type { JobQueues } from '../../src/daemon/state/job-queues.js';
import { LiveCounts } from '../../src/daemon/state/live-counts.js';
import { STATE, STATUS, type Execution, type WfxState } from '../../src/daemon/state/state.js';
import { executionTriggerHealth } from '../../src/daemon/triggers/health.js';
import { withCold, type MemoryCold } from './cold.js';
import { liveInstances } from './state.js';

// The full scans the derived indexes replaced (issue #60), kept here as oracles: a test compares
// what the reducer keeps with what a walk over every live execution gives.

/** Whether a running execution only waits (the scan metrics.ts made per scrape). */
export function waitingOnly(inst: Execution): boolean {
  let live = false;
  for (const id in inst.nodes) {
    const s = inst.nodes[id]!.statusCd;
    if (s === STATUS.ACTIVE) return false;
    if (s === STATUS.WAITING) live = true;
  }
  return live;
}

/** `wfx_executions_running` as the scrape's scan made it: flow -> [active, waiting]. */
export function runningByScan(state: WfxState): Map<string, [number, number]> {
  const counts = new Map<string, [number, number]>();
  for (const inst of liveInstances(state)) {
    if (inst.stateCd !== STATE.RUNNING) continue;
    let c = counts.get(inst.processId);
    if (!c) counts.set(inst.processId, (c = [0, 0]));
    if (waitingOnly(inst)) c[1]++;
    else c[0]++;
  }
  return counts;
}

/** The newest triggered start per `processId environment` among the live executions (trigger health's old walk). */
export function triggeredByScan(state: WfxState): Map<string, string> {
  const last = new Map<string, string>();
  for (const inst of Object.values(state.instances)) {
    if (inst?.triggeredBy === undefined) continue;
    const key = `${inst.processId} ${inst.environment}`;
    const seen = last.get(key);
    if (seen === undefined || inst.startTime > seen) last.set(key, inst.startTime);
  }
  return last;
}

/** The waiting jobs by a scan, as `org domain action key` in the executions' and nodes' order. */
export function jobsByScan(state: WfxState): string[] {
  const out: string[] = [];
  for (const inst of liveInstances(state))
    for (const id in inst.nodes) {
      const node = inst.nodes[id]!;
      if (node.statusCd === STATUS.WAITING && node.wait?.kind === 'job')
        out.push(`${inst.organization} ${node.wait.domain} ${node.wait.action} ${inst.processInstanceId}.${id}`);
    }
  return out;
}

/** The waiting jobs the index holds, in the same form (each action's queue in its order). */
export function jobsByIndex(queues: JobQueues): string[] {
  const out: string[] = [];
  for (const [org, domain] of queues.domains())
    for (const action of queues.actions(org, domain))
      for (const key of queues.queue(org, domain, action).keys()) out.push(`${org} ${domain} ${action} ${key}`);
  return out;
}

/** `wfx_executions_running` as a scrape gives it now: flow -> [active, waiting]. */
export async function runningByScrape(state: WfxState): Promise<Map<string, [number, number]>> {
  const metrics = new DaemonMetrics(state);
  const got = await metrics.registry.getSingleMetric('wfx_executions_running')!.get();
  const out = new Map<string, [number, number]>();
  for (const v of got.values) {
    const flow = String(v.labels.flow);
    let c = out.get(flow);
    if (!c) out.set(flow, (c = [0, 0]));
    c[v.labels.waiting === 'true' ? 1 : 0] = v.value;
  }
  return out;
}

const sorted = <T>(m: Map<string, T>) => [...m].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));

/**
 * Compares every kept answer with its scan over the live executions at `where`, the cold ones of
 * `cold` (the harness's) included. The live counts and job queues must be held already (made by a
 * walk, not by this read). `triggered`: the newest triggered starts this daemon has seen live
 * since it started (the scan's, added in), which trigger health must give (it keeps a start its
 * execution's archiving took from the scan).
 */
export async function compareWithScans(
  t: Test,
  state: WfxState,
  where: string,
  triggered: Map<string, string>,
  cold: MemoryCold | null,
): Promise<void> {
  const counts = LiveCounts.held(state);
  t.ok(counts, `${where}: live counts held`);
  const jobs = state.jobQueues;
  t.ok(jobs !== undefined, `${where}: job queues held`);
  if (!counts || !jobs) return;
  // The scans see every live execution; the kept answers are read from the daemon's own state.
  const whole = withCold(state, cold);
  const running = liveInstances(whole).filter((i) => i.stateCd === STATE.RUNNING);
  const orgs = new Map<string, number>();
  for (const i of running) orgs.set(i.organization, (orgs.get(i.organization) ?? 0) + 1);
  for (const [org, n] of orgs) t.equal(counts.organization(org), n, `${where}: organization ${org}`);
  for (const i of running) {
    const root = i.root ?? i.processInstanceId;
    const tree = running.filter((j) => (j.root ?? j.processInstanceId) === root).length;
    t.equal(counts.tree(i), tree, `${where}: tree of ${i.processInstanceId}`);
    const children = running.filter(
      (j) => j.parentInstanceId === i.processInstanceId && j.parentNodeInstanceId !== undefined,
    ).length;
    t.equal(counts.childrenOf(i.processInstanceId), children, `${where}: children of ${i.processInstanceId}`);
  }
  const byScan = runningByScan(whole);
  const kept = new Map([...counts.perFlow()].map(([f, [n, w]]) => [f, [n - w, w] as [number, number]]));
  t.same(sorted(kept), sorted(byScan), `${where}: running per flow, active and waiting`);
  t.same(sorted(await runningByScrape(state)), sorted(byScan), `${where}: wfx_executions_running scraped`);
  t.same(jobsByIndex(jobs).sort(), jobsByScan(whole).sort(), `${where}: waiting jobs`);
  for (const [key, at] of triggeredByScan(whole)) {
    const seen = triggered.get(key);
    if (seen === undefined || at > seen) triggered.set(key, at);
  }
  for (const h of executionTriggerHealth(state))
    t.equal(h.lastFire, triggered.get(`${h.processId} ${h.environment}`) ?? null, `${where}: lastFire ${h.processId}`);
}

/** The scan waitingTasks made before the index: every live execution and its node instances. */
export function tasksByScan(state: WfxState, filter: TaskFilter): { items: WaitingTask[]; nextCursor: string | null } {
  const key = (t: WaitingTask) => `${t.waitingSince}|${t.processInstanceId}|${t.nodeInstanceId}`;
  const found: WaitingTask[] = [];
  for (const inst of ExecutionTable.of(state).live()) {
    if (inst.stateCd !== STATE.RUNNING) continue;
    if (filter.organization !== null && inst.organization !== filter.organization) continue;
    if (filter.processId !== undefined && inst.processId !== filter.processId) continue;
    for (const node of Object.values(inst.nodes)) {
      const task = taskOf(state, inst, node);
      if (task && (filter.cursor === undefined || key(task) > filter.cursor)) found.push(task);
    }
  }
  found.sort((a, b) => (key(a) < key(b) ? -1 : 1));
  const items = found.slice(0, filter.limit);
  return { items, nextCursor: found.length > items.length ? key(items.at(-1)!) : null };
}
