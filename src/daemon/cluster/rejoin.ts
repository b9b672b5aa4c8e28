/**
 * A daemon on a database (`--store`) that loses the database or its lease does not exit: its
 * store fails (crash-only: nothing is acknowledged that was not committed, and writes answer
 * 503 meanwhile), the daemon stops serving, and then starts again in this process as a standby:
 * it waits for the lease (another daemon may have taken over, or none: then it takes it back at
 * once) and loads the state from the database, never from what it held before. While the
 * database cannot be reached it tries again, from 1 s to 30 s apart. Its data directory stays
 * locked throughout, so `wfx daemon stop` finds it. While it stands by (so too a daemon started
 * with `--standby`), its port forwards every request to the daemon that serves the database
 * (standby-listener.ts), which it learns from the database's list of daemons (members.ts); with
 * none to forward to, it answers 503 DAEMON_STANDBY. (docs/decisions/037.)
 */
import { readFile, unlink } from 'node:fs/promises';
import { hostname } from 'node:os';
import { setTimeout as delay } from 'node:timers/promises';
import { dataDirPaths, type DaemonInfo } from '../../shared/data-dir.js';
import { isWfxError, WfxError } from '../../shared/errors.js';
import type { DaemonOptions, RunningDaemon } from '../process/daemon.js';
import { daemonId } from '../process/open-store.js';
import type { PreparedDataDir } from '../process/prepare.js';
import { StandbyListener } from './standby-listener.js';
import { writeDaemonJson } from '../process/daemon-json.js';
import { ClusterMember } from './members.js';
import { daemonSharing } from './serving.js';
import { DEFAULT_LEASE_MS } from '../store/pg/lease.js';
import { metricsAccessOf, type MetricsAccess } from '../api/metrics-route.js';
import { answerStandbyMetrics, standbyRegistry } from './standby-metrics.js';

type Start = (options: DaemonOptions, prepared: PreparedDataDir) => Promise<RunningDaemon>;

/** What ends a daemon on a database that it rejoins after. */
const REJOIN_AFTER = new Set(['STORE_LEASE_LOST', 'STORE_FAILED', 'DAEMON_REJOINING']);
/** Start failures that may pass (the database back, the port free again): tried again. */
const TRY_AGAIN = new Set(['DATABASE_UNREACHABLE', 'STORE_FAILED', 'PORT_IN_USE']);

const BACKOFF_FIRST_MS = 1_000;
const BACKOFF_MAX_MS = 30_000;

