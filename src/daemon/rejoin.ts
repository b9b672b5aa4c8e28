/**
 * A daemon on a database (`--store`) that loses the database or its lease does not exit: its
 * store fails (crash-only: nothing is acknowledged that was not committed, and writes answer
 * 503 meanwhile), the daemon stops serving, and then starts again in this process as a standby:
 * it waits for the lease (another daemon may have taken over, or none: then it takes it back at
 * once) and loads the state from the database, never from what it held before. While the
 * database cannot be reached it tries again, from 1 s to 30 s apart. Its data directory stays
 * locked throughout, so `wfx daemon stop` finds it. (docs/decisions/037.)
 */
import { setTimeout as delay } from 'node:timers/promises';
import { isWfxError, WfxError } from '../shared/errors.js';
import type { DaemonOptions, RunningDaemon } from './daemon.js';
import type { PreparedDataDir } from './prepare.js';

type Start = (options: DaemonOptions, prepared: PreparedDataDir) => Promise<RunningDaemon>;

/** What ends a daemon on a database that it rejoins after. */
const REJOIN_AFTER = new Set(['STORE_LEASE_LOST', 'STORE_FAILED']);
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
  let current = await start(options, kept).catch(async (err: unknown) => {
    await lock.release();
    throw err;
  });
  // Again on the same port, even when the first start picked one (--port 0).
  const again: DaemonOptions = { ...options, port: Number(new URL(current.info.url).port), standby: true };
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
        await lock.release();
        return ended === null || aborting.signal.aborted ? settle.resolve() : settle.reject(ended);
      }
      for (let attempt = 0; ; attempt++) {
        try {
          current = await start(
            { ...again, abort: aborting.signal },
            { ...kept, snapshotBytes: Promise.resolve(null) },
          );
          break;
        } catch (err) {
          if (aborting.signal.aborted) {
            await lock.release();
            return settle.resolve();
          }
          if (!retryable(err)) {
            await lock.release();
            return settle.reject(err);
          }
          await delay(Math.min(BACKOFF_MAX_MS, BACKOFF_FIRST_MS * 2 ** attempt), undefined, {
            signal: aborting.signal,
          }).catch(() => undefined);
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
    publishFile: (file, environment) => current.publishFile(file, environment),
    stopped,
    stop: async () => {
      aborting.abort();
      await current.stop();
      await stopped.catch(() => undefined);
    },
  };
}

function retryable(err: unknown): boolean {
  // The driver's own errors (a connection dropped during the start) are the database's too.
  return !(err instanceof WfxError) || TRY_AGAIN.has(err.code);
}
