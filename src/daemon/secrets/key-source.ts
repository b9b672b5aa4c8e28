/**
 * Where a daemon's secrets keys are kept, and their text: one key a line (KEY_BYTES random
 * bytes in base64 or base64url), `#` comments. The sources: a file (`<data-dir>/secrets.key` by
 * default, or `--secrets-key-file`), the environment (`WFX_SECRETS_KEY`, read only), or the OS
 * keyring (`--secrets-keyring`). A file or keyring entry is created when there is none and
 * nothing is encrypted yet, durably, before any value is sealed with it.
 */
import { readFileSync } from 'node:fs';
import { link, open, unlink } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import { dirname } from 'node:path';
import { WfxError } from '../../shared/errors.js';
import { FILE_MODE, fsyncDir, writeFileAtomic } from '../disk/durable-files.js';
import { KEY_BYTES, secretsKeyOf, type SecretsKey } from './envelope.js';

/** A place that holds the key text. */
export interface KeySource {
  /** Where the keys are, for messages and logs (a path, `WFX_SECRETS_KEY`, the keyring entry): never the keys. */
  readonly where: string;
  /** Whether a key can be added there (a file, the keyring; not the environment). */
  readonly writable: boolean;
  /**
   * The key text, or null when there is none yet. Synchronous: it is read again on a use that
   * meets a key it does not have. Throws WfxError SECRETS_KEY_INVALID when it cannot be read.
   */
  read(): string | null;
  /** Stores `text` if there is no key text yet, durably; resolves to the text in place (another daemon's, if it came first). */
  create(text: string): Promise<string>;
  /** Replaces the key text durably (a key added). */
  replace(text: string): Promise<void>;
}

/** A key token: 32 bytes in base64 (43 characters and one `=`, or none), either alphabet. */
const TOKEN_RE = /^[A-Za-z0-9+/_-]{43}=?$/;

/**
 * The keys of `text` in order (the last one added last), duplicates once. Throws WfxError
 * SECRETS_KEY_INVALID naming the line of a token that is not a key (never the token), or when
 * there is no key at all.
 */
export function parseKeys(text: string, where: string): SecretsKey[] {
  const keys: SecretsKey[] = [];
  const lines = text.split(/\r?\n/);
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!.trim();
    if (line === '' || line.startsWith('#')) continue;
    for (const token of line.split(/[\s,]+/)) {
      if (token === '') continue;
      const raw = TOKEN_RE.test(token) ? Buffer.from(token, 'base64') : null;
      if (raw?.length !== KEY_BYTES)
        throw new WfxError(
          'SECRETS_KEY_INVALID',
          `line ${i + 1} of ${where} is not a secrets key (${KEY_BYTES} bytes in base64)`,
          { details: { line: i + 1 } },
        );
      const key = secretsKeyOf(raw);
      if (!keys.some((k) => k.id === key.id)) keys.push(key);
    }
  }
  if (keys.length === 0) throw new WfxError('SECRETS_KEY_INVALID', `${where} holds no secrets key`);
  return keys;
}

const HEADER =
  '# wfx secrets keys (docs/operations.md, Secrets). Keep this file apart from backups of the data:\n' +
  '# with it, the API keys, passwords and signing secrets they hold can be read.\n' +
  '# One key a line (32 random bytes, base64); a key encrypts only once made current (rotation).\n';

/** `text` with a new random key added last (a comment names its id and the instant); returns both. */
export function withNewKey(text: string | null, at: Date): { text: string; keyId: string } {
  const raw = randomBytes(KEY_BYTES);
  const keyId = secretsKeyOf(raw).id;
  const start = text === null ? HEADER : text.endsWith('\n') ? text : `${text}\n`;
  return { text: `${start}# key ${keyId}, added ${at.toISOString()}\n${raw.toString('base64url')}\n`, keyId };
}

/** A key file at `path` (0600), created and replaced atomically. */
export function fileSource(path: string): KeySource {
  return {
    where: path,
    writable: true,
    read() {
      try {
        return readFileSync(path, 'utf8');
      } catch (err) {
        const code = (err as NodeJS.ErrnoException).code;
        if (code === 'ENOENT') return null;
        throw new WfxError('SECRETS_KEY_INVALID', `the secrets key file ${path} cannot be read (${code ?? 'error'})`);
      }
    },
    async create(text) {
      // Written whole and synced under a temporary name, then linked: a link never replaces a
      // file another daemon (sharing the file) created meanwhile, and never shows a part.
      const tmp = `${path}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
      const fh = await open(tmp, 'wx', FILE_MODE);
      try {
        await fh.writeFile(text);
        await fh.sync();
      } finally {
        await fh.close();
      }
      try {
        await link(tmp, path);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      } finally {
        await unlink(tmp).catch(() => undefined);
      }
      await fsyncDir(dirname(path));
      return this.read() ?? text;
    },
    replace: (text) => writeFileAtomic(path, text),
  };
}

/** The keys given in the environment (WFX_SECRETS_KEY): read only. */
export function envSource(text: string, name = 'WFX_SECRETS_KEY'): KeySource {
  const readOnly = async (): Promise<never> => {
    throw new WfxError(
      'VALIDATION_ERROR',
      `the secrets keys come from ${name}: add a key there and restart the daemon`,
    );
  };
  return { where: name, writable: false, read: () => text, create: readOnly, replace: readOnly };
}

/** The service name of the daemon's keyring entries (the account is the data directory). */
const KEYRING_SERVICE = 'wfx-secrets';

/**
 * The keys in the OS keyring (@napi-rs/keyring: Keychain, Credential Manager, the Secret
 * Service on Linux), one entry per data directory. Throws WfxError SECRETS_KEY_MISSING when no
 * keyring service answers (a server, a container): a daemon told to use one never falls back.
 */
export async function keyringSource(account: string): Promise<KeySource> {
  const where = `the OS keyring (${KEYRING_SERVICE}, ${account})`;
  let entry: { getPassword(): string | null; setPassword(text: string): void };
  try {
    const { Entry } = await import('@napi-rs/keyring');
    // The kernel keyring forgets at reboot: only a lasting store will do (as for `wfx login`).
    entry = new Entry(KEYRING_SERVICE, account, { linux: { store: 'secret-service' } });
    entry.getPassword();
  } catch (err) {
    throw new WfxError('SECRETS_KEY_MISSING', `--secrets-keyring: no OS keyring service answered (${String(err)})`);
  }
  return {
    where,
    writable: true,
    read() {
      try {
        return entry.getPassword() ?? null;
      } catch (err) {
        throw new WfxError('SECRETS_KEY_INVALID', `${where} cannot be read (${String(err)})`);
      }
    },
    async create(text) {
      const there = entry.getPassword();
      if (there) return there;
      entry.setPassword(text);
      return text;
    },
    replace: async (text) => entry.setPassword(text),
  };
}
