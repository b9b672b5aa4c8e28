/**
 * One IMAP mailbox watched for the email triggers that name its connection: the client's
 * connection, retried with backoff for ever while it is lost; IDLE where the server has it and a
 * poll besides; and the search for unseen mail, each message handed to `onMessage`. What a
 * message starts is the triggers' (email.ts): the watch only finds it.
 */
import type { ImapFlow } from 'imapflow';
import type { EmailConnectionState } from '../../shared/api/index.js';
import type { WfxError } from '../../shared/errors.js';
import type { SecretBox } from '../secrets/secret-box.js';
import { emailPasswordContext } from '../state/secret-fields.js';
import type { EmailConnection } from '../state/state.js';

/** What a watch is given by the email triggers. */
export interface MailboxOptions {
  /** The keys the connection's password is opened with, for each login. */
  readonly secrets: SecretBox;
  readonly now: () => Date;
  readonly onError: (err: unknown, what: string) => void;
  /** Reconnect backoff: first wait and longest wait, in ms. */
  readonly backoff: { readonly initialMs: number; readonly maxMs: number };
  /** Polling interval, besides IDLE. */
  readonly pollMs: number;
  /** Whether the email triggers are closed: no reconnect is scheduled then. */
  readonly closed: () => boolean;
  /** Handles one unseen message not skipped before; it marks the message seen, or skips it. */
  readonly onMessage: (watch: MailboxWatch, client: ImapFlow, uid: number, source: Buffer) => Promise<void>;
}

/** A mailbox being watched for the triggers that name its connection. */
export class MailboxWatch {
  client: ImapFlow | null = null;
  connected = false;
  lastError: string | null = null;
  /** When the mailbox was last looked at (a search for unseen mail answered). */
  lastPoll: string | null = null;
  private attempt = 0;
  private retry: NodeJS.Timeout | null = null;
  private poll: NodeJS.Timeout | null = null;
  private stopped = false;
  private busy = false;
  private again = false;
  /** UIDs looked at that no trigger wanted (left unseen), for this UIDVALIDITY. */
  readonly skipped = new Set<number>();
  uidValidity = '';

  constructor(
    readonly connection: EmailConnection,
    private readonly options: MailboxOptions,
  ) {}

  /** What this watch says: connected, its last error, its last look at the mailbox. */
  state(): EmailConnectionState {
    return { watched: true, connected: this.connected, lastError: this.lastError, lastPoll: this.lastPoll };
  }

  async connect(): Promise<void> {
    if (this.stopped) return;
    const c = this.connection;
    // Loaded on first use: a daemon with no email trigger never pays for the IMAP and MIME modules.
    const { ImapFlow } = await import('imapflow');
    if (this.stopped) return;
    // Opened for this login only: the plain password is never kept.
    let pass: string;
    try {
      pass = this.options.secrets.open(c.password, emailPasswordContext(c));
    } catch (err) {
      this.lastError = `the password cannot be opened: ${(err as WfxError).code}: ${(err as Error).message}`;
      this.scheduleReconnect();
      return;
    }
    const client = new ImapFlow({
      host: c.host,
      port: c.port,
      secure: c.security === 'TLS',
      doSTARTTLS: c.security === 'STARTTLS' ? true : c.security === 'NONE' ? false : undefined,
      auth: { user: c.user, pass },
      logger: false,
      emitLogs: false,
      // IDLE (which is how new mail is heard of) starts once the connection has been quiet this
      // long: imapflow's default of 15 s left each email unnoticed for that long after the last
      // fetch. A reader's commands come in bursts without pauses, so a second costs no extra IDLE.
      autoIdleDelay: 1000,
    });
    this.client = client;
    client.on('error', (err: Error) => {
      this.lastError = err.message;
    });
    client.on('close', () => {
      this.connected = false;
      if (this.client === client) this.client = null;
      this.scheduleReconnect();
    });
    client.on('exists', () => this.kick());
    try {
      await client.connect();
      const box = await client.mailboxOpen(c.mailbox);
      if (this.stopped || this.client !== client) {
        // Stopped (or replaced) while connecting: this client is not wanted any more.
        await client.logout().catch(() => client.close());
        return;
      }
      const validity = String(box.uidValidity);
      if (validity !== this.uidValidity) this.skipped.clear();
      this.uidValidity = validity;
      this.connected = true;
      this.lastError = null;
      if (this.poll) clearInterval(this.poll);
      this.poll = setInterval(() => this.kick(), this.options.pollMs);
      this.poll.unref();
      this.kick();
    } catch (err) {
      this.lastError = (err as { responseText?: string }).responseText ?? (err as Error).message;
      this.connected = false;
      client.close();
      if (!this.stopped) this.scheduleReconnect();
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.retry) clearTimeout(this.retry);
    if (this.poll) clearInterval(this.poll);
    const client = this.client;
    this.client = null;
    this.connected = false;
    if (client) await client.logout().catch(() => client.close());
  }

  /** Looks at the mailbox now (or again right after the look under way). */
  kick(): void {
    if (this.busy) {
      this.again = true;
      return;
    }
    this.busy = true;
    void this.processUnseen()
      .catch((err: unknown) => {
        this.lastError = (err as Error).message;
        this.options.onError(err, `email connection ${this.connection.name}`);
      })
      .finally(() => {
        this.busy = false;
        if (this.again && !this.stopped) {
          this.again = false;
          this.kick();
        }
      });
  }

  private scheduleReconnect(): void {
    if (this.stopped || this.options.closed() || this.retry) return;
    if (this.poll) clearInterval(this.poll);
    this.poll = null;
    const wait = Math.min(this.options.backoff.maxMs, this.options.backoff.initialMs * 2 ** this.attempt);
    this.attempt++;
    this.retry = setTimeout(() => {
      this.retry = null;
      void this.connect();
    }, wait);
    this.retry.unref();
  }

  /** Processes each unseen message no trigger has skipped before. */
  private async processUnseen(): Promise<void> {
    const client = this.client;
    if (!client || !this.connected || this.stopped) return;
    const uids = ((await client.search({ seen: false }, { uid: true })) || []).filter((uid) => !this.skipped.has(uid));
    this.lastPoll = this.options.now().toISOString();
    // The connection works (not only opened): the backoff starts over. A server that accepts and
    // drops at once keeps backing off instead of being retried every second.
    this.attempt = 0;
    for (const uid of uids) {
      if (this.stopped || client !== this.client) return;
      const message = await client.fetchOne(String(uid), { source: true }, { uid: true });
      if (!message || !message.source) continue;
      await this.options.onMessage(this, client, uid, message.source);
    }
  }
}
