/**
 * A TCP proxy on 127.0.0.1 that a test puts between one daemon and PostgreSQL (a proxy per
 * daemon, so that one daemon's link fails alone), and faults as a network does (Jepsen's kinds):
 *
 * - `blackhole()`: every byte held, both ways, nothing closed; new connections are accepted and
 *   held too (a partition: packets dropped, TCP none the wiser).
 * - `delay(ms)`: every byte delivered `ms` late, each way (a slow link).
 * - `cut()`: every connection reset and new ones refused (the database gone).
 * - `heal('flush')` delivers what was held and goes on; `heal('reset')` resets every connection
 *   instead (what a router or NAT that forgot the flows does), and accepts new ones.
 *
 * Bytes go through in order whatever the faults do. Closed at the test's teardown.
 */
import { createServer, connect, type AddressInfo, type Socket } from 'node:net';
import { join } from 'node:path';
import type { Test } from 'tap';

export interface FaultProxy {
  readonly port: number;
  /** A connection string for database `db` through the proxy. */
  urlOf(db: string): string;
  blackhole(): void;
  delay(ms: number): void;
  cut(): Promise<void>;
  heal(by: 'flush' | 'reset'): Promise<void>;
  /** Connections open through the proxy now. */
  readonly connections: number;
}

/** Held bytes of one direction past which its sender is paused (TCP's window, roughly). */
const HOLD_MAX = 1 << 20;

/** One direction of a connection: chunks due at a time (Infinity: held), written in order. */
class Lane {
  private readonly queue: { chunk: Buffer; due: number }[] = [];
  private timer: NodeJS.Timeout | null = null;
  private held = 0;

  constructor(
    private readonly from: Socket,
    private readonly to: Socket,
    private readonly fault: () => { held: boolean; delayMs: number },
  ) {
    from.on('data', (chunk: Buffer) => {
      const { held, delayMs } = this.fault();
      this.queue.push({ chunk, due: held ? Infinity : Date.now() + delayMs });
      this.held += chunk.length;
      if (this.held > HOLD_MAX) from.pause();
      this.pump();
    });
  }

  /** Chunks held by a blackhole become due now. */
  release(): void {
    for (const q of this.queue) if (q.due === Infinity) q.due = 0;
    this.pump();
  }

  stop(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.queue.length = 0;
  }

  private pump(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    const now = Date.now();
    while (this.queue.length > 0 && this.queue[0]!.due <= now) {
      const { chunk } = this.queue.shift()!;
      this.held -= chunk.length;
      if (!this.to.destroyed) this.to.write(chunk);
    }
    if (this.held <= HOLD_MAX && this.from.isPaused()) this.from.resume();
    const next = this.queue[0];
    if (next && next.due !== Infinity) this.timer = setTimeout(() => this.pump(), next.due - now);
  }
}

/** Starts a proxy to the PostgreSQL server listening in `socketDir` (startPostgres's). */
export async function startFaultProxy(t: Test, socketDir: string): Promise<FaultProxy> {
  let held = false;
  let delayMs = 0;
  const fault = () => ({ held, delayMs });
  const pairs = new Set<{ client: Socket; upstream: Socket; lanes: Lane[] }>();
  const server = createServer((client) => {
    const upstream = connect(join(socketDir, '.s.PGSQL.5432'));
    const pair = { client, upstream, lanes: [new Lane(client, upstream, fault), new Lane(upstream, client, fault)] };
    pairs.add(pair);
    const close = () => {
      for (const lane of pair.lanes) lane.stop();
      client.destroy();
      upstream.destroy();
      pairs.delete(pair);
    };
    client.on('error', close).on('close', close);
    upstream.on('error', close).on('close', close);
  });
  const listen = (port: number) =>
    new Promise<number>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => {
        server.off('error', reject);
        resolve((server.address() as AddressInfo).port);
      });
    });
  const port = await listen(0);
  const resetAll = () => {
    for (const pair of pairs) {
      for (const lane of pair.lanes) lane.stop();
      // A reset after a shutdown (the daemon's side ended first) fails in libuv and leaves the
      // handle open for good (the process then spins at exit): such a socket is just closed.
      if (pair.client.writableEnded || pair.client.destroyed) pair.client.destroy();
      else pair.client.resetAndDestroy();
      pair.upstream.destroy();
    }
    pairs.clear();
  };
  const cut = async () => {
    held = false;
    const closed = server.listening ? new Promise<void>((resolve) => server.close(() => resolve())) : null;
    resetAll();
    await closed;
  };
  t.teardown(() => cut());
  return {
    port,
    urlOf: (db) => `postgresql://wfx@127.0.0.1:${port}/${db}`,
    blackhole: () => void (held = true),
    delay: (ms) => void (delayMs = ms),
    cut,
    async heal(by) {
      held = false;
      delayMs = 0;
      if (by === 'reset') resetAll();
      else for (const pair of pairs) for (const lane of pair.lanes) lane.release();
      if (!server.listening) await listen(port);
    },
    get connections() {
      return pairs.size;
    },
  };
}
