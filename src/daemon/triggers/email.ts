import type { EmailConnectionState, EmailHealth } from '../../shared/api/index.js';
import { StartPacer } from './start-pacing.js';
import type { ImapFlow } from 'imapflow';
import type { AddressObject } from 'mailparser';
import type { WfxError } from '../../shared/errors.js';
import type { Trigger } from '../../shared/flow/types.js';
import type { Engine, StartRequest } from '../engine/engine.js';
import type { WfxRecord } from '../state/records.js';
import type { EmailConnection, StoredFile, WfxState } from '../state/state.js';
import type { FileStore } from '../files/file-store.js';
import { activeTriggers, subjectOf, type TriggerSubject } from '../state/active-triggers.js';
import type { RecordStore } from '../store/record-store.js';
import { MailboxWatch } from './email-mailbox.js';
import { passesFilters } from './email-filters.js';
import type { TriggerStartKey } from '../../shared/flow/trigger-data.js';

type EmailTrigger = Extract<Trigger, { type: 'email' }>;

/** One email trigger of an active flow version in one environment. */
interface Target extends TriggerSubject {
  readonly trigger: EmailTrigger;
  /** Its place among its flow version's triggers. */
  readonly index: number;
}

/** What GET /admin/triggers shows of this trigger (the wire's type, shared/api). */
export type { EmailHealth };

export interface EmailTriggerOptions {
  readonly store: RecordStore<WfxState, WfxRecord>;
  readonly engine: Engine;
  readonly now?: () => Date;
  readonly onError?: (err: unknown, what: string) => void;
  /** Reconnect backoff: first wait and longest wait, in ms (default 1 s and 60 s). */
  readonly backoff?: { readonly initialMs: number; readonly maxMs: number };
  /** Paces triggers' starts (debounce, throttle): the daemon's, shared with the webhooks. Absent: one of its own. */
  readonly pacer?: StartPacer;
  /** Polling interval, besides IDLE (default 60 s). */
  readonly pollMs?: number;
  /** Where a message's attachments are kept (`{emailAttachments}`); without it, none are. */
  readonly files?: FileStore;
}

export { passesFilters } from './email-filters.js';

/** A target's key in lastFire and refused: its flow and environment. */
const fireKey = (s: { readonly processId: string; readonly environment: string }) => `${s.processId}|${s.environment}`;

const addresses = (a: AddressObject | AddressObject[] | undefined): string[] =>
  (Array.isArray(a) ? a : a ? [a] : []).flatMap((o) => o.value.map((v) => v.address ?? '')).filter(Boolean);

/**
 * Email triggers: one IMAP client per connection that an active flow's email trigger names.
 * New (unseen) messages that pass a trigger's filters start its flow with the email
 * variables; the starts and the message's Message-ID are one journal entry, then the message
 * is marked seen, so each Message-ID starts its flows once even across a crash. Each mailbox is
 * watched by a MailboxWatch (email-mailbox.ts): a lost connection shows as failing in trigger
 * health while it is retried.
 */
export class EmailTriggers {
  private readonly store: RecordStore<WfxState, WfxRecord>;
  private readonly engine: Engine;
  private readonly now: () => Date;
  /** Paces its triggers' starts (EmailTriggerOptions.pacer). */
  private readonly pacer: StartPacer;
  /** Whether the pacer is its own (started and closed with it). */
  private readonly ownPacer: boolean;
  private readonly onError: (err: unknown, what: string) => void;
  private readonly backoff: { readonly initialMs: number; readonly maxMs: number };
  private readonly pollMs: number;
  private readonly files: FileStore | undefined;
  private readonly watches = new Map<string, MailboxWatch>();
  /** When each target (fireKey) last started its flow. */
  private readonly lastFire = new Map<string, string>();
  /** Why each target's latest start was refused (its flow's inputs refused the email, say), until one starts. */
  private readonly refused = new Map<string, string>();
  private syncQueued = false;
  private closed = false;

