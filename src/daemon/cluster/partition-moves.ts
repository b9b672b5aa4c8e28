/**
 * A daemon sharing a database's partitions with the others (decision 041): each time its
 * registration reads who is live and who holds what (every third of a lease, members.ts's
 * ClusterMember), it moves its own partitions toward its share (partition-plan.ts):
 * executions it gives up are handed over (Engine.handOver, PgStore.drop) and go on where the
 * next daemon takes them (PgStore.take, Engine.adopt). One move at a time. Partition 0 does not
 * move while running: when it is free (its holder gone), the first live daemon restarts to take
 * it with whatever else is free (rejoin.ts).
 */
import type { Logger } from 'pino';
import { isWfxError } from '../../shared/errors.js';
import type { WfxRecord } from '../state/records.js';
import type { WfxState } from '../state/state.js';
import { partitionOfExecution, COMMONS_PARTITION } from '../store/pg/partition-state.js';
import type { PgStore } from '../store/pg/pg-store.js';
import type { Sharing } from './members.js';
import { planShare } from './partition-plan.js';
import type { MovingExecutions } from '../engine/cluster-port.js';
import type { PartitionMoves } from '../process/cluster-port.js';

/** This daemon's view of the daemons sharing its database (members.ts's ClusterMember, given by rejoin.ts). */
export interface SharingMember {
  /** This daemon's id in the leases. */
  readonly id: string;
  /** Who shares and holds what, as last read (null: not read within a lease). */
  readonly view: () => Sharing | null;
  /** The same as last read however long ago: where requests are sent (ClusterMember.lastSharingView). */
  readonly routingView: () => Sharing | null;
  /** Reads it again now. */
  readonly refresh: () => Promise<void>;
  /** Calls `fn` with each view read from now on. Returns the unsubscribe. */
  readonly watch: (fn: (view: Sharing) => void) => () => void;
  /** The secret the daemons of the database sign requests they pass on with (request-signing.ts). */
  readonly hopSecret: () => Promise<string>;
  /** Says with each registration how far this daemon has read the shared journal (null: no longer). */
  readonly readingShared: (seq: (() => number) | null) => void;
}

export interface PartitionSharingOptions {
  readonly store: PgStore<WfxState, WfxRecord>;
  readonly engine: MovingExecutions;
  readonly member: SharingMember;
  readonly logger: Logger;
  /** Partition 0 is free and this daemon takes it: it restarts to do so (rejoin.ts). */
  readonly takeCatalogue: () => void;
}

export class PartitionSharing implements PartitionMoves {
  private unwatch: (() => void) | null = null;
  private running: Promise<void> | null = null;
  private closed = false;

  constructor(private readonly options: PartitionSharingOptions) {}

  /** Acts on the view read last, then on each one read. */
  start(): void {
    if (this.unwatch || this.closed) return;
    // Its deletion waits for this daemon's reading (fenced-sql.ts's DELETE_COVERED).
    this.options.member.readingShared(() => this.options.store.lastSeqOf(COMMONS_PARTITION));
    this.unwatch = this.options.member.watch((view) => this.balance(view));
    const last = this.options.member.view();
    if (last) this.balance(last);
  }

  /** Moves toward this daemon's share in `view`, unless a move is under way (the next view is acted on then). */
  private balance(view: Sharing): void {
    this.running ??= this.once(view)
      .catch((err: unknown) => {
        // A failed move fails the store (pg-store.ts), which stops the daemon: said there.
        if (!this.closed && !(isWfxError(err) && err.code === 'STORE_FAILED'))
          this.options.logger.warn({ err }, 'sharing: moving partitions failed');
      })
      .finally(() => (this.running = null));
  }

  /** Stops looking, once the move under way (if any) is done. */
  async close(): Promise<void> {
    this.closed = true;
    this.unwatch?.();
    this.options.member.readingShared(null);
    await this.running;
  }

  private async once(view: Sharing): Promise<void> {
    const { store, engine, logger } = this.options;
    const owner = this.options.member.id;
    if (this.closed) return;
    const plan = planShare(owner, view);
    if (plan.takeCatalogue && !store.held.includes(0)) {
      // One daemon restarts for it: the first live one, in the order every daemon reads.
      const first = [...view.members, owner].sort()[0];
      if (first === owner) {
        logger.info('sharing: partition 0 is free; restarting to take it');
        this.closed = true;
        this.options.takeCatalogue();
      }
      return;
    }
    // A lease keeps one partition: a daemon without partition 0 keeps its last.
    const drop = plan.drop.length >= store.held.length ? plan.drop.slice(1) : plan.drop;
    if (drop.length > 0) {
      const leaving = (id: string) => drop.includes(partitionOfExecution(store.layout, id));
      await engine.handOver(leaving, (hooks) => store.drop(drop, hooks));
      logger.info({ partitions: drop, holds: store.held }, 'sharing: gave partitions up');
    }
    if (plan.take.length > 0 && !this.closed) {
      let adopted: Promise<void> = Promise.resolve();
      const taken = await store.take(plan.take, (ids) => (adopted = engine.adopt(ids)));
      await adopted;
      if (taken) logger.info({ partitions: plan.take, holds: store.held }, 'sharing: took partitions');
    }
    // Who holds what changed: requests are routed by the new holders from now, not a beat later.
    if (drop.length > 0 || plan.take.length > 0) void this.options.member.refresh();
  }
}
