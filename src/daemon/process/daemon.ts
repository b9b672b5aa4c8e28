/**
 * Starting a daemon: its data directory locked and its store recovered, its parts made in order
 * (secrets, engine, flows, triggers, the HTTP app), then listening. What runs while it serves,
 * and how it stops, is running.ts's.
 */
import { moveStateAudit } from '../store/audit-sweep.js';
import { FileAuditTrail } from '../store/audit-trail.js';
import type { AddressInfo } from 'node:net';
import { dataDirPaths } from '../../shared/data-dir.js';
import { writeDaemonJson } from './daemon-json.js';
import { isWfxError } from '../../shared/errors.js';
import { Engine } from '../engine/engine.js';
import { describeLimits } from '../engine/limits.js';
import { DEFAULT_EXECUTION_CACHE, EXECUTION_CACHE_BY_ENV } from '../at-rest/execution-cache.js';
import { NetworkPolicy } from '../outbound/network-policy.js';
import { EmailTriggers } from '../triggers/email.js';
import { Scheduler } from '../triggers/schedules.js';
import { createFlowCheckPool } from '../flows/check-pool.js';
import { CoverageBoard } from '../flows/coverage-board.js';
import { FlowFileOwners } from '../flows/file-owners.js';
import { publishFlowFile, type FileOutcome } from '../flows/load-dir.js';
import { logOutcome, publishFlows } from '../flows/publish-log.js';
import { RefusedFlowFiles } from '../flows/refused-files.js';
import { WebhookReceiver } from '../triggers/webhooks.js';
import { createDaemonLogger } from './logger.js';
import { createAiRunner } from '../ai/runner.js';
import { FileStore } from '../files/file-store.js';
import { turnOffPretenuring } from './v8-flags.js';
import { buildServer } from '../api/server.js';
import { startTracing, stopTracing } from '../observe/tracing-setup.js';
import { connectionLimits } from '../api/connections.js';
import { readOpenFilesLimit } from '../api/open-files.js';
import type { Environment, WfxState } from '../state/state.js';
import { History } from '../store/history.js';
import { bootstrap } from './bootstrap.js';
import { backupDataDir } from '../ops/backup.js';
import { prepareDataDir, type PreparedDataDir } from './prepare.js';
import { dataDirError, listenError } from './start-errors.js';
import { Store } from '../store/store.js';
import { openStore } from './open-store.js';
import type { DaemonOptions } from './daemon-options.js';
import { checkKeysHeld, keySourceOf, openSecrets } from '../secrets/open-secrets.js';
import { DaemonMetrics } from '../observe/metrics.js';
import { metricsAccessOf } from '../api/metrics-route.js';
import { historyBytes, webhookVerdict } from '../observe/metrics-sources.js';

import { DEFAULT_RETENTION_MS, serve, type RunningDaemon } from './running.js';

export type { DaemonOptions, RunningDaemon };

/**
 * Starts a daemon on `options.dataDir`: lock the directory, recover the store, create the
 * bootstrap credential on first start, listen, write `daemon.json`. `prepared`: the directory
 * locked already, its snapshot being read (`prepareDataDir`, before this module loaded); this
 * daemon then owns its lock. Throws WfxError DATA_DIR_INVALID (also for a data directory that
 * cannot be written), DATA_DIR_LOCKED, JOURNAL_CORRUPT, SNAPSHOT_CORRUPT, DATA_DIR_DAMAGED,
 * SECRETS_KEY_MISSING, SECRETS_KEY_INVALID, PORT_IN_USE or LISTEN_FAILED.
 */
