/**
 * The secrets keys at a daemon's start, and resealing: a start finds its keys (creating a key
 * file when there is none and nothing is sealed yet), refuses with SECRETS_KEY_MISSING when a
 * stored secret is sealed with a key it lacks, and, on the daemon that writes the directory,
 * seals again every secret not sealed with the current key (those an earlier version kept in
 * plain text, or a rotation cut short by a crash), then checkpoints so that no journal segment
 * or snapshot still holds their old form.
 */
import { join } from 'node:path';
import { WfxError } from '../../shared/errors.js';
import type { WfxRecord } from '../state/records.js';
import { storedSecrets } from '../state/secret-fields.js';
import type { WfxState } from '../state/state.js';
import type { DurableStore, StoreLogger } from '../store/durable-store.js';
import { envelopeKeyId, isSealed } from './envelope.js';
import { envSource, fileSource, keyringSource, parseKeys, withNewKey, type KeySource } from './key-source.js';
import { crashPoint } from '../store/crash-point.js';
import { SecretBox } from './secret-box.js';

/** Where a daemon's secrets keys come from (DaemonOptions.secretsKey); default `<data-dir>/secrets.key`. */
export interface SecretsKeyOptions {
  /** A key file elsewhere (`--secrets-key-file`, WFX_SECRETS_KEY_FILE): what several daemons of one database share. */
  readonly file?: string;
  /** The key text itself (WFX_SECRETS_KEY): read only, never written anywhere. */
  readonly text?: string;
  /** The OS keyring (`--secrets-keyring`), one entry per data directory. */
  readonly keyring?: boolean;
  /**
   * `--forget-secrets-without-key`: a start that finds secrets sealed with keys it lacks (the
   * keys lost) forgets those secrets, to be set again, instead of refusing with SECRETS_KEY_MISSING.
   */
  readonly forgetMissing?: boolean;
}

/** The name of the default key file in a data directory. */
export const SECRETS_KEY_FILE = 'secrets.key';

/** The source `options` name for a daemon on `dataDir`. */
export async function keySourceOf(options: SecretsKeyOptions | undefined, dataDir: string): Promise<KeySource> {
  if (options?.text !== undefined) return envSource(options.text);
  if (options?.keyring) return keyringSource(dataDir);
  return fileSource(options?.file ?? join(dataDir, SECRETS_KEY_FILE));
}

/** How many stored secrets each key seals, and how many are in plain text. */
export interface KeyUsage {
  readonly plain: number;
  readonly byKey: ReadonlyMap<string, number>;
}

/** The keys the state's secrets are sealed with. Pure. */
export function keyUsage(state: WfxState): KeyUsage {
  let plain = 0;
  const byKey = new Map<string, number>();
  for (const s of storedSecrets(state)) {
    if (!isSealed(s.value)) plain++;
    const id = envelopeKeyId(s.value);
    if (id !== null) byKey.set(id, (byKey.get(id) ?? 0) + 1);
  }
  return { plain, byKey };
}

/** The ids of `used` that `has` denies, as a refusal naming them and where the keys were looked for; null when none. */
function missingKeys(used: Iterable<string>, has: (id: string) => boolean, where: string): WfxError | null {
  const missing = [...used].filter((id) => !has(id));
  if (missing.length === 0) return null;
  const list = missing.join(', ');
  return new WfxError(
    'SECRETS_KEY_MISSING',
    `stored secrets are encrypted with key${missing.length === 1 ? '' : 's'} ${list}, which ${where} does not hold: put the key file back, or give it (--secrets-key-file, WFX_SECRETS_KEY)`,
    { details: { keyIds: missing, where } },
  );
}

/**
 * Throws WfxError SECRETS_KEY_MISSING when `state` holds secrets sealed with keys `source` lacks
 * (SECRETS_KEY_INVALID when it cannot be read): a standby's check of its copy of the state, so
 * that it is refused at its start rather than when it takes over.
 */
export function checkKeysHeld(state: WfxState, source: KeySource): void {
  const text = source.read();
  const held = new Set(text === null ? [] : parseKeys(text, source.where).map((k) => k.id));
  const refusal = missingKeys(keyUsage(state).byKey.keys(), (id) => held.has(id), source.where);
  if (refusal) throw refusal;
}

/**
 * The daemon's SecretBox at start. `directory`: this daemon writes the directory (partition 0),
 * so it also reseals what is not sealed with the current key and checkpoints after. Throws
 * WfxError SECRETS_KEY_MISSING (a key in use is missing, naming it; never starts and then fails
 * each use), SECRETS_KEY_INVALID (the key text malformed or unreadable).
 */
