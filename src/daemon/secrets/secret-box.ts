import { WfxError } from '../../shared/errors.js';
import type { WfxRecord } from '../state/records.js';
import type { WfxState } from '../state/state.js';
import { isSealed, open, seal, type SecretsKey } from './envelope.js';
import { parseKeys, withNewKey, type KeySource } from './key-source.js';

/** A use that meets a key it lacks reads its source again at most this often (a key added there by an operator). */
const RELOAD_EVERY_MS = 1000;

/**
 * The daemon's secrets keys: seals a secret where it enters (a route, before its record is
 * committed) and opens it where it is used (an IMAP login, a model call, a signature check), so
 * neither the state, the journal, snapshots, backups nor the database hold it in plain text. It
 * seals with one key (the state's `secretsKey`, or its source's last), opens with any it has,
 * and reads its source again when it meets a key it lacks. Decrypted values are never kept.
 */
export class SecretBox {
  private readonly keys = new Map<string, SecretsKey>();
  private sealing: SecretsKey;
  private reloadedAt = 0;

  /** `keys` as parsed from `source`; seals with `sealingKeyId` (held) or the last of `keys`. */
  constructor(
    private readonly source: KeySource,
    keys: readonly SecretsKey[],
    sealingKeyId?: string,
  ) {
    for (const k of keys) this.keys.set(k.id, k);
    const sealing = sealingKeyId === undefined ? keys[keys.length - 1] : this.keys.get(sealingKeyId);
    if (!sealing) throw new Error(`no secrets key ${sealingKeyId ?? '(none given)'} to seal with`);
    this.sealing = sealing;
  }

  /** A box with one random key kept in memory only: for engines and servers a test builds (nothing it seals outlives it). */
  static ephemeral(): SecretBox {
    let text: string | null = withNewKey(null, new Date()).text;
    const source: KeySource = {
      where: 'an in-memory key',
      writable: true,
      read: () => text,
      create: async (t) => (text ??= t),
      replace: async (t) => void (text = t),
    };
    return new SecretBox(source, parseKeys(text, source.where));
  }

  /** Where the keys are kept (for messages, backups' answers): never a key. */
  get where(): string {
    return this.source.where;
  }

  /** Whether a key can be added to the source (a rotation that makes its own key). */
  get writable(): boolean {
    return this.source.writable;
  }

  /** The id of the key new secrets are sealed with. */
  get sealingKeyId(): string {
    return this.sealing.id;
  }

  /** The ids of the keys this box holds, in their source's order. */
  keyIds(): string[] {
    return [...this.keys.keys()];
  }

  /** Whether the box holds key `id` (after reading its source again, when `reload`). */
  has(id: string, reload = false): boolean {
    if (!this.keys.has(id) && reload) this.reload(true);
    return this.keys.has(id);
  }

  /** Seals with key `id` from now on. Throws WfxError SECRETS_KEY_MISSING when the box lacks it (after reading its source again). */
  useKey(id: string): void {
    if (!this.has(id, true))
      throw new WfxError('SECRETS_KEY_MISSING', `this daemon has no secrets key ${id} (in ${this.where})`, {
        details: { keyId: id },
      });
    this.sealing = this.keys.get(id)!;
  }

  /** The records that make the state's sealing key this box's: none when it is already. Commit them with the first value sealed. */
  pin(state: Pick<WfxState, 'secretsKey'>): WfxRecord[] {
    return state.secretsKey === this.sealing.id ? [] : [{ type: 'secretsKey.changed', keyId: this.sealing.id }];
  }

  /** `plaintext` sealed for `context` (state/secret-fields.ts) with the sealing key. */
  seal(plaintext: string, context: string): string {
    return seal(this.sealing, plaintext, context);
  }

  /**
   * The plaintext of stored `value` sealed for `context`; a value an earlier version stored in
   * plain text as it is. Throws WfxError SECRETS_KEY_MISSING (a key the box lacks, also after
   * reading its source again) or SECRET_UNREADABLE (changed, moved, malformed).
   */
  open(value: string, context: string): string {
    if (!isSealed(value)) return value;
    return open(value, context, (id) => {
      if (!this.keys.has(id)) this.reload(false);
      return this.keys.get(id);
    });
  }

  /**
   * Reads the source again and adds the keys found there (a key removed there stays until the
   * daemon restarts: values sealed with it may still be in use). Unless `now`, at most once
   * every RELOAD_EVERY_MS. Throws WfxError SECRETS_KEY_INVALID when the source is unreadable.
   */
  reload(now = true): void {
    const at = Date.now();
    if (!now && at - this.reloadedAt < RELOAD_EVERY_MS) return;
    this.reloadedAt = at;
    const text = this.source.read();
    if (text === null) return;
    for (const k of parseKeys(text, this.source.where)) if (!this.keys.has(k.id)) this.keys.set(k.id, k);
  }

  /** Adds a new random key to the source (durably, before anything is sealed with it); resolves to its id. */
  async addKey(at: Date): Promise<string> {
    const { text, keyId } = withNewKey(this.source.read(), at);
    await this.source.replace(text);
    this.reload(true);
    if (!this.keys.has(keyId)) throw new Error(`the key added to ${this.where} does not read back`);
    return keyId;
  }
}
