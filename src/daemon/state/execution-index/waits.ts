/**
 * The waits of the execution index's executions, as its queries read them: the nodes an event
 * resumes (subscriptions by bucket, as state/subscriptions.ts buckets them), input tasks per flow
 * (oldest first, paged as state/task-index.ts pages them), jobs per action, each without a scan.
 * The rows and the indexes they join are wait-rows.ts's.
 */
import { WaitRows } from './wait-rows.js';
import type { SortedList } from './sorted.js';
import { NO_KEY, orNull, type Subscriber, type WaitingJob, type WaitingTask } from './wait-kinds.js';

/** The wait rows and their indexes, with the queries over them. */
export class WaitTable extends WaitRows {
  /**
   * The nodes an event of `eventType` with `correlationKey` resumes in `organization`, as
   * subscriptionsFor answers: message waits with that ref and key, then signal waits with that
   * ref whatever their key.
   */
  subscribers(organization: string, eventType: string, correlationKey: string | null): Subscriber[] {
    const out: Subscriber[] = [];
    const bucket = this.pairs.find(this.strings.find(organization), this.strings.find(eventType));
    if (bucket < 0) return out;
    this.chain(this.messages.head(bucket, correlationKey ?? NO_KEY), out);
    this.chain(this.signals.get(bucket) ?? -1, out);
    return out;
  }

  /** Input tasks waiting in flow `processId` of `organization`, oldest first, from position `from`. */
  tasks(organization: string, processId: string, from = 0, limit = Infinity): WaitingTask[] {
    const list = this.taskLists.get(this.pairs.find(this.strings.find(organization), this.strings.find(processId)));
    const out: WaitingTask[] = [];
    if (list === undefined) return out;
    for (let i = from; i < list.size && out.length < limit; i++) out.push(this.task(list.at(i)));
    return out;
  }

  /** The input task of row `row`. */
  private task(row: number): WaitingTask {
    const assignee = this.a[row]!;
    return {
      id: this.owners.idOf(this.owner[row]!),
      node: this.strings.text(this.node[row]!),
      since: this.t1[row]!,
      assignee: assignee < 0 ? null : this.strings.text(assignee),
    };
  }

  /** The task key of input row `row` (state/task-index.ts taskKey). */
  private taskKeyOf(row: number): string {
    const since = new Date(this.t1[row]!).toISOString();
    return `${since}|${this.owners.idOf(this.owner[row]!)}|${this.strings.text(this.node[row]!)}`;
  }

  /** How many input tasks wait. */
  get taskCount(): number {
    return this.tasksWaiting;
  }

  /** The earliest `since` (ms) of any input task, or null when none waits. */
  oldestTaskSince(): number | null {
    let oldest: number | null = null;
    for (const list of this.taskLists.values()) {
      const since = this.t1[list.at(0)]!;
      if (oldest === null || since < oldest) oldest = since;
    }
    return oldest;
  }

  /**
   * Up to `limit` input tasks of `organization` (null: every one) and flow `processId`
   * (undefined: every flow), oldest first, after `cursor`: a task's key as state/task-index.ts
   * makes it (`since|execution|node`, `since` an ISO time), compared as text, as that index does.
   */
  taskPage(
    organization: string | null,
    processId: string | undefined,
    cursor: string | undefined,
    limit: number,
  ): WaitingTask[] {
    const org = organization === null ? -1 : this.strings.find(organization);
    const proc = processId === undefined ? -1 : this.strings.find(processId);
    const out: WaitingTask[] = [];
    if ((organization !== null && org < 0) || (processId !== undefined && proc < 0)) return out;
    const heads: Array<{ list: SortedList; at: number }> = [];
    for (const [flow, list] of this.taskLists) {
      if ((org >= 0 && this.pairs.first(flow) !== org) || (proc >= 0 && this.pairs.second(flow) !== proc)) continue;
      const at = cursor === undefined ? 0 : list.lowerBound((row) => (this.taskKeyOf(row) <= cursor ? -1 : 1));
      if (at < list.size) heads.push({ list, at });
    }
    while (out.length < limit && heads.length > 0) {
      let min = 0;
      for (let i = 1; i < heads.length; i++)
        if (this.taskOrder(heads[i]!.list.at(heads[i]!.at), heads[min]!.list.at(heads[min]!.at)) < 0) min = i;
      const h = heads[min]!;
      out.push(this.task(h.list.at(h.at)));
      if (++h.at >= h.list.size) heads.splice(min, 1);
    }
    return out;
  }

  /** Job waits of `action` in `domain` of `organization`, by execution id. */
  jobs(organization: string, domain: string, action: string): WaitingJob[] {
    const group = this.pairs.find(this.strings.find(organization), this.strings.find(domain));
    const list = this.jobLists.get(this.pairs.find(group, this.strings.find(action)));
    const out: WaitingJob[] = [];
    if (list === undefined) return out;
    for (let i = 0; i < list.size; i++) {
      const row = list.at(i);
      out.push({
        id: this.owners.idOf(this.owner[row]!),
        node: this.strings.text(this.node[row]!),
        notBefore: orNull(this.t1[row]!),
        lockedUntil: this.locks.get(row) ?? null,
      });
    }
    return out;
  }

  private chain(head: number, out: Subscriber[]): void {
    for (let row = head; row >= 0; row = this.subNext[row]!) {
      const flowNode = this.flowNode[row]!;
      out.push({
        id: this.owners.idOf(this.owner[row]!),
        node: this.strings.text(this.node[row]!),
        nodeId: flowNode < 0 ? '' : this.strings.text(flowNode),
      });
    }
  }
}
