import { readdir, readFile, unlink } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import { dataDirPaths, type DaemonInfo } from '../shared/data-dir.js';
import { writeDaemonJson } from './daemon-json.js';
import type { ClusterDaemon } from '../shared/api/index.js';
import { isWfxError, WfxError } from '../shared/errors.js';
import { formatProblem } from '../shared/flow/validate.js';
import { newApiKey } from './auth/api-keys.js';
import type { OidcOptions } from './auth/oidc.js';
import { Engine } from './engine/engine.js';
import { NetworkPolicy } from './engine/work/network-policy.js';
import { EmailTriggers } from './triggers/email.js';
import { Scheduler } from './triggers/schedules.js';
import { publishFlowDir, publishFlowFile, type FileOutcome } from './flows/load-dir.js';
import { WebhookReceiver } from './triggers/webhooks.js';
import { createDaemonLogger } from './logger.js';
import { createAiRunner } from './ai/runner.js';
import { FileStore } from './files/file-store.js';
import type { AiRunner } from './ai/types.js';
import { tuneGarbageCollector } from './gc-tuning.js';
import { buildServer } from './server.js';
import type { WfxRecord } from './state/records.js';
import type { Environment, WfxState } from './state/state.js';
import { writeFileAtomic } from './store/fs-util.js';
import { History } from './store/history.js';
import type { HistoryStore } from './store/history-store.js';
import { BUCKET_RE } from './store/history-check.js';
import { backupDataDir } from './backup.js';
import type { DataDirLock } from './store/lock.js';
import { prepareDataDir, type PreparedDataDir } from './prepare.js';
import { dataDirError, listenError } from './start-errors.js';
import type { RecordStore } from './store/record-store.js';
import { Store } from './store/store.js';
import { openStore, type StoreChoice } from './open-store.js';

export interface DaemonOptions extends Omit<StoreChoice, 'dataDir'> {
  readonly dataDir: string;
  /** Default 127.0.0.1. */
  readonly host?: string;
  /** Default 7878; 0 picks a free port. */
  readonly port?: number;
  /** Called just before the daemon listens: frees its port of the standby's listener (rejoin.ts). */
  readonly beforeListen?: () => Promise<void>;
  /** On a database: the daemons on it (GET /admin/cluster, rejoin.ts). */
  readonly cluster?: () => Promise<ClusterDaemon[]>;
  /** Also log readable lines to stdout. */
  readonly foreground?: boolean;
  /** Finished executions and their logs older than this are pruned (default 7 days). */
  readonly retentionMs?: number;
  /** Checkpoint at least this often when anything changed (default 5 minutes). */
  readonly checkpointIntervalMs?: number;
  /** Checkpoint after this many journal entries (default 50,000). */
  readonly checkpointEvery?: number;
  readonly logLevel?: string;
  /** Largest request body in bytes (default 1 MiB). */
  readonly bodyLimit?: number;
  /**
   * How deep untrusted JSON may nest objects and arrays (default 64): request bodies, webhook
   * payloads, work results and the variables a node sets. See src/shared/json-shape.ts.
   */
  readonly maxJsonDepth?: number;
  /** The largest file the file store takes, in bytes (default DEFAULT_MAX_FILE_BYTES). */
  readonly maxFileBytes?: number;
  /** A directory of flow files to validate and publish (organization default) at start. */
  readonly flowsDir?: string;
  /** The environment `flowsDir` is published to (default PRODUCTION). */
  readonly flowsEnvironment?: Environment;
  /** Accept bearer JWTs from this OIDC issuer (SPEC.md section 6). */
  readonly oidc?: OidcOptions;
  /** A webhook delivery's event id (and body hash) makes a later one a duplicate this long (default 72 hours). */
  readonly webhookReplayWindowMs?: number;
  /** CIDRs serviceTask calls may never connect to (work/network-policy.ts); wins over `httpAllow`. */
  readonly httpDeny?: readonly string[];
  /** CIDRs serviceTask calls may connect to though a built-in rule refuses them (own listener, link-local). */
  readonly httpAllow?: readonly string[];
}