export async function startDaemon(options: DaemonOptions, prepared?: PreparedDataDir): Promise<RunningDaemon> {
  turnOffPretenuring();
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
    const source = await keySourceOf(options.secretsKey, options.dataDir);
    // A standby lacking a key the database's secrets need is refused now, not at its takeover.
    const onStandbyLoaded = (state: WfxState) => options.secretsKey?.forgetMissing || checkKeysHeld(state, source);
    const executionCache = options.executionCache ?? EXECUTION_CACHE_BY_ENV ?? DEFAULT_EXECUTION_CACHE;
    // What a checkpoint wrote stays on disk until touched: the engine's cache reads it back.
    const opened = await openStore({ ...options, onStandbyLoaded, lazyExecutions: true }, snapshotBytes, logger);
    const { store, history, audit, blobs, kind: storeKind, pg } = opened;
    const host = options.host ?? '127.0.0.1';
    const metricsAccess = await metricsAccessOf(host, options.metricsOpen ?? false, options.metricsTokenFile);
    const metrics = new DaemonMetrics(store.state);
    metrics.readFrom({
      ...(store instanceof Store && { checkpoints: () => store.checkpointStats }),
      ...(history instanceof History && { historyBytes: () => historyBytes(paths.history) }),
      ...(pg && {
        lease: () => ({ held: true, renewedMsAgo: store.health().renewedMsAgo ?? 0, partitions: pg.held.length }),
      }),
    });
    cleanup.unshift(() => store.close({ checkpoint: false }));
    cleanup.unshift(() => history.close());
    cleanup.unshift(() => audit.close());
    // Partition 0's holder (every daemon but one sharing a database is not) writes the
    // directory and runs the triggers and sweeps; the others run executions (decision 041).
    const directory = !pg || pg.held.includes(0);
    // With `share`, rejoin.ts gives the cluster room's part (process/cluster-port.ts), built on the store once open.
    const shared = pg && options.share && options.sharing ? { store: pg, sharing: options.sharing } : null;
    if (directory) await bootstrap(store, paths, logger);
    const moved = directory ? await moveStateAudit(store, audit) : 0;
    if (moved > 0) logger.info({ moved }, 'audit: moved the records kept in the state to the trail');
    const forgetMissing = options.secretsKey?.forgetMissing;
    const secrets = await openSecrets({ source, store, directory, logger, forgetMissing });
    // Connections wait for the listener's address: calls resumed below must not reach it.
    if (options.tracing) metrics.traceExports(startTracing(options.tracing));
    cleanup.unshift(() => stopTracing());
    const network = new NetworkPolicy({ deny: options.httpDeny, allow: options.httpAllow, awaitListener: true });
    cleanup.unshift(() => network.close());
    // One model runner for the daemon: a local model loads once and serves every call.
    const ai = createAiRunner({
      log: (line) => logger.warn(`ai: ${line}`),
      network,
      observe: (provider, outcome, s, usage) =>
        metrics.modelCall(
          provider ?? 'default',
          outcome,
          s,
          usage && { input: usage.inputTokens, output: usage.outputTokens },
        ),
    });
    cleanup.unshift(() => ai.close());
    // The engine's, once made: what the file sweep reads of executions not in memory.
    let learnColdFiles = (): Promise<boolean> => Promise.resolve(false);
    const files = new FileStore({
      dir: paths.files,
      learnColdFiles: () => learnColdFiles(),
      ...(blobs && { blobs }),
      store,
      history,
      retentionMs: options.retentionMs ?? DEFAULT_RETENTION_MS,
      ...(options.maxFileBytes !== undefined && { maxBytes: options.maxFileBytes }),
    });
    const serving = shared ? await shared.sharing.serve(shared.store, logger) : null;
    // Timers that came due while the daemon was down fire once it answers (EngineOptions.timersAfter).
    let listened = (): void => undefined;
    const listening = new Promise<void>((resolve) => (listened = resolve));
    const engine = new Engine({
      store,
      history,
      network,
      ai,
      files,
      secrets,
      ...(options.secretsDir !== undefined && { secretsDir: options.secretsDir }),
      maxJsonDepth: options.maxJsonDepth,
      ...(options.limits && { limits: options.limits }),
      ...(options.bulkRate !== undefined && { bulkRate: options.bulkRate }),
      executionCache,
      onError: (err, what) => logger.error({ err }, `engine: ${what} failed`),
      ...(serving && { cluster: serving.engine }),
      observe: metrics,
      timersAfter: listening,
    });
    cleanup.unshift(() => engine.close());
    learnColdFiles = () => engine.executions.learnColdFiles();
    metrics.readFrom({ executions: () => engine.executions.coldStats() });
    logger.info(`engine limits: ${describeLimits(engine.limits)}`);
    const recovering = performance.now();
    await engine.recover();
    engine.executions.trim(); // executions beyond the cache, loaded to be recovered, leave memory
    logger.info({ timers: engine.timerCount, ms: Math.round(performance.now() - recovering) }, 'engine: recovered');
    // Flows are checked off the event loop, at start (--flows) as over the API.
    const flowChecker = createFlowCheckPool();
    cleanup.unshift(() => flowChecker.close());
    // Which file each processId was published from: a second file with one is refused.
    const flowFiles = new FlowFileOwners();
    const publishFile = async (file: string, environment: Environment): Promise<FileOutcome> => {
      // The directory is partition 0's holder's to write (another daemon sharing the database).
      const outcome: FileOutcome = directory
        ? await publishFlowFile(store, file, { organization: 'default', environment }, flowChecker, flowFiles)
        : { file, ok: false, problems: [], error: 'another daemon of the database holds its directory: publish there' };
      logOutcome(logger, outcome, environment);
      refused.note(outcome, environment);
      return outcome;
    };
    // A file refused for an unknown webhook (tool, domain...) is published once that is registered.
    const refused = new RefusedFlowFiles(store, publishFile);
    cleanup.unshift(() => refused.close());
    if (options.flowsDir && directory) {
      const environment = options.flowsEnvironment ?? 'PRODUCTION';
      const outcomes = await publishFlows(store, options.flowsDir, environment, logger, flowChecker, flowFiles);
      for (const o of outcomes) refused.note(o, environment);
    }
    const webhooks = new WebhookReceiver({
      store,
      engine,
      maxJsonDepth: options.maxJsonDepth,
      replayWindowMs: options.webhookReplayWindowMs,
      onError: (err, what) => logger.error({ err }, `webhooks: ${what} failed`),
      onRefused: (what) => logger.warn(`webhooks: ${what}`),
      onWarn: (message) => logger.warn(message),
      // `wfx dev` publishes to DEVELOPMENT: its shared endpoints run what it publishes (webhook-route.ts).
      ...(options.flowsEnvironment === 'DEVELOPMENT' && { sharedFallback: 'DEVELOPMENT' as const }),
    });
    webhooks.on('processed', ({ record }) => metrics.webhookDelivery(webhookVerdict(record)));
    if (directory) await webhooks.recover();
    const scheduler = new Scheduler({
      store,
      engine,
      onError: (err, what) => logger.error({ err }, `scheduler: ${what} failed`),
      onMissed: (n) => metrics.scheduleMissed(n),
    });
    cleanup.unshift(() => scheduler.close());
    if (directory) await scheduler.start();
    const email = new EmailTriggers({
      store,
      engine,
      files,
      pacer: webhooks.pacer,
      onError: (err, what) => logger.warn({ err }, `email trigger: ${what} failed`),
    });
    cleanup.unshift(() => email.close());
    if (directory) email.start();
    // jose (dozens of ES modules) loads only for a daemon that accepts OIDC tokens: loaded always,
    // it slowed every start (docs/decisions/019-restart-path.md).
    const bearer = options.oidc ? (await import('../api/oidc.js')).createOidcVerifier(options.oidc) : undefined;
    // The console's OIDC client, likewise loaded only when configured (openid-client).
    const login =
      options.oidc && options.oidcClient && bearer
        ? new (await import('../api/console/oidc-login.js')).OidcLogin(
            { issuer: options.oidc.issuer, ...options.oidcClient },
            bearer,
          )
        : undefined;
    const coverage = new CoverageBoard(store);
    const connections = connectionLimits(options, readOpenFilesLimit(), (line) => logger.warn(line));
    const app = buildServer({
      store,
      engine,
      audit,
      webhooks,
      ai,
      logger,
      accessLog,
      bodyLimit: options.bodyLimit,
      maxJsonDepth: options.maxJsonDepth,
      bearer,
      console: { login },
      publicUrl: options.publicUrl,
      triggerHealth: () => [...scheduler.health(), ...email.health()],
      scheduler,
      emailStates: (id) => email.connectionState(id),
      historyDamage: () => history.damage(),
      storeHealth: () => store.health(),
      ...(options.cluster && { cluster: options.cluster }),
      ...(serving && { sharing: serving.server }),
      // A database is backed up with its own tools (docs/operations.md): no route for it here.
      ...(store instanceof Store &&
        history instanceof History &&
        audit instanceof FileAuditTrail && {
          // The key is not in the copy (with it, the copy's secrets could be read): the answer says where it is.
          backup: async (directory: string) => ({
            ...(await backupDataDir(
              { dataDir: options.dataDir, store, history, audit: audit.files, logger },
              directory,
            )),
            secretsKey: { where: secrets.where, keyIds: secrets.keyIds() },
          }),
        }),
      files,
      flowChecker,
      coverage,
      connections,
      metrics: { of: metrics, access: metricsAccess },
    });
    const port = options.port ?? 7878;
    // Ready first: the standby's listener closes (beforeListen) just before the daemon listens.
    await app.ready();
    await options.beforeListen?.();
    await app.listen({ host, port }).catch(async (err: unknown) => {
      throw await listenError(err, host, port);
    });
    cleanup.unshift(() => app.close());
    const address = app.server.address() as AddressInfo;
    network.listening(address.address, address.port);
    const urlHost = address.family === 'IPv6' ? `[${address.address}]` : address.address;
    const dev = options.flowsEnvironment === 'DEVELOPMENT' ? 'DEVELOPMENT' : undefined;
    const info = await writeDaemonJson(options.dataDir, `http://${urlHost}:${address.port}`, dev);
    listened();
    logger.info(
      {
        url: info.url,
        dataDir: options.dataDir,
        store: storeKind.location,
        bootstrapKey: paths.bootstrapKey,
        maxConnections: connections.maxConnections,
      },
      'wfx daemon listening',
    );
    // Up: the route validators and serializers not compiled yet are compiled now, a turn of the
    // event loop at a time.
    app.compileSchemas().catch((err: unknown) => logger.error({ err }, 'a route schema does not compile'));
    const sharing = serving ? serving.moves({ engine, takeCatalogue: () => running.rejoin() }) : null;
    const running = serve({
      options,
      directory,
      sharing,
      info,
      logger,
      closeLog,
      lock,
      store,
      history,
      audit,
      engine,
      ai,
      network,
      files,
      scheduler,
      email,
      webhooks,
      app,
      flowChecker,
      publishFile,
      coverage,
      refused,
      daemonJson: paths.daemonJson,
    });
    sharing?.start();
    return running;
  } catch (err) {
    for (const undo of cleanup) await undo().catch(() => undefined);
    const failure = dataDirError(err, options.dataDir);
    // A foreseeable failure is logged by its code and message: a stack would read as a bug.
    // A sharing daemon waiting for partitions to be free is not failing (rejoin.ts tries again).
    if (isWfxError(failure) && failure.code === 'DATABASE_IN_USE' && options.share)
      logger.info(`waiting to join: ${failure.message}`);
    else if (isWfxError(failure))
      logger.error(
        { code: failure.code, details: failure.details },
        `wfx daemon failed to start: ${failure.code}: ${failure.message}`,
      );
    else logger.error({ err }, 'wfx daemon failed to start');
    closeLog();
    throw failure;
  }
}
