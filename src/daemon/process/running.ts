/**
 * A daemon once it serves (daemon.ts starts it): what runs on timers while it does, and how it
 * stops, for good, after a store failure, or to start again (rejoin).
 */
import { readFile, unlink } from 'node:fs/promises';
import type { Logger } from 'pino';
import type { DaemonInfo } from '../../shared/data-dir.js';
import { WfxError } from '../../shared/errors.js';
import type { AiRunner } from '../ai/types.js';
import type { buildServer } from '../api/server.js';
import type { Engine } from '../engine/engine.js';
import type { FileStore } from '../files/file-store.js';
import type { FlowChecker } from '../flows/check.js';
import type { FileOutcome } from '../flows/load-dir.js';
import type { RefusedFlowFiles } from '../flows/refused-files.js';
import { stopTracing } from '../observe/tracing-setup.js';
import type { NetworkPolicy } from '../outbound/network-policy.js';
import type { WfxRecord } from '../state/records.js';
import type { Environment, WfxState } from '../state/state.js';
import { DEFAULT_AUDIT_RETENTION_MS } from '../store/audit-sweep.js';
import type { AuditTrail } from '../store/audit-trail.js';
import type { HistoryStore } from '../store/history-store.js';
import type { DataDirLock } from '../store/lock.js';
import type { RecordStore } from '../store/record-store.js';
import type { EmailTriggers } from '../triggers/email.js';
import type { Scheduler } from '../triggers/schedules.js';
import type { WebhookReceiver } from '../triggers/webhooks.js';
import type { CoverageBoard } from '../flows/coverage-board.js';
import type { PartitionMoves } from './cluster-port.js';
import type { DaemonOptions } from './daemon-options.js';

/** A daemon that is serving. */
export interface RunningDaemon {
  readonly info: DaemonInfo;
  readonly logger: Logger;
  readonly engine: Engine;
  /** Stops and has rejoin.ts start it again (DAEMON_REJOINING): a sharing daemon taking partition 0 (cluster/partition-moves.ts). */
  rejoin(): void;
  /** Validates and publishes one flow file into organization default (wfx dev); logs the outcome. */
  publishFile(file: string, environment: Environment): Promise<FileOutcome>;
  /** The flows' test coverage its console draws (wfx dev --test keeps each run's here). */
  readonly coverage: CoverageBoard;
  /** Stops gracefully: stop accepting, finish in-flight requests, checkpoint, release the lock. */
  stop(): Promise<void>;
  /** Settles when the daemon has stopped; rejects with the cause if its store failed. */
  readonly stopped: Promise<void>;
}

const DAY_MS = 24 * 60 * 60 * 1000;
/** How long finished executions and stored files are kept when `retentionMs` says nothing. */
export const DEFAULT_RETENTION_MS = 7 * DAY_MS;
const RETENTION_SWEEP_MS = 60 * 60 * 1000;
/**
 * How long a stop that cannot wait (the store failed; a restart to take partition 0) lets the
 * requests under way end before it closes their connections: one waiting on a database behind a
 * partition, or forwarded to a daemon behind one, would hold the port closed until it healed.
 */
const HURRIED_STOP_MS = 1_000;

/**
 * The daemon `startDaemon` made, serving: checkpoints and (on partition 0's holder) the
 * retention sweeps on timers, a stop when its store fails, and the stop that closes its parts in
 * order and releases the data directory.
 */
