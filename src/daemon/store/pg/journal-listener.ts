/**
 * What wakes a journal follower (journal-follower.ts) while it keeps a copy current: the NOTIFY
 * each group commit sends (fenced-sql.ts), heard on a session of its own, and a poll every third
 * of a lease in case one is missed; the catch-ups they ask for run one at a time, coalesced. The
 * lease's NOTIFY ends a standby's pause between its tries to take the lease (lease.ts). What a
 * catch-up reads and applies is the follower's.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import type { StoreLogger } from '../durable-store.js';
import { LEASE_CHANNEL } from './lease.js';

/** The NOTIFY channel of journal appends; the payload is the partition. */
export const JOURNAL_CHANNEL = 'wfx_journal';

/** The follower a listener wakes (JournalFollower). */
export interface Listened {
  /** The partitions followed: a notification of another is not for it. */
  readonly partitions: readonly number[];
  /** One catch-up (JournalFollower.catchUp). */
  catchUp(): Promise<unknown>;
  /** Why the copy cannot be trusted, or null while it can (JournalFollower.broken). */
  broken(): unknown;
  /** Whether a break is told to whoever follows (follow's onBroken): then it is not logged here. */
  told(): boolean;
}

/** The notifications and the poll that keep a follower catching up, and the standby's pause. */
export class JournalListener {
  private listener: pg.Client | null = null;
  private poll: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  private again = false;
  private stopped = false;
  private warned = false;
  /** Pauses to end when the lease is released. */
  private readonly released: Array<() => void> = [];
  /** A release was told while no pause was under way. */
  private releaseSeen = false;

  constructor(private readonly follower: Listened) {}

  /**
   * Keeps the copy current until `stop`: a catch-up on each NOTIFY of a partition followed and
   * every `everyMs`. A catch-up that fails (the database unreachable for a while) is tried again
   * at the next; a broken copy stops following.
   */
  follow(connectionString: string, everyMs: number, logger: StoreLogger): void {
    const tick = (): void => {
      if (this.stopped) return;
      this.listener ??= this.listen(connectionString, logger);
      this.kick(logger);
    };
    this.poll = setInterval(tick, everyMs);
    this.poll.unref();
    tick();
  }

  /**
   * Waits `ms`, or less if the partition's lease is released meanwhile (the lease's NOTIFY):
   * the pause of a standby's tries to take it (lease.ts).
   */
  pause(ms: number, signal?: AbortSignal): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const done = (): void => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', done);
        const at = this.released.indexOf(done);
        if (at >= 0) this.released.splice(at, 1);
        // Aborted: rejects as the timer's own sleep does (an AbortError).
        if (signal?.aborted) sleep(0, undefined, { signal }).then(resolve, reject);
        else resolve();
      };
      const timer = setTimeout(done, ms);
      signal?.addEventListener('abort', done);
      this.released.push(done);
      if (this.releaseSeen || signal?.aborted) done();
      this.releaseSeen = false;
    });
  }

  /** Stops following and waits for a catch-up under way. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.poll) clearInterval(this.poll);
    this.poll = null;
    await this.running?.catch(() => undefined);
    const listener = this.listener;
    this.listener = null;
    // Not awaited: a listener stuck connecting must not hold a takeover.
    void listener?.end().catch(() => undefined);
  }

  /** A catch-up now, or right after the one under way (notifications coalesce). */
  private kick(logger: StoreLogger): void {
    if (this.stopped || this.follower.broken()) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = this.follower
      .catchUp()
      .then(
        () => {
          if (this.warned) logger.info({}, 'store: the standby follows the journal again');
          this.warned = false;
        },
        (err: unknown) => {
          if (this.follower.broken() && this.follower.told()) return;
          if (this.follower.broken())
            logger.warn({ err }, 'store: the standby stops following the journal; a takeover loads it');
          else if (!this.warned) logger.warn({ err }, 'store: the standby cannot follow the journal for now');
          this.warned = true;
        },
      )
      .finally(() => {
        this.running = null;
        if (this.again) {
          this.again = false;
          this.kick(logger);
        }
      });
  }

  /** A session of its own that LISTENs (a pooled connection cannot keep a LISTEN). */
  private listen(connectionString: string, logger: StoreLogger): pg.Client {
    const client = new pg.Client({
      connectionString,
      application_name: 'wfx standby',
      keepAlive: true,
      connectionTimeoutMillis: 10_000,
    });
    const forget = (): void => {
      if (this.listener === client) this.listener = null; // the next tick connects again
      void client.end().catch(() => undefined);
    };
    client.on('error', forget);
    client.on('end', forget);
    client.on('notification', (n) => {
      if (!this.follower.partitions.includes(Number(n.payload))) return;
      if (n.channel === JOURNAL_CHANNEL) this.kick(logger);
      else if (n.channel === LEASE_CHANNEL) {
        // Kept for the next pause if none is under way (told between a try and its pause).
        this.releaseSeen = this.released.length === 0;
        for (const wake of this.released.splice(0)) wake();
      }
    });
    // Listening, it catches up once more: an entry appended between the last catch-up and the
    // LISTEN sent a notification nobody heard (the next poll is a third of a lease away).
    client
      .connect()
      .then(() => client.query(`LISTEN ${JOURNAL_CHANNEL}; LISTEN ${LEASE_CHANNEL}`))
      .then(() => this.kick(logger))
      .catch(forget);
    return client;
  }
}
