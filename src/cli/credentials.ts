import { chmod, mkdir, readFile, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { dataDirPaths, type DaemonInfo } from '../shared/data-dir.js';
import type { Connection } from '../client/http.js';
import type { CliContext, GlobalOptions } from './context.js';
import { dataDirOf } from './context.js';

export const DEFAULT_URL = 'http://127.0.0.1:7878';

/**
 * The daemon tried when neither --url, WFX_URL nor this directory's daemon.json names one:
 * WFX_DEFAULT_URL (a daemon of one's own on another port, reached from any directory without
 * overriding a project's daemon as WFX_URL would), else DEFAULT_URL.
 */
export function fallbackUrl(env: NodeJS.ProcessEnv): string {
  return env.WFX_DEFAULT_URL || DEFAULT_URL;
}
const KEYRING_SERVICE = 'wfx';

/** Where `wfx login` keeps a key when no OS keyring answers: a 0600 file in the user's config dir. */
export function credentialsFile(env: NodeJS.ProcessEnv): string {
  const base = env.XDG_CONFIG_HOME || join(env.HOME || homedir(), '.config');
  return join(base, 'wfx', 'credentials.json');
}

type Keyring = { get(url: string): string | null; set(url: string, key: string): void };

/**
 * The OS keyring (@napi-rs/keyring: Keychain, Credential Manager, or on Linux the Secret
 * Service), or null when none answers (CI, servers, containers). On Linux the library would
 * otherwise fall back to the kernel keyring, which forgets everything at reboot: a login that
 * silently vanishes is worse than the 0600 file, so the Secret Service is required there.
 */
async function osKeyring(): Promise<Keyring | null> {
  try {
    const { Entry } = await import('@napi-rs/keyring');
    const options = { linux: { store: 'secret-service' as const } };
    const entry = (account: string) => new Entry(KEYRING_SERVICE, account, options);
    entry('probe').getPassword(); // throws when there is no keyring service
    return {
      get: (url) => entry(url).getPassword() ?? null,
      set: (url, key) => entry(url).setPassword(key),
    };
  } catch {
    return null;
  }
}

async function readFileStore(env: NodeJS.ProcessEnv): Promise<Record<string, string>> {
  try {
    return JSON.parse(await readFile(credentialsFile(env), 'utf8')) as Record<string, string>;
  } catch {
    return {};
  }
}

/** Stores `apiKey` for `url`: in the OS keyring, or in the 0600 file. Says where. */
export async function storeCredential(env: NodeJS.ProcessEnv, url: string, apiKey: string): Promise<{ where: string }> {
  const keyring = await osKeyring();
  if (keyring) {
    keyring.set(url, apiKey);
    return { where: 'the OS keyring' };
  }
  const file = credentialsFile(env);
  const all = await readFileStore(env);
  all[url] = apiKey;
  await mkdir(join(file, '..'), { recursive: true, mode: 0o700 });
  await writeFile(file, `${JSON.stringify(all, null, 2)}\n`, { mode: 0o600 });
  await chmod(file, 0o600);
  return { where: `${file} (no OS keyring service answered)` };
}

async function storedCredential(env: NodeJS.ProcessEnv, url: string): Promise<{ key: string; where: string } | null> {
  const keyring = await osKeyring();
  if (keyring) {
    const key = keyring.get(url);
    if (key) return { key, where: 'the OS keyring (wfx login)' };
  }
  const key = (await readFileStore(env))[url];
  return key ? { key, where: `${credentialsFile(env)} (wfx login)` } : null;
}

/**
 * The daemon to talk to and the credential to use. URL: --url, WFX_URL, the local daemon's
 * daemon.json, the default. Credential, first found wins: --api-key, WFX_API_KEY, the entry
 * `wfx login` stored for that URL, the local data directory's bootstrap.key (only when the URL is
 * that local daemon's own, so the admin key never goes to another host).
 */
export async function resolveConnection(ctx: CliContext, opts: GlobalOptions): Promise<Connection> {
  const dataDir = dataDirOf(ctx, opts);
  const paths = dataDirPaths(dataDir);
  const local = await readFile(paths.daemonJson, 'utf8').then(
    (t) => JSON.parse(t) as DaemonInfo,
    () => null,
  );
  const url = (opts.url ?? ctx.env.WFX_URL ?? local?.url ?? fallbackUrl(ctx.env)).replace(/\/+$/, '');
  if (opts.apiKey) return { url, apiKey: opts.apiKey, credentialSource: '--api-key' };
  if (ctx.env.WFX_API_KEY) return { url, apiKey: ctx.env.WFX_API_KEY, credentialSource: 'WFX_API_KEY' };
  const stored = await storedCredential(ctx.env, url);
  if (stored) return { url, apiKey: stored.key, credentialSource: stored.where };
  // The local admin key goes only to the daemon that wrote it: never to another URL.
  const isLocalDaemon = local !== null && local.url.replace(/\/+$/, '') === url;
  const bootstrap = isLocalDaemon
    ? await readFile(paths.bootstrapKey, 'utf8').then(
        (t) => t.trim(),
        () => null,
      )
    : null;
  if (bootstrap) return { url, apiKey: bootstrap, credentialSource: paths.bootstrapKey };
  return { url, apiKey: null, credentialSource: 'nowhere' };
}