export function serve(parts: {
  options: DaemonOptions;
  directory: boolean;
  sharing: PartitionMoves | null;
  info: DaemonInfo;
  logger: Logger;
  closeLog: () => void;
  lock: DataDirLock;
  store: RecordStore<WfxState, WfxRecord>;
  history: HistoryStore;
  audit: AuditTrail;
  engine: Engine;
  ai: AiRunner;
  network: NetworkPolicy;
  files: FileStore;
  scheduler: Scheduler;
  email: EmailTriggers;
  webhooks: WebhookReceiver;
  app: ReturnType<typeof buildServer>;
  flowChecker: FlowChecker;
  publishFile: RunningDaemon['publishFile'];
  coverage: CoverageBoard;
  refused: RefusedFlowFiles;
  daemonJson: string;
}): RunningDaemon {
  const { options, info, logger, closeLog, lock, store, history, audit, engine, ai, network, files, app } = parts;
  const { scheduler, email, webhooks, flowChecker, daemonJson, directory, sharing, publishFile, refused } = parts;
  const retentionMs = options.retentionMs ?? DEFAULT_RETENTION_MS;
  const auditRetentionMs = options.auditRetentionMs ?? DEFAULT_AUDIT_RETENTION_MS;
  let stopping: Promise<void> | null = null;
  let settle!: { resolve: () => void; reject: (err: unknown) => void };
  const stopped = new Promise<void>((resolve, reject) => (settle = { resolve, reject }));

  const prune = async (): Promise<void> => {
    const report = await history.prune(new Date(Date.now() - retentionMs));
    if (report.buckets > 0) logger.info(report, 'history: pruned finished executions past retention');
    const swept = await files.sweep();
    if (swept.deleted + swept.kept + swept.blobs > 0) logger.info(swept, 'files: swept files past retention');
    const days = await audit.sweep(new Date(Date.now() - auditRetentionMs));
    if (days > 0) logger.info({ removed: days }, 'audit: swept records past retention');
  };
  const timers = [
    setInterval(() => void store.checkpoint().catch(() => undefined), options.checkpointIntervalMs ?? 5 * 60_000),
  ];
  // Sweeps change the directory's and the shared state: its holder's alone.
  if (directory)
    timers.push(
      setInterval(
        () => void prune().catch((err: unknown) => logger.warn({ err }, 'retention: pruning history or files failed')),
        RETENTION_SWEEP_MS,
      ),
      setInterval(
        () =>
          void engine
            .sweepExpired()
            .catch((err: unknown) => logger.warn({ err }, 'engine: sweeping expired messages and memory failed')),
        60_000,
      ),
    );
  for (const t of timers) t.unref();
  if (directory)
    void prune().catch((err: unknown) => logger.warn({ err }, 'retention: pruning history or files failed'));

  const shutdown = async (failure: WfxError | null, restart: WfxError | null = failure): Promise<void> => {
    for (const t of timers) clearInterval(t);
    logger.info(failure ? 'stopping after a store failure' : 'stopping');
    try {
      // A move under way may wait on a database behind a partition: not waited for once failed.
      const unshared = sharing?.close();
      if (!failure) await unshared;
      if (restart && app.server.listening) {
        // The port goes to the standby at once (rejoin.ts); the requests under way get a second.
        const drained = new Promise<void>((resolve) => app.server.close(() => resolve()));
        options.leaving?.(restart);
        const cutOff = setTimeout(() => app.server.closeAllConnections(), HURRIED_STOP_MS);
        await drained;
        clearTimeout(cutOff);
      }
      await app.close().catch((err: unknown) => logger.warn({ err }, 'closing the server failed'));
      await webhooks.close(); // after the server: no delivery arrives now, the refusals held are written
      await scheduler.close();
      await email.close();
      await refused.close(); // before the checker its publishes use
      await engine.close();
      await flowChecker.close();
      await ai.close();
      await network.close();
      await stopTracing(); // after the engine and the server: their last spans are sent
      await store
        .close({ checkpoint: failure === null })
        .catch((err: unknown) => logger.error({ err }, 'final checkpoint failed'));
      await history.close().catch(() => undefined);
      await audit.close().catch(() => undefined);
      const current = await readFile(daemonJson, 'utf8').then(
        (t) => JSON.parse(t) as DaemonInfo,
        () => null,
      );
      if (current?.pid === process.pid) await unlink(daemonJson).catch(() => undefined);
      await lock.release();
      logger.info('stopped');
    } catch (err) {
      logger.error({ err }, 'stopping failed');
      throw err;
    } finally {
      closeLog(); // whatever failed, the lines that say so are written
    }
  };

  store.onFailure((err) => {
    logger.fatal({ err }, 'store failed: the daemon stops (restart it to recover from disk)');
    stopping ??= shutdown(err).then(() => settle.reject(err), settle.reject);
  });

  return {
    info,
    logger,
    engine,
    rejoin: () => {
      // Stopped as for good (leases released, so the others move on at once), then started again by rejoin.ts.
      const why = new WfxError('DAEMON_REJOINING', 'the daemon restarts to take partition 0 of its database');
      stopping ??= shutdown(null, why).then(() => settle.reject(why), settle.reject);
    },
    publishFile,
    coverage: parts.coverage,
    stopped,
    stop: () => {
      stopping ??= shutdown(null).then(settle.resolve, settle.reject);
      return stopped.catch(() => undefined);
    },
  };
}