  constructor(options: EmailTriggerOptions) {
    this.store = options.store;
    this.engine = options.engine;
    this.now = options.now ?? (() => new Date());
    this.onError = options.onError ?? (() => undefined);
    this.backoff = options.backoff ?? { initialMs: 1000, maxMs: 60_000 };
    this.pollMs = options.pollMs ?? 60_000;
    this.files = options.files;
    this.ownPacer = options.pacer === undefined;
    this.pacer =
      options.pacer ?? new StartPacer({ store: this.store, engine: this.engine, now: this.now, onError: this.onError });
  }

  /** Watches every connection an active version's email trigger names, and follows changes. */
  start(): void {
    if (this.ownPacer) this.pacer.start();
    this.store.onCommit((records) => {
      const relevant = records.some(
        (r) =>
          r.type === 'flow.activated' ||
          r.type === 'flow.deactivated' ||
          r.type === 'flow.published' ||
          r.type === 'emailConnection.saved' ||
          r.type === 'emailConnection.deleted',
      );
      if (!relevant || this.syncQueued || this.closed) return;
      this.syncQueued = true;
      setImmediate(() => {
        this.syncQueued = false;
        this.sync();
      });
    });
    this.sync();
  }

  async close(): Promise<void> {
    this.closed = true;
    await Promise.all([...this.watches.values()].map((w) => w.stop()));
    this.watches.clear();
    if (this.ownPacer) await this.pacer.close();
  }

  /** Every email trigger's health. */
  health(): EmailHealth[] {
    return this.targets().map(({ target, connection }) => {
      const { trigger, ...subject } = target;
      const base = {
        type: 'email',
        ...subject,
        connection: trigger.connection,
        nextFire: null,
        lastFire: this.lastFire.get(fireKey(target)) ?? null,
      } as const;
      if (!connection)
        return { ...base, state: 'disabled', lastError: `no email connection named "${target.trigger.connection}"` };
      const w = this.watches.get(connection.connectionId);
      if (!w?.connected) return { ...base, state: 'failing', lastError: w?.lastError ?? 'connecting' };
      const refused = this.refused.get(fireKey(target));
      return refused
        ? { ...base, state: 'failing', lastError: refused }
        : { ...base, state: 'active', lastError: null };
    });
  }

  /**
   * What this daemon's watch of connection `connectionId` says: connected, its last error, its
   * last look at the mailbox; `watched` false when no active trigger names it (or this daemon
   * runs no triggers: not partition 0's holder).
   */
  connectionState(connectionId: string): EmailConnectionState {
    const w = this.watches.get(connectionId);
    if (!w) return { watched: false, connected: false, lastError: null, lastPoll: null };
    return w.state();
  }

  /** The email triggers of the active versions, with the connection each names (if it exists). */
  private targets(): Array<{ target: Target; connection: EmailConnection | undefined }> {
    const state = this.store.state;
    return activeTriggers(state, 'email').map((a) => ({
      target: { ...subjectOf(a), trigger: a.trigger, index: a.index },
      connection: Object.values(state.emailConnections).find(
        (c) => c.organization === a.flow.organization && c.name === a.trigger.connection,
      ),
    }));
  }

  /** Starts watching connections newly needed (or changed), stops those no longer needed. */
  private sync(): void {
    if (this.closed) return;
    const needed = new Map<string, EmailConnection>();
    for (const { connection } of this.targets()) if (connection) needed.set(connection.connectionId, connection);
    for (const [id, w] of this.watches) {
      const now = needed.get(id);
      if (now && now === w.connection) {
        w.skipped.clear(); // triggers or filters may have changed: look at unseen mail again
        w.kick();
        continue;
      }
      this.watches.delete(id);
      void w.stop();
    }
    for (const [id, connection] of needed) {
      if (this.watches.has(id)) continue;
      const w = new MailboxWatch(connection, {
        secrets: this.engine.secrets,
        now: this.now,
        onError: this.onError,
        backoff: this.backoff,
        pollMs: this.pollMs,
        closed: () => this.closed,
        onMessage: (watch, client, uid, source) => this.processMessage(watch, client, uid, source),
      });
      this.watches.set(id, w);
      void w.connect();
    }
  }

