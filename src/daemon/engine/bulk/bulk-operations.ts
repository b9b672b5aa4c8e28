/**
 * The engine's bulk operations (POST /process/bulk and its reads): a dry run, a creation that
 * fixes the selection and journals it, a cancel, the reads of one, a page of them and of one's
 * results. The runner (runner.ts) carries the running ones forward; the step (step/bulk.ts)
 * decides each change.
 */
import type {
  BulkDryRun,
  BulkOperationName,
  BulkOutcome,
  BulkPage,
  BulkQuery,
  BulkResultPage,
  BulkState,
  BulkView,
  InstanceSummary,
} from '../../../shared/api/index.js';
import { BULK_SAMPLE_MAX } from '../../../shared/api/index.js';
import { WfxError } from '../../../shared/errors.js';
import { ownEntry } from '../../../shared/json-object.js';
import type { BulkOperation } from '../../state/bulk.js';
import type { WfxState } from '../../state/state.js';
import type { ExecutionPartitions } from '../../store/durable-store.js';
import { ExecutionFilter } from '../execution-filter.js';
import { planMove } from '../version-move.js';
import { COLD_BATCH, executionIds, liveNow, summarize, type ExecutionSources } from '../execution-list.js';
import { uuidv7 } from '../../state/ids.js';
import type { ExecutionLimits } from '../limits.js';
import type { RunStep } from '../step/index.js';
import type { BulkReads } from './operations.js';
import { BulkRunner, DEFAULT_BULK_RATE } from './runner.js';
import { bulkSelection, isVisible } from './selection.js';
import { bulkPage, bulkResults, bulkView } from './views.js';
import { execution } from '../../state/executions.js';

/** A bulk operation asked for: what, over which executions, for whom. */
export interface BulkAsked {
  /** Whose executions (the caller's organization, or the one a system key named; null: every one's). */
  readonly organization: string | null;
  readonly operation: BulkOperationName;
  readonly params: Record<string, unknown> | null;
  readonly query: BulkQuery;
  /** Who asks (api/caller.ts, actorOf). */
  readonly by: string;
}

/** What BulkOperations needs from its engine. */
export interface BulkDeps {
  readonly state: WfxState;
  readonly step: RunStep;
  readonly now: () => Date;
  readonly sources: ExecutionSources;
  readonly limits: ExecutionLimits;
  /** The store's partitions of executions; undefined: one, served here. */
  readonly partitions: ExecutionPartitions | undefined;
  /** Executions per second over every operation (default DEFAULT_BULK_RATE). */
  readonly rate: number | undefined;
  readonly onError: (err: unknown, what: string) => void;
  readonly closed: () => boolean;
  readonly track: <T>(work: Promise<T>) => Promise<T>;
  /** Keeps executions in the live state until the returned release (ExecutionArchive.hold). */
  readonly hold: (ids: readonly string[]) => () => void;
}

/** The engine's bulk operations (see the top of this file). */
export class BulkOperations {
  private readonly runner: BulkRunner;

  constructor(private readonly deps: BulkDeps) {
    const partitions = deps.partitions;
    this.runner = new BulkRunner({
      state: deps.state,
      step: deps.step,
      rate: deps.rate ?? DEFAULT_BULK_RATE,
      serves: (p) => partitions === undefined || partitions.serves(p),
      select: (bulk) => this.select(bulk),
      reads: (bulk, hold) => this.reads(bulk, hold),
      ensure: (ids) => deps.sources.ensure(ids),
      hold: deps.hold,
      onError: deps.onError,
      closed: deps.closed,
      track: deps.track,
    });
  }

  /**
   * What `asked` would select in the partitions this daemon serves (all but on a daemon sharing
   * its database), changing nothing: how many (at most the `bulk-executions` limit and one), and
   * the first `sample`, newest first. Throws PROCESS_NOT_FOUND for a flow the organization does
   * not have.
   */
  async dryRun(asked: BulkAsked, sample: number): Promise<BulkDryRun> {
    this.checkFlow(asked);
    const startedBefore = this.bound(asked.query);
    const lanes = await this.select({
      ...asked,
      startedBefore,
      partitions: this.partitions(),
    });
    // Each daemon sharing a database counts and samples the partitions it serves (fan-out.ts adds them up).
    const ids = [...lanes.values()].flat().sort().reverse();
    const items: InstanceSummary[] = [];
    const src = this.deps.sources;
    const shown = ids.slice(0, sample);
    const reading = src.ensure(shown);
    if (reading !== null) await reading;
    for (const id of shown) {
      const inst = (await liveNow(src, id)) ?? (await src.archived(id));
      if (inst) items.push(summarize(inst, src.queuedAhead));
    }
    const max = this.deps.limits.bulkExecutions;
    const dry = {
      dryRun: true,
      operation: asked.operation,
      count: ids.length,
      maxExecutions: max,
      sample: items,
      startedBefore,
    };
    if (asked.operation !== 'move') return dry;
    // A move says which would be refused and why, as the chunks would find them now.
    const version = (asked.params as { version: string }).version;
    const refused: NonNullable<BulkDryRun['refused']> = [];
    // Planned a batch at a time, each batch's cold executions read back just before.
    for (let from = 0; from < ids.length; from += COLD_BATCH) {
      const batch = ids.slice(from, from + COLD_BATCH);
      const batchRead = src.ensure(batch);
      if (batchRead !== null) await batchRead;
      for (const id of batch) {
        try {
          planMove(this.deps.state, id, version);
        } catch (err) {
          if (!(err instanceof WfxError)) throw err;
          const problems = (err.details as { problems?: Record<string, unknown>[] } | undefined)?.problems;
          refused.push({ processInstanceId: id, code: err.code, message: err.message, ...(problems && { problems }) });
        }
      }
    }
    return { ...dry, refused: refused.slice(0, BULK_SAMPLE_MAX), refusedCount: refused.length };
  }

