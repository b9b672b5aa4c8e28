/**
 * A daemon sharing a database's partitions with the others (decision 041): each time its
 * registration reads who is live and who holds what (every third of a lease, rejoin.ts's
 * ClusterMember), it moves its own partitions toward its share
 * (store/pg/share.ts): executions it gives up are handed over (Engine.handOver, PgStore.drop)
 * and go on where the next daemon takes them (PgStore.take, Engine.adopt). One move at a time.
 * Partition 0 does not move while running: when it is free (its holder gone), the first live
 * daemon restarts to take it with whatever else is free (rejoin.ts).
 */
import type { Logger } from 'pino';
import { Peers } from './fan-out.js';
import { HopSigner } from './request-signing.js';
import type { PartitionRoutingOptions } from './partition-routing.js';
import type { PgRateLimits } from '../store/pg/pg-rate-limits.js';
import { DEFAULT_LEASE_MS } from '../store/pg/lease.js';
import type { Engine } from '../engine/engine.js';
import type { KeptClaims } from './kept-claims.js';
import type { ThrownPassing } from './thrown-outbox.js';
import { isWfxError } from '../../shared/errors.js';
import type { Sharing } from './members.js';
import { partitionOfExecution, SHARED_PARTITION } from '../store/pg/partition-state.js';
import type { PgStore } from '../store/pg/pg-store.js';
import { planShare } from './partition-plan.js';
import type { WfxRecord } from '../state/records.js';
import type { WfxState } from '../state/state.js';

/** This daemon's view of the daemons sharing its database (rejoin.ts's ClusterMember). */
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
  /** The secret the daemons of the database sign requests they pass on with (api/hop.ts). */
  readonly hopSecret: () => Promise<string>;
  /** Says with each registration how far this daemon has read the shared journal (null: no longer). */
  readonly readingShared: (seq: (() => number) | null) => void;
}

export interface PartitionSharingOptions {
  readonly store: PgStore<WfxState, WfxRecord>;
  readonly engine: Engine;
  readonly member: SharingMember;
  readonly logger: Logger;
  /** Partition 0 is free and this daemon takes it: it restarts to do so (rejoin.ts). */
  readonly takeDirectory: () => void;
}

export class PartitionSharing {
  private unwatch: (() => void) | null = null;
  private running: Promise<void> | null = null;
  private closed = false;

  constructor(private readonly options: PartitionSharingOptions) {}