/** A daemon that is serving. */
export interface RunningDaemon {
  readonly info: DaemonInfo;
  readonly logger: Logger;
  readonly engine: Engine;
  /** Validates and publishes one flow file into organization default (wfx dev); logs the outcome. */
  publishFile(file: string, environment: Environment): Promise<FileOutcome>;
  /** Stops gracefully: stop accepting, finish in-flight requests, checkpoint, release the lock. */
  stop(): Promise<void>;
  /** Settles when the daemon has stopped; rejects with the cause if its store failed. */
  readonly stopped: Promise<void>;
}

const DAY_MS = 24 * 60 * 60 * 1000;
const RETENTION_SWEEP_MS = 60 * 60 * 1000;

/**
 * Starts a daemon on `options.dataDir`: lock the directory, recover the store, create the
 * bootstrap credential on first start, listen, write `daemon.json`. `prepared`: the directory
 * locked already, its snapshot being read (`prepareDataDir`, before this module loaded); this
 * daemon then owns its lock. Throws WfxError DATA_DIR_INVALID (also for a data directory that
 * cannot be written), DATA_DIR_LOCKED, JOURNAL_CORRUPT, SNAPSHOT_CORRUPT, DATA_DIR_DAMAGED,
 * PORT_IN_USE or LISTEN_FAILED.
 */
export async function startDaemon(options: DaemonOptions, prepared?: PreparedDataDir): Promise<RunningDaemon> {
  tuneGarbageCollector();
  const paths = dataDirPaths(options.dataDir);
  if (prepared && prepared.dataDir !== options.dataDir) {
    await prepared.lock.release();
    throw new Error(`the data directory prepared (${prepared.dataDir}) is not the daemon's (${options.dataDir})`);
  }
  const { lock, snapshotBytes } = prepared ?? (await prepareDataDir(options.dataDir));
  const {
    logger,
    accessLog,
    close: closeLog,
  } = createDaemonLogger({
    logFile: paths.daemonLog,
    foreground: options.foreground ?? false,
    level: options.logLevel,
  });
  const cleanup: Array<() => Promise<unknown>> = [() => lock.release()];
  try {
    const { store, history, blobs, kind: storeKind } = await openStore(options, snapshotBytes, logger);
    cleanup.unshift(() => store.close({ checkpoint: false }));
    cleanup.unshift(() => history.close());
    await bootstrap(store, paths, logger);
    // Connections wait for the listener's address: calls resumed below must not reach it.
    const network = new NetworkPolicy({ deny: options.httpDeny, allow: options.httpAllow, awaitListener: true });
    cleanup.unshift(() => network.close());
    // One model runner for the daemon: a local model loads once and serves every call.
    const ai = createAiRunner({ log: (line) => logger.warn(`ai: ${line}`), network });
    cleanup.unshift(() => ai.close());
    const files = new FileStore({
      dir: paths.files,
      ...(blobs && { blobs }),
      store,
      history,
      retentionMs: options.retentionMs ?? 7 * DAY_MS,
      ...(options.maxFileBytes !== undefined && { maxBytes: options.maxFileBytes }),
    });
    const engine = new Engine({
      store,
      history,
      network,
      ai,
      files,
      maxJsonDepth: options.maxJsonDepth,
      onError: (err, what) => logger.error({ err }, `engine: ${what} failed`),
    });
    cleanup.unshift(() => engine.close());
    await engine.recover();
    if (options.flowsDir) await publishFlows(store, options.flowsDir, options.flowsEnvironment ?? 'PRODUCTION', logger);

    const webhooks = new WebhookReceiver({
      store,
      engine,
      maxJsonDepth: options.maxJsonDepth,
      replayWindowMs: options.webhookReplayWindowMs,
      onError: (err, what) => logger.error({ err }, `webhooks: ${what} failed`),
      onRefused: (what) => logger.warn(`webhooks: ${what}`),
      onWarn: (message) => logger.warn(message),
    });
    await webhooks.recover();
    const scheduler = new Scheduler({
      store,
      engine,
      onError: (err, what) => logger.error({ err }, `scheduler: ${what} failed`),
    });
    cleanup.unshift(() => scheduler.close());
    await scheduler.start();
    const email = new EmailTriggers({
      store,
      engine,
      files,
      onError: (err, what) => logger.warn({ err }, `email trigger: ${what} failed`),
    });
    cleanup.unshift(() => email.close());
    email.start();
    // jose (dozens of ES modules) loads only for a daemon that accepts OIDC tokens: loaded always,
    // it slowed every start (docs/decisions/019-restart-path.md).
    const bearer = options.oidc ? (await import('./auth/oidc.js')).createOidcVerifier(options.oidc) : undefined;
    const app = buildServer({
      store,
      engine,
      webhooks,
      ai,
      logger,
      accessLog,
      bodyLimit: options.bodyLimit,
      maxJsonDepth: options.maxJsonDepth,
      bearer,
      triggerHealth: () => [...scheduler.health(), ...email.health()],
      historyDamage: () => history.damage(),
      storeHealth: () => store.health(),
      ...(options.cluster && { cluster: options.cluster }),
      // A database is backed up with its own tools (docs/operations.md): no route for it here.
      ...(store instanceof Store &&
        history instanceof History && {
          backup: (directory: string) => backupDataDir({ dataDir: options.dataDir, store, history }, directory),
        }),
      files,
    });
    const [host, port] = [options.host ?? '127.0.0.1', options.port ?? 7878];
    await options.beforeListen?.();
    await app.listen({ host, port }).catch(async (err: unknown) => {
      throw await listenError(err, host, port);
    });
    cleanup.unshift(() => app.close());
    const address = app.server.address() as AddressInfo;
    network.listening(address.address, address.port);
    const urlHost = address.family === 'IPv6' ? `[${address.address}]` : address.address;
    const info = await writeDaemonJson(options.dataDir, `http://${urlHost}:${address.port}`);
    logger.info(
      { url: info.url, dataDir: options.dataDir, store: storeKind.location, bootstrapKey: paths.bootstrapKey },
      'wfx daemon listening',
    );
    // Up: the route validators not compiled yet are compiled now, a turn of the event loop at a time.
    app.compileValidators().catch((err: unknown) => logger.error({ err }, 'a route schema does not compile'));
    return serve({
      options,
      info,
      logger,
      closeLog,
      lock,
      store,
      history,
      engine,
      ai,
      network,
      files,
      scheduler,
      email,
      app,
      daemonJson: paths.daemonJson,
    });
  } catch (err) {
    for (const undo of cleanup) await undo().catch(() => undefined);
    const failure = dataDirError(err, options.dataDir);
    // A foreseeable failure is logged by its code and message: a stack would read as a bug.
    if (isWfxError(failure))
      logger.error(
        { code: failure.code, details: failure.details },
        `wfx daemon failed to start: ${failure.code}: ${failure.message}`,
      );
    else logger.error({ err }, 'wfx daemon failed to start');
    closeLog();
    throw failure;
  }
}