/** Runs `start` for a daemon on a database, starting it again whenever it loses the database or its lease. */
export async function rejoining(
  options: DaemonOptions,
  prepared: PreparedDataDir,
  start: Start,
): Promise<RunningDaemon> {
  const lock = prepared.lock;
  // Each start's stop leaves the lock alone: it is released when the whole ends.
  const kept: PreparedDataDir = { ...prepared, lock: { path: lock.path, release: async () => undefined } };
  let current: RunningDaemon;
  const member = new ClusterMember({
    connectionString: options.store!,
    id: await daemonId(options.dataDir),
    leaseMs: options.leaseMs ?? DEFAULT_LEASE_MS,
    shares: options.share ?? false,
    // The log of whichever start is current (each start opens the daemon's log anew).
    // (`current` is unset until the first start: nothing is said before then.)
    logger: {
      info: (line) => (current as RunningDaemon | undefined)?.logger.info(line),
      warn: (line) => (current as RunningDaemon | undefined)?.logger.warn(line),
    },
  });
  const standby = new Standby(options, member);
  const hooks = {
    beforeListen: () => (member.following(null), standby.close()),
    // The daemon stopped listening to restart: the port answers again before its stop ends.
    leaving: (why: WfxError) =>
      void standby
        .open(Number(new URL(current.info.url).port), `this daemon lost the database (${why.code}) and rejoins`)
        .catch(() => undefined),
    onStandby: (held: string) => standby.standingBy(held),
    onFollowing: (appliedSeq: (() => number) | null) => member.following(appliedSeq),
    cluster: () => member.list(),
    followed: () => member.followed(),
    ...(options.share && { sharing: daemonSharing(member, options.leaseMs) }),
  };
  // A sharing daemon starts once partitions are free for it: the others give theirs up when
  // they read it registered (by its listener, below), within a third of a lease.
  const joinPauseMs = (options.leaseMs ?? DEFAULT_LEASE_MS) / 3;
  const startJoining = async (run: DaemonOptions, prepared: PreparedDataDir, signal?: AbortSignal) => {
    for (;;) {
      try {
        return await start(run, prepared);
      } catch (err) {
        if (!options.share || !isWfxError(err) || err.code !== 'DATABASE_IN_USE') throw err;
        await standby.open(run.port ?? 7878, 'waiting for partitions the other daemons give up');
        await delay(joinPauseMs, undefined, { signal });
      }
    }
  };
  const giveUp = async (): Promise<void> => {
    await standby.close();
    await member.close();
    await lock.release();
  };
  try {
    // A standby answers on its port while it waits, even when that port is picked here (--port 0).
    if (options.standby || options.share)
      await standby.open(
        options.port ?? 7878,
        options.share ? 'joining the daemons sharing the database' : 'waiting for the lease on the database',
        true,
      );
    current = await startJoining(
      { ...options, ...hooks, ...(standby.port !== null && { port: standby.port }) },
      kept,
      options.abort,
    );
  } catch (err) {
    await giveUp();
    throw err;
  }
  // Not awaited: a database slow to answer the registration does not hold the start.
  void member.announce(advertised(options, current.info.url));
  // Again on the same port, even when the first start picked one (--port 0).
  const port = Number(new URL(current.info.url).port);
  const again: DaemonOptions = { ...options, ...hooks, port, standby: true };
  const aborting = new AbortController();
  let settle!: { resolve: () => void; reject: (err: unknown) => void };
  const stopped = new Promise<void>((resolve, reject) => (settle = { resolve, reject }));

  const run = async (): Promise<void> => {
    for (;;) {
      const ended = await current.stopped.then(
        () => null,
        (err: unknown) => err,
      );
      if (aborting.signal.aborted || !isWfxError(ended) || !REJOIN_AFTER.has(ended.code)) {
        await giveUp();
        return ended === null || aborting.signal.aborted ? settle.resolve() : settle.reject(ended);
      }
      await standby.open(port, `this daemon lost the database (${ended.code}) and rejoins`);
      for (let attempt = 0; ; attempt++) {
        try {
          current = await startJoining(
            { ...again, abort: aborting.signal },
            { ...kept, snapshotBytes: Promise.resolve(null) },
            aborting.signal,
          );
          void member.announce(advertised(options, current.info.url));
          break;
        } catch (err) {
          member.following(null); // its copy of the state went with the start that failed
          if (aborting.signal.aborted) {
            await giveUp();
            return settle.resolve();
          }
          if (!retryable(err)) {
            await giveUp();
            return settle.reject(err);
          }
          const waitMs = Math.min(BACKOFF_MAX_MS, BACKOFF_FIRST_MS * 2 ** attempt);
          const why = isWfxError(err) ? `${err.code}: ${err.message}` : (err as Error).message;
          // The port is free again if the start failed after handing it over: taken back.
          await standby.open(port, `the daemon could not start again (${why}); trying again in ${waitMs / 1000} s`);
          await delay(waitMs, undefined, { signal: aborting.signal }).catch(() => undefined);
        }
      }
    }
  };
  void run();

  return {
    get info() {
      return current.info;
    },
    get logger() {
      return current.logger;
    },
    get engine() {
      return current.engine;
    },
    get coverage() {
      return current.coverage;
    },
    publishFile: (file, environment) => current.publishFile(file, environment),
    rejoin: () => current.rejoin(),
    stopped,
    stop: async () => {
      aborting.abort();
      await current.stop();
      await stopped.catch(() => undefined);
    },
  };
}