  /** Acts on the view read last, then on each one read. */
  start(): void {
    if (this.unwatch || this.closed) return;
    // Its deletion waits for this daemon's reading (fenced-sql.ts's DELETE_COVERED).
    this.options.member.readingShared(() => this.options.store.lastSeqOf(SHARED_PARTITION));
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
    if (plan.takeDirectory && !store.held.includes(0)) {
      // One daemon restarts for it: the first live one, in the order every daemon reads.
      const first = [...view.members, owner].sort()[0];
      if (first === owner) {
        logger.info('sharing: partition 0 is free; restarting to take it');
        this.closed = true;
        this.options.takeDirectory();
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

/** What the API of a daemon sharing a database needs to serve as one daemon would (server.ts). */
export interface SharedServing {
  /** Requests naming an execution, routed to its holder. */
  readonly routing: PartitionRoutingOptions;
  /** Calls that span executions, asked of every daemon (decisions 042). */
  readonly peers: Peers;
  /** Signatures of requests counted already by the daemon that passed them on. */
  readonly hop: HopSigner;
  /** Rate limits counted in the database. */
  readonly rateLimits: PgRateLimits;
  /** Events thrown here, given to what waits on the other daemons (Engine's thrown outbox). */
  readonly thrownPassing: ThrownPassing;
  /** Kept messages claimed in the database before one is consumed (Engine's kept claims). */
  readonly keptClaims: KeptClaims;
  /** Whether this daemon holds the partition of a message id now (EngineOptions.holdsMessageId). */
  readonly holdsMessageId: (key: string) => boolean;
}

/** How requests reach what they need among the daemons sharing `store`'s database. */
export async function sharedServing(
  store: PgStore<WfxState, WfxRecord>,
  sharing: SharingMember,
  logger: Logger,
  leaseMs = DEFAULT_LEASE_MS,
): Promise<SharedServing> {
  const hop = new HopSigner(await sharing.hopSecret());
  const refresh = () => sharing.refresh();
  const partitions = executionPartitions(store.layout.count);
  const retryAfterSeconds = Math.max(1, Math.ceil(leaseMs / 3000));
  const routing: PartitionRoutingOptions = {
    self: sharing.id,
    partitionOf: (id) => partitionOfExecution(store.layout, id),
    serves: (partition) => store.serves(partition),
    holder: (partition) => {
      const view = sharing.routingView();
      const owner = view?.holders.get(partition);
      return owner === undefined || owner === sharing.id ? null : (view!.urls.get(partition) ?? null);
    },
    stale: () => void refresh(),
    refresh,
    retryAfterSeconds,
    hop,
    directorySeq: () => store.lastSeqOf(0),
    directoryAt: async (seq) => void (await store.followedTo(seq)),
  };
  const peers = new Peers({
    self: sharing.id,
    peers: () => peerUrls(store, partitions, sharing.id, sharing.routingView()),
    hop,
    refresh,
    retryAfterSeconds,
    watch: (fn) => sharing.watch(fn),
    partitions,
    served: () => partitions.filter((p) => store.serves(p)),
  });
  const thrownPassing: ThrownPassing = {
    pass: (event, here) =>
      peers.deliverThrown(event, here).catch((err: unknown) => {
        logger.warn({ err, eventType: event.eventType }, 'a thrown event did not reach every daemon yet: given again');
        throw err;
      }),
    holds: (id) => store.serves(partitionOfExecution(store.layout, id)),
  };
  return {
    routing,
    peers,
    hop,
    rateLimits: store.rateLimits(),
    thrownPassing,
    keptClaims: keptClaimsOf(store),
    holdsMessageId: (key) => store.serves(partitionOfExecution(store.layout, key)),
  };
}

/**
 * Kept messages consumed under claims in the database (decision 043): every daemon sharing it
 * sees them, and would otherwise each consume one its nodes wait for.
 */
function keptClaimsOf(store: PgStore<WfxState, WfxRecord>): KeptClaims {
  const claims = store.messageClaims();
  return {
    claim: (id, instanceId, expiresAt) => claims.claim(id, instanceId, expiresAt),
    release: (id, instanceId) => claims.release(id, instanceId),
    onMessages: (listener) =>
      store.onOthersShared((records) => {
        const ids: string[] = [];
        for (const r of records)
          if (r.type === 'message.buffered') ids.push(r.message.id);
          else if (r.type === 'message.removed') ids.push(r.id);
        if (ids.length > 0) listener(ids);
      }),
  };
}

/** The partitions executions are in: 1 to count-1 (0 in a database of one partition). */
function executionPartitions(count: number): number[] {
  return count === 1 ? [0] : Array.from({ length: count - 1 }, (_, i) => i + 1);
}

/**
 * Where the other daemons holding execution partitions answer; null while one of them is moving
 * in or out of this daemon, or has no holder (or one whose address is not known).
 */
function peerUrls(
  store: PgStore<WfxState, WfxRecord>,
  partitions: readonly number[],
  self: string,
  view: Sharing | null,
): string[] | null {
  if (view === null) return null;
  const urls = new Set<string>();
  for (const partition of partitions) {
    const owner = view.holders.get(partition);
    if (owner === undefined) return null;
    if (owner === self) {
      if (!store.serves(partition)) return null;
      continue;
    }
    const url = view.urls.get(partition);
    if (url === undefined) return null;
    urls.add(url);
  }
  return [...urls];
}
