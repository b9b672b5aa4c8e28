/**
 * What a daemon sharing a database serves with once its store is open (process/cluster-port.ts's
 * ClusterServing): requests naming an execution routed to its holder (partition-routing.ts),
 * calls that span executions asked of every daemon (fan-out.ts, fan-out-routes.ts,
 * other-daemons.ts), requests passed on signed (request-signing.ts), rate limits counted in the
 * database, the engine's part (engine-part.ts: claims on kept messages, thrown events given on)
 * and the partition moves (partition-moves.ts).
 */
import type { Logger } from 'pino';
import { jobTarget } from '../state/job-queues.js';
import type { WfxRecord } from '../state/records.js';
import type { WfxState } from '../state/state.js';
import { DEFAULT_LEASE_MS } from '../store/pg/lease.js';
import { partitionOfExecution } from '../store/pg/partition-state.js';
import type { PgStore } from '../store/pg/pg-store.js';
import { engineCluster } from './engine-part.js';
import { Peers } from './fan-out.js';
import { installSharedServing } from './fan-out-routes.js';
import type { KeptClaims } from './kept-claims.js';
import { readSharing, type ClusterMember, type Sharing } from './members.js';
import { otherDaemons } from './other-daemons.js';
import { PartitionSharing, type SharingMember } from './partition-moves.js';
import { joinShare } from './partition-plan.js';
import type { PartitionRoutingOptions } from './partition-routing.js';
import type { ClusterServing, DaemonSharing } from '../process/cluster-port.js';
import { HopSigner } from './request-signing.js';
import type { ThrownPassing } from './thrown-outbox.js';

/**
 * What the lifecycle of a daemon sharing its database (`--share`) is given (DaemonOptions.sharing),
 * over `member`'s view of who shares the database and holds what; `leaseMs` is the lease's
 * length (--lease; default DEFAULT_LEASE_MS).
 */
export function daemonSharing(member: ClusterMember, leaseMs?: number): DaemonSharing {
  const sharing: SharingMember = {
    id: member.id,
    view: () => member.sharingView(),
    routingView: () => member.lastSharingView(),
    refresh: () => member.refresh(),
    watch: (fn) => member.watchSharing(fn),
    hopSecret: () => member.hopSecret(),
    readingShared: (seq) => member.readingShared(seq),
  };
  return {
    join: async (client, owner, ms) => joinShare(owner, await readSharing(client, ms)),
    serve: (store, logger) => clusterServing(store, sharing, logger, leaseMs),
  };
}

/** How a daemon serves among the daemons sharing `store`'s database, as `sharing` reads them. */
async function clusterServing(
  store: PgStore<WfxState, WfxRecord>,
  sharing: SharingMember,
  logger: Logger,
  leaseMs = DEFAULT_LEASE_MS,
): Promise<ClusterServing> {
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
    catalogueSeq: () => store.lastSeqOf(0),
    catalogueAt: async (seq) => void (await store.followedTo(seq)),
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
  const rateLimits = store.rateLimits();
  const engine = engineCluster({
    thrownPassing,
    keptClaims: keptClaimsOf(store),
    holdsMessageId: (key) => store.serves(partitionOfExecution(store.layout, key)),
  });
  return {
    engine,
    server: {
      rateLimits,
      counted: (request) => hop.counted(request.headers, request.method, request.url),
      daemonCall: (request) => hop.caller(request.headers, request.method, request.url),
      install: (app) => installSharedServing(app, { routing, peers }),
      others: otherDaemons(peers, (key) => {
        const job = jobTarget(key);
        return job === null || store.serves(partitionOfExecution(store.layout, job.instanceId));
      }),
    },
    moves: ({ engine, takeCatalogue }) =>
      new PartitionSharing({ store, engine, member: sharing, logger, takeCatalogue }),
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