export async function openSecrets(options: {
  readonly source: KeySource;
  readonly store: DurableStore<WfxState, WfxRecord>;
  readonly directory: boolean;
  readonly logger: StoreLogger;
  /** SecretsKeyOptions.forgetMissing: drop the secrets sealed with keys the daemon lacks, rather than refuse. */
  readonly forgetMissing?: boolean;
}): Promise<SecretBox> {
  const { source, store, logger } = options;
  let text = source.read();
  const held = new Set(text === null ? [] : parseKeys(text, source.where).map((k) => k.id));
  const refusal = missingKeys(keyUsage(store.state).byKey.keys(), (id) => held.has(id), source.where);
  if (refusal && !(options.forgetMissing && options.directory)) throw refusal;
  if (refusal) await forgetMissing(store, (refusal.details as { keyIds: string[] }).keyIds, logger);
  if (text === null) {
    text = await source.create(withNewKey(null, new Date()).text);
    logger.info(
      { file: source.where },
      'secrets: created the key that encrypts stored secrets (keep it apart from backups)',
    );
  }
  const keys = parseKeys(text, source.where);
  const ids = new Set(keys.map((k) => k.id));
  const pinned = store.state.secretsKey;
  const box = new SecretBox(source, keys, pinned !== null && ids.has(pinned) ? pinned : undefined);
  if (pinned !== null && !ids.has(pinned) && options.directory)
    // Nothing is sealed with it (checked above): sealing with another key loses nothing.
    logger.warn(
      { keyId: pinned, now: box.sealingKeyId },
      "secrets: the current key is not in this daemon's keys and seals nothing: sealing with another",
    );
  if (!options.directory) return box;
  const done = await resealStored(store, box, logger);
  // Also when a reseal (or a forget) before a crash was not followed by its checkpoint.
  if (done.plain + done.resealed === 0 && !store.state.secretsResealed) return box;
  await settleReseal(store);
  const what =
    done.plain > 0
      ? 'encrypted the secrets an earlier version stored in plain text'
      : done.resealed > 0
        ? 'sealed every stored secret with the current key'
        : refusal
          ? 'forgot the secrets sealed with keys this daemon lacks'
          : 'secrets were sealed again before a crash';
  logger.info({ ...done, keyId: box.sealingKeyId }, `secrets: ${what}; a checkpoint removed their old copies`);
  return box;
}

/**
 * Removes every stored secret sealed with one of `keyIds` (keys lost): a provider loses its API
 * key, a connection its password, an endpoint that signing secret; each must be set again.
 */
async function forgetMissing(
  store: DurableStore<WfxState, WfxRecord>,
  keyIds: readonly string[],
  logger: Pick<StoreLogger, 'warn'>,
): Promise<void> {
  const lost = storedSecrets(store.state).filter((s) => keyIds.includes(envelopeKeyId(s.value) ?? ''));
  for (let i = 0; i < lost.length; i += RESEAL_BATCH)
    await store.commit(
      ...lost
        .slice(i, i + RESEAL_BATCH)
        .map((s): WfxRecord => ({ type: 'secret.resealed', ref: s.ref, from: s.value, to: null })),
    );
  logger.warn(
    { keyIds, forgotten: lost.map((s) => s.ref) },
    `secrets: forgot ${lost.length} secret(s) sealed with keys this daemon lacks: set them again`,
  );
}

/** Stored secrets a reseal commits at once. */
const RESEAL_BATCH = 500;

/**
 * Seals again, in journal records, every stored secret not sealed with `box`'s current key (and
 * pins that key in the state): a crash between batches leaves the rest for the next start. A
 * secret that cannot be opened is left as it is, logged. Resolves to what it did.
 */
export async function resealStored(
  store: DurableStore<WfxState, WfxRecord>,
  box: SecretBox,
  logger: Pick<StoreLogger, 'error'>,
): Promise<{ plain: number; resealed: number; unreadable: number }> {
  const done = { plain: 0, resealed: 0, unreadable: 0 };
  const stale = storedSecrets(store.state).filter((s) => envelopeKeyId(s.value) !== box.sealingKeyId);
  let batch: WfxRecord[] = [...box.pin(store.state)];
  const flush = async () => {
    if (batch.length > 0) await store.commit(...batch);
    batch = [];
  };
  for (const s of stale) {
    let plaintext: string;
    try {
      plaintext = box.open(s.value, s.context);
    } catch (err) {
      done.unreadable++;
      logger.error({ code: (err as WfxError).code, secret: s.ref }, `secrets: ${(err as Error).message}`);
      continue;
    }
    if (isSealed(s.value)) done.resealed++;
    else done.plain++;
    batch.push({ type: 'secret.resealed', ref: s.ref, from: s.value, to: box.seal(plaintext, s.context) });
    if (batch.length >= RESEAL_BATCH) await flush();
  }
  if (done.plain + done.resealed > 0) await flush();
  return done;
}

/**
 * After secrets were sealed again: a checkpoint covering the reseals (one under way may have
 * begun before them: a second follows), which removes the journal segments (rows) and the
 * snapshot holding their old forms; then a record saying so. A crash before that record leaves
 * `secretsResealed` set, and the next start checkpoints again.
 */
export async function settleReseal(store: DurableStore<WfxState, WfxRecord>): Promise<void> {
  crashPoint('secrets:resealed');
  if (!store.checkpoint) return;
  await store.checkpoint();
  await store.checkpoint();
  await store.commit({ type: 'secrets.checkpointed' });
}