  /**
   * Creates the operation over the executions `asked` selects now (those started later are never
   * selected), journaled with the selection, and starts it. Throws PROCESS_NOT_FOUND,
   * BULK_TOO_LARGE (more than the `bulk-executions` limit), BULK_LIMIT_EXCEEDED.
   */
  async create(asked: BulkAsked): Promise<BulkView> {
    this.checkFlow(asked);
    const now = this.deps.now();
    const bulk: BulkOperation = {
      bulkId: uuidv7(now),
      organization: asked.organization,
      operation: asked.operation,
      params: asked.params,
      query: asked.query,
      startedBefore: this.bound(asked.query, now),
      by: asked.by,
      createdAt: now.toISOString(),
      partitions: this.partitions(),
      state: 'RUNNING',
      finishedAt: null,
      cancelledBy: null,
      error: null,
      lanes: {},
    };
    const lanes = await this.select(bulk);
    let total = 0;
    for (const ids of lanes.values()) total += ids.length;
    const max = this.deps.limits.bulkExecutions;
    if (total > max)
      throw new WfxError('BULK_TOO_LARGE', `the query selects more than ${max} executions`, {
        details: { limit: max },
      });
    // The lanes of partitions given up meanwhile are their next holder's to select.
    const partitions = this.deps.partitions;
    if (partitions) for (const p of lanes.keys()) if (!partitions.serves(p)) lanes.delete(p);
    const created = await this.deps.step({ kind: 'bulk.create', bulk, lanes });
    this.runner.kick();
    return bulkView(created, this.deps.now());
  }

  /** Cancels a running operation. Throws BULK_NOT_FOUND, BULK_NOT_RUNNING. */
  async cancel(organization: string | null, bulkId: string, by: string): Promise<BulkView> {
    const bulk = await this.deps.step({ kind: 'bulk.cancel', bulkId, organization, by });
    return bulkView(bulk, this.deps.now());
  }

  /** An operation `organization` may see (null: any), with its progress. Throws BULK_NOT_FOUND. */
  get(organization: string | null, bulkId: string): BulkView {
    return bulkView(this.visible(organization, bulkId), this.deps.now());
  }

  /** The operations `organization` may see, newest first (see views.ts, bulkPage). */
  list(q: { organization: string | null; state?: BulkState; limit: number; cursor?: string }): BulkPage {
    return bulkPage(this.deps.state.bulks, q, this.deps.now());
  }

  /** A page of an operation's results. Throws BULK_NOT_FOUND. */
  results(
    organization: string | null,
    bulkId: string,
    q: { outcome?: BulkOutcome; limit: number; cursor?: string },
  ): BulkResultPage {
    return bulkResults(this.visible(organization, bulkId), q);
  }

  /** Carries the running operations forward (after a restart, a partition taken). */
  resume(): void {
    this.runner.kick();
  }

  /** Stops carrying them forward (the engine stops). */
  close(): void {
    this.runner.close();
  }

  private visible(organization: string | null, bulkId: string): BulkOperation {
    const bulk = ownEntry(this.deps.state.bulks, bulkId);
    if (!bulk || (organization !== null && bulk.organization !== organization))
      throw new WfxError('BULK_NOT_FOUND', `no bulk operation ${bulkId}`);
    return bulk;
  }

  /** The query's flow, when it names one, must be one the organization has (as a flow's list of executions says). */
  private checkFlow(asked: BulkAsked): void {
    const processId = asked.query.processId;
    if (processId === undefined) return;
    const flow = ownEntry(this.deps.state.flows, processId);
    if (!flow || (asked.organization !== null && flow.organization !== asked.organization))
      throw new WfxError('PROCESS_NOT_FOUND', `no flow ${processId}`);
  }

  /** The instant a selection ends at: `now`, or the query's own bound if earlier (ISO). */
  private bound(query: BulkQuery, now: Date = this.deps.now()): string {
    const asked = query.startedBefore === undefined ? Infinity : Date.parse(query.startedBefore);
    return new Date(Math.min(asked, now.getTime())).toISOString();
  }

  /** The partitions executions are in: each a lane of an operation. */
  private partitions(): readonly number[] {
    return this.deps.partitions?.all ?? [0];
  }

  /** The executions `bulk` selects in each partition this daemon serves, newest first. */
  private async select(
    bulk: Pick<BulkOperation, 'query' | 'organization' | 'startedBefore' | 'partitions'>,
  ): Promise<Map<number, string[]>> {
    const partitions = this.deps.partitions;
    const lanes = new Map<number, string[]>();
    for (const p of bulk.partitions) if (partitions === undefined || partitions.serves(p)) lanes.set(p, []);
    const laneOf = (id: string): number => (partitions === undefined ? 0 : partitions.of(id));
    // One more than allowed says the query selects too many.
    const max = this.deps.limits.bulkExecutions + 1;
    const ids = await executionIds(this.deps.sources, bulkSelection(bulk), max, (id) => lanes.has(laneOf(id)));
    for (const id of ids) lanes.get(laneOf(id))!.push(id);
    return lanes;
  }

  /** What an operation's prepare may read for `bulk`. */
  private reads(bulk: BulkOperation, hold: (ids: readonly string[]) => void): BulkReads {
    const filter = new ExecutionFilter(
      { ...bulkSelection(bulk), stateCd: undefined, errorCode: undefined, failedNode: undefined, limit: 0 },
      () => undefined,
    );
    return {
      live: (id) => execution(this.deps.state, id),
      hold,
      archived: (id) => this.deps.sources.archived(id),
      selects: (inst) => isVisible(inst, bulk.organization) && filter.matches(inst),
    };
  }
}
