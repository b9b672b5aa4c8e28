/**
 * What the process lifecycle is given when its daemon shares a PostgreSQL database with others
 * (decision 041, docs/clustering.md): the partitions to join with, and once the store is open the
 * engine's and the HTTP app's parts and the partition moves. Built by the cluster room
 * (cluster/serving.ts), which rejoin.ts, loaded by the launcher only for `--store postgres://...`,
 * hands over through DaemonOptions.sharing. Types only.
 */
import type { Logger } from 'pino';
import type { SharedServing } from '../api/cluster-port.js';
import type { EngineClusterPort, MovingExecutions } from '../engine/cluster-port.js';
import type { WfxRecord } from '../state/records.js';
import type { WfxState } from '../state/state.js';
import type { PgStoreOptions } from '../store/pg/pg-store-options.js';
import type { PgStore } from '../store/pg/pg-store.js';

/** This daemon's partitions moving toward its share as daemons come and go (cluster/partition-moves.ts). */
export interface PartitionMoves {
  /** Acts on who holds what as last read, then on each read. */
  start(): void;
  /** Stops, once the move under way (if any) is done. */
  close(): Promise<void>;
}

/** What a daemon sharing a database serves with once its store is open. */
export interface ClusterServing {
  /** The engine's part (EngineOptions.cluster). */
  readonly engine: EngineClusterPort;
  /** The HTTP app's part (buildServer's `sharing`). */
  readonly server: SharedServing;
  /** This daemon's partition moves; `takeCatalogue` restarts the daemon to take partition 0 when it is free. */
  moves(parts: { engine: MovingExecutions; takeCatalogue: () => void }): PartitionMoves;
}

/** What the lifecycle of a daemon sharing a database (`--share`) is given (DaemonOptions.sharing, from rejoin.ts). */
export interface DaemonSharing {
  /** The partitions this daemon holds when it joins, read as its store opens (PgStoreOptions.join). */
  readonly join: NonNullable<PgStoreOptions<WfxState, WfxRecord>['join']>;
  /** What the daemon serves with on `store` (its partitions move with the others'). */
  serve(store: PgStore<WfxState, WfxRecord>, logger: Logger): Promise<ClusterServing>;
}