function serve(parts: {
  options: DaemonOptions;
  info: DaemonInfo;
  logger: Logger;
  closeLog: () => void;
  lock: DataDirLock;
  store: RecordStore<WfxState, WfxRecord>;
  history: HistoryStore;
  engine: Engine;
  ai: AiRunner;
  network: NetworkPolicy;
  files: FileStore;
  scheduler: Scheduler;
  email: EmailTriggers;
  app: ReturnType<typeof buildServer>;
  daemonJson: string;
}): RunningDaemon {
  const { options, info, logger, closeLog, lock, store, history, engine, ai, network, files, scheduler, email, app } =
    parts;
  const { daemonJson } = parts;
  const retentionMs = options.retentionMs ?? 7 * DAY_MS;
  let stopping: Promise<void> | null = null;
  let settle!: { resolve: () => void; reject: (err: unknown) => void };
  const stopped = new Promise<void>((resolve, reject) => (settle = { resolve, reject }));

  const prune = async (): Promise<void> => {
    const report = await history.prune(new Date(Date.now() - retentionMs));
    if (report.buckets > 0) logger.info(report, 'history: pruned finished executions past retention');
    const swept = await files.sweep();
    if (swept.deleted + swept.kept + swept.blobs > 0) logger.info(swept, 'files: swept files past retention');
  };
  const timers = [
    setInterval(() => void store.checkpoint().catch(() => undefined), options.checkpointIntervalMs ?? 5 * 60_000),
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
  ];
  for (const t of timers) t.unref();
  void prune().catch((err: unknown) => logger.warn({ err }, 'retention: pruning history or files failed'));

  const shutdown = async (failure: WfxError | null): Promise<void> => {
    for (const t of timers) clearInterval(t);
    logger.info(failure ? 'stopping after a store failure' : 'stopping');
    try {
      await app.close().catch((err: unknown) => logger.warn({ err }, 'closing the server failed'));
      await scheduler.close();
      await email.close();
      await engine.close();
      await ai.close();
      await network.close();
      await store
        .close({ checkpoint: failure === null })
        .catch((err: unknown) => logger.error({ err }, 'final checkpoint failed'));
      await history.close().catch(() => undefined);
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
    publishFile: async (file, environment) => {
      const outcome = await publishFlowFile(store, file, { organization: 'default', environment });
      logOutcome(logger, outcome, environment);
      return outcome;
    },
    stopped,
    stop: () => {
      stopping ??= shutdown(null).then(settle.resolve, settle.reject);
      return stopped.catch(() => undefined);
    },
  };
}

/**
 * On the first start of an empty data directory: creates organization `default` and an admin
 * system key, written to `bootstrap.key` (0600). The key file is written before the records are
 * committed, so a crash in between leaves an empty store, and the next start makes a new key.
 * The key itself is never logged. An empty store beside history files is not a first start but a
 * directory that lost its state (snapshot, manifest and journal all gone): that start is refused
 * with DATA_DIR_DAMAGED rather than begun anew over the history and the key.
 */
async function bootstrap(
  store: RecordStore<WfxState, WfxRecord>,
  paths: { bootstrapKey: string; history: string },
  logger: Logger,
): Promise<void> {
  if (Object.keys(store.state.organizations).length > 0) return;
  const keyFile = paths.bootstrapKey;
  const buckets = (await readdir(paths.history).catch(() => [] as string[])).filter((name) => BUCKET_RE.test(name));
  if (buckets.length > 0) {
    throw new WfxError(
      'DATA_DIR_DAMAGED',
      `the data directory has no state (no snapshot, manifest or journal) but ${buckets.length} history file(s) in ${paths.history}: its state was lost, not created`,
      {
        details: { file: paths.history },
      },
    );
  }
  const { key, apiKey } = newApiKey({ name: 'bootstrap', organization: null, role: 'admin', at: new Date() });
  await writeFileAtomic(keyFile, `${apiKey}\n`);
  await store.commit(
    { type: 'organization.created', name: 'default', at: key.createdAt },
    { type: 'apiKey.created', key },
  );
  const keyId = key.keyId;
  logger.info({ keyId, file: keyFile }, 'first start: created organization "default" and a bootstrap admin key');
}

/** Publishes the flow files of `dir`; a file that does not validate is logged with its problems, not fatal. */
async function publishFlows(
  store: RecordStore<WfxState, WfxRecord>,
  dir: string,
  environment: Environment,
  logger: Logger,
): Promise<void> {
  const outcomes = await publishFlowDir(store, dir, { organization: 'default', environment }).catch((err: unknown) => {
    logger.warn({ err, dir }, 'flows: cannot read the flows directory');
    return [];
  });
  for (const o of outcomes) logOutcome(logger, o, environment);
}

function logOutcome(logger: Logger, o: FileOutcome, environment: Environment): void {
  if (o.ok) {
    const what = o.result.created ? `version ${o.result.version}` : `version ${o.result.version}, unchanged`;
    logger.info(
      { file: o.file, processId: o.result.processId, version: o.result.version, environment },
      `flows: published "${o.result.name}" (${what}) to ${environment}`,
    );
  } else {
    const lines = o.error ? [`${o.file}: ${o.error}`] : o.problems.map((p) => formatProblem(o.file, p));
    // The problems once, in the message: a field repeating them printed each twice on a terminal.
    logger.warn(
      { file: o.file, problemCount: lines.length },
      `flows: not published, it does not validate:\n  ${lines.join('\n  ')}`,
    );
  }
}
