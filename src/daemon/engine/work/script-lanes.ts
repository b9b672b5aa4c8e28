/**
 * The queue of the script sandbox (script.ts), fair between organizations: one lane per
 * organization, and within it one queue per execution. The next run is taken from the
 * organization that holds the fewest workers (the one served least recently on a tie), and
 * within it from its executions in turn, the highest priority first (a start's `priority`); so an
 * organization that keeps every worker busy cannot keep another's script waiting behind its
 * queue, nor one execution (a parallel loop) another's of its priority.
 * A lane exists only while it has runs queued or running.
 */

/** An organization's share of the pool. */
interface Lane<T> {
  readonly organization: string;
  /** Runs of this organization on a worker now. */
  running: number;
  /** When this lane was last served (ScriptLanes.turn), for the round-robin between equals. */
  served: number;
  /** Queued runs by execution; the first execution is served next, then moves to the end. */
  readonly executions: Map<string, T[]>;
  /** The priority of each execution with queued runs that has one (absent: 0). */
  readonly priorities: Map<string, number>;
  queued: number;
}

/** Where a run queues: its organization and (within it) its execution. */
export interface LaneKey {
  readonly organization: string;
  readonly execution: string;
  /** Its execution's priority (higher first within the organization; absent: 0). */
  readonly priority?: number;
}

/** Queued and running runs by organization and execution; see the file's comment. */
export class ScriptLanes<T> {
  private readonly lanes = new Map<string, Lane<T>>();
  private turn = 0;
  private queuedCount = 0;

  /** Runs queued (not yet taken), over every lane. */
  get queued(): number {
    return this.queuedCount;
  }

  /** Queues `item` at the end of its execution's queue. */
  push(item: T, key: LaneKey): void {
    const lane = this.laneOf(key.organization);
    const queue = lane.executions.get(key.execution);
    if (queue) queue.push(item);
    else lane.executions.set(key.execution, [item]);
    if (key.priority !== undefined && key.priority !== 0) lane.priorities.set(key.execution, key.priority);
    lane.queued++;
    this.queuedCount++;
  }

  /** Takes `item` out of the queue (a cancelled run); false when it was not queued. */
  remove(item: T, key: LaneKey): boolean {
    const lane = this.lanes.get(key.organization);
    const queue = lane?.executions.get(key.execution);
    const i = queue ? queue.indexOf(item) : -1;
    if (!lane || !queue || i < 0) return false;
    queue.splice(i, 1);
    if (queue.length === 0) {
      lane.executions.delete(key.execution);
      lane.priorities.delete(key.execution);
    }
    lane.queued--;
    this.queuedCount--;
    this.drop(lane);
    return true;
  }

  /**
   * How many workers the organization served next holds (fewest of any with runs queued), or
   * undefined when nothing is queued. Pure.
   */
  nextHolds(): number | undefined {
    return this.next()?.running;
  }

  /** Takes the next run (see the file's comment) and counts it as running; undefined when none is queued. */
  take(): { readonly item: T; readonly organization: string } | undefined {
    const lane = this.next();
    if (!lane) return undefined;
    const execution =
      lane.priorities.size === 0 ? (lane.executions.keys().next().value as string) : firstOfHighest(lane);
    const queue = lane.executions.get(execution)!;
    const item = queue.shift() as T;
    lane.executions.delete(execution);
    if (queue.length > 0)
      lane.executions.set(execution, queue); // its turn again after the others
    else lane.priorities.delete(execution);
    lane.queued--;
    this.queuedCount--;
    lane.running++;
    lane.served = ++this.turn;
    return { item, organization: lane.organization };
  }

  /** A run of `organization` that take() gave left its worker. */
  finished(organization: string): void {
    const lane = this.lanes.get(organization);
    if (!lane || lane.running === 0) return;
    lane.running--;
    this.drop(lane);
  }

  /** Runs on a worker now, for `organization` (for tests). */
  running(organization: string): number {
    return this.lanes.get(organization)?.running ?? 0;
  }

  /** Every queued run, the lanes emptied (running counts are kept until finished()). */
  drain(): T[] {
    const all: T[] = [];
    for (const lane of this.lanes.values()) {
      for (const queue of lane.executions.values()) all.push(...queue);
      lane.executions.clear();
      lane.priorities.clear();
      lane.queued = 0;
    }
    this.queuedCount = 0;
    for (const lane of [...this.lanes.values()]) this.drop(lane);
    return all;
  }

  private next(): Lane<T> | undefined {
    let best: Lane<T> | undefined;
    for (const lane of this.lanes.values()) {
      if (lane.queued === 0) continue;
      if (!best || lane.running < best.running || (lane.running === best.running && lane.served < best.served))
        best = lane;
    }
    return best;
  }

  private laneOf(organization: string): Lane<T> {
    let lane = this.lanes.get(organization);
    if (!lane) {
      lane = { organization, running: 0, served: 0, executions: new Map(), priorities: new Map(), queued: 0 };
      this.lanes.set(organization, lane);
    }
    return lane;
  }

  private drop(lane: Lane<T>): void {
    if (lane.running === 0 && lane.queued === 0) this.lanes.delete(lane.organization);
  }
}

/** The execution of `lane` served next: the first, in turn order, of the highest priority. */
function firstOfHighest<T>(lane: Lane<T>): string {
  let best: string | undefined;
  let bestPriority = -Infinity;
  for (const execution of lane.executions.keys()) {
    const p = lane.priorities.get(execution) ?? 0;
    if (p > bestPriority) {
      best = execution;
      bestPriority = p;
    }
  }
  return best!;
}