/** Where the database's other daemons reach this one: --advertise-url, else where it listens (this host's name for a wildcard address). */
function advertised(options: DaemonOptions, listening: string): string {
  if (options.advertiseUrl) return options.advertiseUrl;
  const url = new URL(listening);
  if (url.hostname === '0.0.0.0' || url.hostname === '[::]') url.hostname = hostname();
  return url.origin;
}

function retryable(err: unknown): boolean {
  // The driver's own errors (a connection dropped during the start) are the database's too.
  return !(err instanceof WfxError) || TRY_AGAIN.has(err.code);
}

/**
 * The daemon's port while it stands by: the listener answering 503, and daemon.json naming it,
 * so that `wfx daemon status` finds the daemon and says why it does not serve.
 */
class Standby {
  private listener: StandbyListener | null = null;
  private readonly daemonJson: string;
  private readonly registry: ReturnType<typeof standbyRegistry>;
  private access: MetricsAccess | null = null;
  /** The last write of daemon.json (settled, whatever its outcome, before the next begins). */
  private naming: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly options: DaemonOptions,
    private readonly member: ClusterMember,
  ) {
    this.daemonJson = dataDirPaths(options.dataDir).daemonJson;
    this.registry = standbyRegistry({ behindEntries: () => member.behindEntries() });
  }

  /** The port it listens on; null when closed. */
  get port(): number | null {
    return this.listener?.port ?? null;
  }

  /**
   * Listens on `port` (or, already listening, says `reason` from now on). When the port cannot
   * be had (PORT_IN_USE), throws if `required` (the first start); else goes on without: the
   * daemon's own start, tried again, says so in its log.
   */
  async open(port: number, reason: string, required = false): Promise<void> {
    if (this.listener) {
      this.standingBy(reason);
      // Named again: a daemon that stopped after the listener opened took daemon.json away.
      return void (await this.nameInDaemonJson(this.listener.url));
    }
    try {
      const host = this.options.host ?? '127.0.0.1';
      const access = (this.access ??= await metricsAccessOf(
        host,
        this.options.metricsOpen ?? false,
        this.options.metricsTokenFile,
      ));
      this.listener = await StandbyListener.listen({
        host,
        port,
        retryAfterSeconds: Math.max(1, Math.ceil((this.options.leaseMs ?? DEFAULT_LEASE_MS) / 3000)),
        reason,
        forward: {
          id: this.member.id,
          target: () => this.member.servingDaemon()?.url ?? null,
          unreachable: () => void this.member.refresh(),
        },
        metrics: (request, reply) => answerStandbyMetrics(this.registry, access, request, reply),
      });
    } catch (err) {
      if (required) throw err;
      return;
    }
    // Registered at once, so that `wfx daemon status` on any daemon lists this one.
    void this.member.announce(advertised(this.options, this.listener.url));
    await this.nameInDaemonJson(this.listener.url);
  }

  /** Writes daemon.json naming `url`: one write at a time (two would share the file they are written through). */
  private nameInDaemonJson(url: string): Promise<unknown> {
    const after = this.naming.catch(() => undefined);
    return (this.naming = after.then(() => writeDaemonJson(this.options.dataDir, url)));
  }

  standingBy(reason: string): void {
    this.listener?.standingBy(reason);
  }

  /** Frees the port (the daemon takes it over, or stops), and daemon.json if it is still the standby's. */
  async close(): Promise<void> {
    const listener = this.listener;
    if (!listener) return;
    this.listener = null;
    const url = listener.url; // read before closing: a closed server has no address
    await listener.close();
    const current = await readFile(this.daemonJson, 'utf8').then(
      (text) => JSON.parse(text) as DaemonInfo,
      () => null,
    );
    if (current?.url === url && current.pid === process.pid) await unlink(this.daemonJson).catch(() => undefined);
  }
}
