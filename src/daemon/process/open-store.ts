/**
 * Which durable store a daemon runs on: the JSON store in its data directory (the default), or
 * PostgreSQL (`--store postgres://...`, docs/decisions/037-postgresql-store-first-stage.md). The
 * PostgreSQL store and its driver load only for a daemon that uses them.
 */
import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from 'pino';
import { dataDirPaths } from '../../shared/data-dir.js';
import { checkStoreUrl, redactStoreUrl } from '../../shared/store-url.js';
import { executionSummarizer, wfxJsonStore } from '../engine/executions-at-rest.js';
import { WFX_STORE, type WfxRecord } from '../state/records.js';
import { WFX_COMMONS } from '../state/commons.js';
import { KEPT_ON_MOVES, type WfxState } from '../state/state.js';
import { writeFileAtomic } from '../disk/durable-files.js';
import type { Blobs } from '../store/blobs.js';
import { FileAuditTrail, type AuditTrail } from '../store/audit-trail.js';
import { History } from '../store/history.js';
import type { HistoryStore } from '../store/history-store.js';
import type { RecordStore } from '../store/record-store.js';
import { Store } from '../store/store.js';
import type { PgStore } from '../store/pg/pg-store.js';
import type { DaemonSharing } from './cluster-port.js';

/** Tests: the fewest executions a daemon they spawn writes a directory image for (`WFX_TEST_DIRECTORY_IMAGE_MIN=n`). */
const IMAGE_MIN_BY_ENV: number | undefined = /^\d+$/.test(process.env.WFX_TEST_DIRECTORY_IMAGE_MIN ?? '')
  ? Number(process.env.WFX_TEST_DIRECTORY_IMAGE_MIN)
  : undefined;

export interface StoreChoice {
  readonly dataDir: string;
  /** A PostgreSQL connection string; absent: the JSON store in the data directory. */
  readonly store?: string;
  /** With `store`: wait while another daemon holds the database's lease, until it is released or lapses. */
  readonly standby?: boolean;
  /** With `standby`: ends the wait (a stop while waiting). */
  readonly abort?: AbortSignal;
  /** With `standby`: told who holds the lease when the wait begins. */
  readonly onStandby?: (held: string) => void;
  /** With `standby`: given the sequence number of the last journal entry its copy of the state applied. */
  readonly onFollowing?: (appliedSeq: (() => number) | null) => void;
  /** With `standby`: given its copy of the state once loaded, before it waits; a throw refuses the start (a key missing). */
  readonly onStandbyLoaded?: (state: WfxState) => void;
  /** With `store`: whether standbys follow the journal now (PgStoreOptions.followed). */
  readonly followed?: () => boolean;
  /** With `store`: how long the lease lasts unrenewed (default 10 s). */
  readonly leaseMs?: number;
  /** With `store`: how many partitions a database not used before is cut into (default 16). */
  readonly partitions?: number;
  /**
   * With `store`: share the database's partitions with its other daemons (decision 041): hold
   * what is free for this daemon now (none: DATABASE_IN_USE), then move partitions as daemons
   * come and go (cluster/partition-moves.ts). Instead of `standby`.
   */
  readonly share?: boolean;
  /** With `share`: what the cluster room gives the daemon (rejoin.ts): which partitions it joins with, how it serves. */
  readonly sharing?: DaemonSharing;
  /** With `store`: where the database's other daemons reach this one (default: where it listens). */
  readonly advertiseUrl?: string;
  readonly checkpointEvery?: number;
  /**
   * Leave the executions a checkpoint wrote unread at open (StoreOptions.lazy, PgStoreOptions.lazy),
   * for an engine with an execution cache to read back when touched.
   */
  readonly lazyExecutions?: boolean;
}

/** What a daemon's store is, for its log line and `wfx daemon status`. */
export interface StoreKind {
  readonly kind: 'json' | 'postgres';
  /** The connection string without its password (postgres only). */
  readonly location: string;
}

/**
 * This daemon's id in the database's lease: kept in its data directory (`daemon.id`), so a daemon
 * that restarts (after a crash, say) takes its own lease back at once instead of waiting for it
 * to lapse, while another daemon waits.
 */
export async function daemonId(dataDir: string): Promise<string> {
  const file = join(dataDir, 'daemon.id');
  const kept = await readFile(file, 'utf8').then(
    (text) => text.trim(),
    () => '',
  );
  if (kept) return kept;
  const id = randomUUID();
  await writeFileAtomic(file, `${id}\n`);
  return id;
}

/** Opens the daemon's store. Throws the store's start errors (see Store.open and PgStore.open). */
export async function openStore(
  choice: StoreChoice,
  snapshotBytes: Promise<Buffer | null>,
  logger: Logger,
): Promise<{
  store: RecordStore<WfxState, WfxRecord>;
  history: HistoryStore;
  /** The audit trail: day files beside history, or the database's table. */
  audit: AuditTrail;
  blobs?: Blobs;
  kind: StoreKind;
  /** On a database: the store, as what it is (its partitions move while sharing). */
  pg?: PgStore<WfxState, WfxRecord>;
}> {
  if (choice.store === undefined) {
    const store = await Store.open<WfxState, WfxRecord>({
      dir: choice.dataDir,
      snapshotBytes,
      ...wfxJsonStore(), // executions kept in execution segments
      checkpointEvery: choice.checkpointEvery,
      lazy: choice.lazyExecutions === true,
      ...(IMAGE_MIN_BY_ENV !== undefined && { imageMin: IMAGE_MIN_BY_ENV }),
      logger,
    });
    try {
      const paths = dataDirPaths(choice.dataDir);
      const history = await History.open(paths.history, { logger });
      const audit = new FileAuditTrail(await History.open(paths.audit, { logger }));
      return { store, history, audit, kind: { kind: 'json', location: choice.dataDir } };
    } catch (err) {
      await store.close({ checkpoint: false });
      throw err;
    }
  }
  void snapshotBytes.catch(() => undefined); // read by prepareDataDir, not needed here
  checkStoreUrl(choice.store);
  const location = redactStoreUrl(choice.store);
  const { PgStore } = await import('../store/pg/pg-store.js');
  const { ROWS_AT_REST } = await import('../at-rest/rows/pg-evictable.js');
  const owner = await daemonId(choice.dataDir);
  const store = await PgStore.open<WfxState, WfxRecord>({
    connectionString: choice.store,
    owner,
    leaseMs: choice.leaseMs,
    ...(choice.partitions !== undefined && { partitions: choice.partitions }),
    followed: choice.followed,
    ...WFX_STORE,
    shared: WFX_COMMONS,
    summarize: executionSummarizer(),
    lazy: choice.lazyExecutions === true,
    rows: ROWS_AT_REST, // executions at rest in their rows
    keptOnMoves: KEPT_ON_MOVES,
    checkpointEvery: choice.checkpointEvery,
    logger,
    ...(choice.share && choice.sharing && { join: choice.sharing.join }),
    ...(choice.standby &&
      !choice.share && {
        standby: {
          signal: choice.abort,
          onWaiting: (held: string) => {
            logger.info(`store: standing by until the lease is free: ${held}`);
            choice.onStandby?.(held);
          },
          following: choice.onFollowing,
          loaded: choice.onStandbyLoaded,
        },
      }),
  });
  return {
    store,
    history: store.history(),
    audit: store.auditTrail(),
    blobs: store.blobs(),
    kind: { kind: 'postgres', location },
    pg: store,
  };
}
