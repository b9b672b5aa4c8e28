/**
 * The MCP sessions this daemon holds: each an SDK server and its streamable HTTP transport,
 * owned by the credential that opened it (no other credential may use it). Sessions live in
 * memory: after a restart a client's next request is answered 404 and it opens a new one, as
 * the protocol says. Bounded so that no client exhausts what the others need: a credential
 * holds at most MAX_PER_OWNER (its least recently used goes when it opens one more), the daemon
 * at most MAX_SESSIONS (then the least recently used idle one goes, else the new one is
 * refused), and a session unused for IDLE_MS with no call running is closed.
 */
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';

export const MAX_PER_OWNER = 16;
export const MAX_SESSIONS = 2_000;
export const IDLE_MS = 30 * 60_000;
const SWEEP_MS = 60_000;

export interface McpSession {
  readonly owner: string;
  readonly server: Server;
  readonly transport: StreamableHTTPServerTransport;
  /** Tool calls running now: a session with one is never idle. */
  calls: number;
  lastUsed: number;
  /** Set before the session closes: a call's abort then is the session's end, not a cancel. */
  ending: boolean;
}

export class McpSessions {
  private readonly byId = new Map<string, McpSession>();
  private readonly sweeper: NodeJS.Timeout;

  constructor(
    private readonly now: () => number = Date.now,
    private readonly limits = { perOwner: MAX_PER_OWNER, total: MAX_SESSIONS, idleMs: IDLE_MS },
  ) {
    this.sweeper = setInterval(() => this.sweep(), SWEEP_MS);
    this.sweeper.unref();
  }

  get size(): number {
    return this.byId.size;
  }

  /** The session `id` if `owner` owns it (touched), else undefined. */
  get(id: string, owner: string): McpSession | undefined {
    const s = this.byId.get(id);
    if (s === undefined || s.owner !== owner || s.ending) return undefined;
    s.lastUsed = this.now();
    return s;
  }

  /**
   * Makes room for one more session of `owner`: false when the daemon holds its most and none
   * is idle. Called before a new session is made.
   */
  makeRoom(owner: string): boolean {
    const own = [...this.byId.entries()].filter(([, s]) => s.owner === owner);
    if (own.length >= this.limits.perOwner) this.end(leastRecent(own)![0]);
    if (this.byId.size < this.limits.total) return true;
    const idle = leastRecent([...this.byId.entries()].filter(([, s]) => s.calls === 0));
    if (idle === undefined) return false;
    this.end(idle[0]);
    return true;
  }

  /** Keeps a session once its transport has given it its id. */
  add(id: string, session: McpSession): void {
    this.byId.set(id, session);
  }

  /** Forgets session `id` (its transport closed). */
  forget(id: string): void {
    this.byId.delete(id);
  }

  /** Closes session `id`: its calls stop waiting, their executions go on. */
  end(id: string): void {
    const s = this.byId.get(id);
    if (s === undefined) return;
    this.byId.delete(id);
    s.ending = true;
    void s.server.close().catch(() => {});
  }

  /** Closes every session (the daemon stops). */
  close(): void {
    clearInterval(this.sweeper);
    for (const id of [...this.byId.keys()]) this.end(id);
  }

  /** Closes the sessions idle longer than the limit. */
  sweep(): void {
    const before = this.now() - this.limits.idleMs;
    for (const [id, s] of [...this.byId]) if (s.calls === 0 && s.lastUsed < before) this.end(id);
  }
}

function leastRecent(list: Array<[string, McpSession]>): [string, McpSession] | undefined {
  let found: [string, McpSession] | undefined;
  for (const e of list) if (found === undefined || e[1].lastUsed < found[1].lastUsed) found = e;
  return found;
}