  /**
   * Writes a message's attachments to the file store (their records are journaled with the
   * starts); one over the store's limit is left out and said. None without a file store.
   */
  private async storeAttachments(
    organization: string,
    attachments: ReadonlyArray<{ filename?: string; contentType: string; content: Buffer }>,
    messageId: string,
  ): Promise<StoredFile[]> {
    const files = this.files;
    if (!files) return [];
    const stored: StoredFile[] = [];
    for (const [i, a] of attachments.entries()) {
      const name = a.filename ?? `attachment-${i + 1}`;
      if (a.content.length > files.maxBytes) {
        this.onError(
          new Error(`${name} is ${a.content.length} bytes, more than the file store takes (${files.maxBytes})`),
          `keeping an attachment of mail ${messageId}`,
        );
        continue;
      }
      const blob = await files.writeBlob(a.content);
      stored.push(files.describe({ organization, name, mimeType: a.contentType.split(';')[0]!.trim() }, blob));
    }
    return stored;
  }

  private async processMessage(w: MailboxWatch, client: ImapFlow, uid: number, source: Buffer): Promise<void> {
    const connection = w.connection;
    const { simpleParser } = await import('mailparser');
    const mail = await simpleParser(source);
    const messageId = mail.messageId ?? `uid:${w.uidValidity}:${uid}`;
    const seen = this.store.state.emailSeen[connection.connectionId]?.includes(messageId) ?? false;
    if (!seen) {
      const sender = addresses(mail.from)[0] ?? '';
      const body = mail.text ?? '';
      const subject = mail.subject ?? '';
      const targets = this.targets().filter(
        ({ target, connection: c }) =>
          c?.connectionId === connection.connectionId &&
          passesFilters(target.trigger.filters, { subject, sender, body }),
      );
      if (targets.length === 0) {
        w.skipped.add(uid); // not for us: left unseen for whoever reads the mailbox
        return;
      }
      const stored = await this.storeAttachments(connection.organization, mail.attachments ?? [], messageId);
      const data = {
        emailSubject: subject,
        emailBody: body,
        emailSender: sender,
        emailRecipients: [...addresses(mail.to), ...addresses(mail.cc)],
        emailMessageId: messageId,
        emailDate: mail.date?.toISOString() ?? null,
        triggerType: 'email',
        emailAttachments: stored.map((f) => ({ fileId: f.fileId, name: f.name, mimeType: f.mimeType, bytes: f.bytes })),
      } satisfies Record<TriggerStartKey<'email'>, unknown>;
      // A trigger's debounce holds its start back, its throttle drops what is over its rate (start-pacing.ts).
      const paced = this.pacer.pace(
        targets.map(({ target }) => ({
          req: {
            organization: target.organization,
            processId: target.processId,
            environment: target.environment,
            data: structuredClone(data),
          },
          pacing: target.trigger,
          trigger: `${target.processId}|${target.environment}|${target.index}`,
        })),
        this.now(),
      );
      const requests = paced.start;
      let refusals: ReadonlyArray<{ readonly req: StartRequest; readonly error: WfxError }> = [];
      const started = await this.engine.startBatch(requests, (_started, refused) => {
        refusals = refused;
        // The attachments' records with the starts that name them: both or neither after a crash.
        return [
          ...stored.map((file): WfxRecord => ({ type: 'file.stored', file })),
          { type: 'email.processed', connectionId: connection.connectionId, messageId },
          ...paced.records,
        ];
      });
      this.pacer.held(paced.records);
      // A start the engine refused (its data, its flow gone) is said, never dropped unseen: in the
      // daemon log, and in the trigger's health until a later email starts its flow.
      const at = this.now().toISOString();
      for (const r of refusals) {
        this.onError(r.error, `starting ${r.req.processId} for mail ${messageId}`);
        const target = targets.find((x) => x.target.processId === r.req.processId)!.target;
        this.refused.set(fireKey(target), `${at}: mail ${messageId} not started: ${r.error.code}: ${r.error.message}`);
      }
      for (const inst of started) {
        this.lastFire.set(fireKey(inst), at);
        this.refused.delete(fireKey(inst));
      }
    }
    // After the starts are durable: a crash before this leaves it unseen, and the Message-ID says it was done.
    await client.messageFlagsAdd(String(uid), ['\\Seen'], { uid: true });
  }
}
