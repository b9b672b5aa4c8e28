import '../setup/fixtures.js'; // fixtures under the OS temp dir (see there)
import { randomBytes, randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { copyFileSync, existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { WfxClient } from '../../src/client/client.js';
import { wfxJsonStore } from '../../src/daemon/engine/executions-at-rest.js';
import { WFX_STORE, type WfxRecord } from '../../src/daemon/state/records.js';
import { WFX_COMMONS } from '../../src/daemon/state/commons.js';
import type { WfxState } from '../../src/daemon/state/state.js';
import { PgStore } from '../../src/daemon/store/pg/pg-store.js';
import { Store } from '../../src/daemon/store/store.js';
import { signDelivery } from '../../src/shared/webhooks/providers.js';
import { killIfAlive, spawnWfx, startDaemon, wfx, wfxIn } from '../helpers/cli.js';
import { eventually } from '../helpers/eventually.js';
import { reply, startOpenAiServer, type OpenAiServer } from '../helpers/openai-server.js';
import { POSTGRES_SKIP, startPostgres } from '../helpers/postgres.js';
import { needlesOf, scanBytes, scanDir } from '../helpers/secret-scan.js';

/** Secrets as an earlier version stored them: in plain text, in records written directly. */
function plainSecrets() {
  return {
    providerKey: `sk-wfxtest-old-${randomBytes(12).toString('hex')}`,
    hookSecret: `whsec-wfxtest-old-${randomBytes(12).toString('hex')}`,
    imapPassword: `imap-wfxtest-old-${randomBytes(12).toString('hex')}`,
  };
}
type Plain = ReturnType<typeof plainSecrets>;

/** The records an earlier version wrote for a provider, a webhook and an email connection: secrets in plain text. */
function plainRecords(s: Plain, baseUrl: string): WfxRecord[] {
  const at = new Date().toISOString();
  return [
    {
      type: 'aiProvider.saved',
      provider: {
        providerId: randomUUID(),
        name: 'gpt',
        organization: 'default',
        kind: 'openai-compatible',
        baseUrl,
        model: 'tiny',
        apiKey: s.providerKey,
        isDefault: false,
        createdAt: at,
        updatedAt: at,
      },
    },
    {
      type: 'webhook.saved',
      webhook: {
        webhookId: randomUUID(),
        name: 'hook',
        organization: 'default',
        provider: 'GITHUB',
        environmentMode: 'SHARED',
        authType: 'HMAC',
        custom: null,
        endpoints: [
          {
            environment: 'ALL',
            token: randomBytes(32).toString('base64url'),
            secrets: [{ secret: s.hookSecret, expiresAt: null }],
          },
        ],
        createdAt: at,
        updatedAt: at,
      },
    },
    {
      type: 'emailConnection.saved',
      connection: {
        connectionId: randomUUID(),
        name: 'inbox',
        organization: 'default',
        host: '127.0.0.1',
        port: 1,
        security: 'NONE',
        user: 'nobody',
        password: s.imapPassword,
        mailbox: 'INBOX',
        createdAt: at,
        updatedAt: at,
      },
    },
  ];
}

/** A client of the daemon in `cwd` with its bootstrap key. */
function clientIn(cwd: string, url: string): WfxClient {
  const key = readFileSync(join(cwd, '.wfx', 'bootstrap.key'), 'utf8').trim();
  return new WfxClient({ url, apiKey: key, credentialSource: 'test' });
}

async function openAi(t: Test, apiKey: string): Promise<OpenAiServer> {
  const server = await startOpenAiServer({ apiKey });
  t.teardown(() => server.close());
  return server;
}

/** The provider answers with the key given, and a delivery signed with the hook secret verifies. */
async function secretsWork(t: Test, client: WfxClient, url: string, ai: OpenAiServer, s: Plain): Promise<void> {
  ai.script(reply.text('ready'));
  t.equal((await client.aiProviders.test('gpt')).text, 'ready', 'the provider key opens and is sent');
  t.equal(ai.requests.at(-1)!.headers.authorization, `Bearer ${s.providerKey}`);
  const endpoint = (await client.webhooks.get('hook')).endpoints[0]!.url.replace(/^https?:\/\/[^/]+/, url);
  const body = Buffer.from(JSON.stringify({ n: randomUUID() }));
  const headers = signDelivery({ provider: 'GITHUB', authType: 'HMAC' }, s.hookSecret, body, new Date(), {
    eventType: 'push',
    eventId: randomUUID(),
  });
  const res = await fetch(endpoint, {
    method: 'POST',
    headers: { ...headers, 'content-type': 'application/json' },
    body,
  });
  const { deliveryId } = (await res.json()) as { deliveryId: string };
  const record = await eventually('the delivery processed', async () =>
    (await client.webhooks.deliveries('hook')).items.find(
      (d) => d.deliveryId === deliveryId && !('pending' in d && d.pending),
    ),
  );
  t.match(record, { signatureOk: true }, 'the signing secret opens and verifies');
}

/** Waits for a process to exit. */
async function gone(pid: number): Promise<void> {
  killIfAlive(pid);
  await eventually(`process ${pid} is gone`, () => {
    try {
      process.kill(pid, 0);
      return false;
    } catch {
      return true;
    }
  });
}

/** One PostgreSQL server for the file (none where it cannot run); each test has a database of its own on it. */
const postgres = POSTGRES_SKIP ? null : await startPostgres(t);

t.test(
  'a data directory holding secrets in plain text is converted on open, its old copies gone; a crash part way ends the same',
  async (t) => {
    const s = plainSecrets();
    const ai = await openAi(t, s.providerKey);
    const cwd = t.testdir({});
    const dataDir = join(cwd, '.wfx');
    await startDaemon(t, { cwd }); // bootstraps the directory
    t.equal((await wfxIn(['daemon', 'stop'], { cwd })).code, 0);
    // As an earlier version left it: a provider in the snapshot, the rest in the journal.
    const [provider, ...rest] = plainRecords(s, ai.baseUrl);
    // As the daemon opens it: a data directory it made keeps its executions in segments.
    const old = await Store.open<WfxState, WfxRecord>({ dir: dataDir, ...wfxJsonStore() });
    await old.commit(provider!);
    await old.checkpoint();
    await old.commit(...rest);
    await old.close({ checkpoint: false });
    const needles = needlesOf(Object.values(s));
    t.ok(scanDir(dataDir, needles).findings.length >= 3, 'the plain secrets are on disk to begin with');

    // The first start converts them and is killed after the reseal, before its checkpoint.
    const first = spawnWfx(t, ['daemon', 'start', '--foreground', '--port', '0', '--data-dir', dataDir], {
      env: { WFX_TEST_CRASH_POINT: 'secrets:resealed' },
    });
    let out = '';
    first.stdout.on('data', (b: Buffer) => (out += b.toString()));
    await eventually('the reseal is durable', () => out.includes('crash-point secrets:resealed\n'));
    const exited = once(first, 'exit');
    first.kill('SIGKILL');
    await exited;
    t.ok(scanDir(dataDir, needles).findings.length > 0, 'killed before the checkpoint: the old journal is still there');

    const info = await startDaemon(t, { cwd });
    const client = clientIn(cwd, info.url);
    t.match(await client.admin.secrets(), { plain: 0, keys: [{ held: true, secrets: 3 }] });
    t.same(scanDir(dataDir, needles).findings, [], 'no plain copy left: snapshot and journal rewritten');
    // The log is written a quarter of a second at a time.
    await eventually('the start says it finished what the killed one began', async () =>
      /"msg":"secrets: secrets were sealed again before a crash; a checkpoint removed/.test(
        await readFile(join(dataDir, 'logs', 'daemon.log'), 'utf8'),
      ),
    );
    await secretsWork(t, client, info.url, ai, s);
    t.equal((await wfxIn(['daemon', 'stop'], { cwd })).code, 0);
    t.same(scanDir(dataDir, needles).findings, [], 'nor after a stop');
  },
);

t.test(
  'a PostgreSQL database holding secrets in plain text is converted on open: no journal row or snapshot holds them',
  { skip: POSTGRES_SKIP },
  async (t) => {
    const s = plainSecrets();
    const ai = await openAi(t, s.providerKey);
    const db = postgres!;
    const cwd = t.testdir({});
    const args = ['--store', db.url];
    await startDaemon(t, { cwd, args });
    t.equal((await wfxIn(['daemon', 'stop'], { cwd })).code, 0);
    const old = await PgStore.open<WfxState, WfxRecord>({
      connectionString: db.url,
      owner: 'an-earlier-version',
      ...WFX_STORE,
      shared: WFX_COMMONS,
    });
    const [provider, ...rest] = plainRecords(s, ai.baseUrl);
    await old.commit(provider!);
    await old.checkpoint();
    await old.commit(...rest);
    await old.close({ checkpoint: false });
    const rows = async () =>
      Buffer.from(
        (
          await db.query<{ row: string }>(
            `SELECT t::text AS row FROM wfx_journal t UNION ALL SELECT t::text FROM wfx_snapshots t
             UNION ALL SELECT t::text FROM wfx_executions t`,
          )
        )
          .map((r) => r.row)
          .join('\n'),
      );
    const needles = needlesOf(Object.values(s));
    t.ok(scanBytes(await rows(), 'db', needles).length >= 3, 'the plain secrets are in the database to begin with');

    const info = await startDaemon(t, { cwd, args });
    t.same(scanBytes(await rows(), 'db', needles), [], 'converted: no journal row or snapshot holds them');
    const client = clientIn(cwd, info.url);
    await secretsWork(t, client, info.url, ai, s);
    t.match(await client.admin.secrets(), { plain: 0 });
  },
);

t.test('a key rotation cut by SIGKILL is finished by the next start; then the old key can go', async (t) => {
  const s = plainSecrets();
  const ai = await openAi(t, s.providerKey);
  const cwd = t.testdir({});
  const dataDir = join(cwd, '.wfx');
  const daemon = await startDaemon(t, { cwd, env: { WFX_TEST_CRASH_POINT: 'secrets:pinned' } });
  const client = clientIn(cwd, daemon.url);
  await client.aiProviders.create({
    name: 'gpt',
    kind: 'openai-compatible',
    baseUrl: ai.baseUrl,
    model: 'tiny',
    apiKey: s.providerKey,
  });
  await client.webhooks.register({ name: 'hook', provider: 'GITHUB', secret: s.hookSecret });
  const before = await client.admin.secrets();
  t.match(before, { keys: [{ keyId: before.keyId, secrets: 2 }] });

  const rotating = client.admin.rotateSecrets().catch((err: unknown) => err);
  const out = join(dataDir, 'logs', 'daemon.out');
  await eventually('the new key is current, nothing sealed with it yet', async () =>
    (await readFile(out, 'utf8').catch(() => '')).includes('crash-point secrets:pinned\n'),
  );
  await gone(daemon.pid);
  t.ok((await rotating) instanceof Error, 'the rotation got no answer');

  const after = await startDaemon(t, { cwd });
  const c2 = clientIn(cwd, after.url);
  const report = await c2.admin.secrets();
  t.not(report.keyId, before.keyId, 'the new key is current');
  t.same(
    report.keys.map((k) => [k.keyId, k.secrets]),
    [
      [before.keyId, 0],
      [report.keyId, 2],
    ],
    'every secret sealed with it at the start',
  );
  t.same(
    scanDir(dataDir, [{ secret: 'old key', encoding: 'envelope', bytes: Buffer.from(`wfxenc:v1:${before.keyId}:`) }])
      .findings,
    [],
    'nothing sealed with the old key is left on disk (the start checkpointed)',
  );
  await secretsWork(t, c2, after.url, ai, s);

  // The old key leaves the file: the daemon starts without it.
  t.equal((await wfxIn(['daemon', 'stop'], { cwd })).code, 0);
  const file = join(dataDir, 'secrets.key');
  const lines = readFileSync(file, 'utf8').split('\n');
  const oldLine = lines.findIndex((l) => l !== '' && !l.startsWith('#'));
  writeFileSync(file, lines.filter((_, i) => i !== oldLine).join('\n'));
  const third = await startDaemon(t, { cwd });
  const c3 = clientIn(cwd, third.url);
  t.same(
    (await c3.admin.secrets()).keys.map((k) => k.keyId),
    [report.keyId],
    'one key left',
  );
  await secretsWork(t, c3, third.url, ai, s);
});

t.test(
  'without its key a daemon refuses to start, naming the key; with the key back, or beside a restored backup, it starts; told to, it forgets what the lost key sealed',
  async (t) => {
    const s = plainSecrets();
    const ai = await openAi(t, s.providerKey);
    const cwd = t.testdir({});
    const dataDir = join(cwd, '.wfx');
    const info = await startDaemon(t, { cwd });
    const client = clientIn(cwd, info.url);
    await client.aiProviders.create({
      name: 'gpt',
      kind: 'openai-compatible',
      baseUrl: ai.baseUrl,
      model: 'tiny',
      apiKey: s.providerKey,
    });
    await client.webhooks.register({ name: 'hook', provider: 'GITHUB', secret: s.hookSecret });
    const { keyId } = await client.admin.secrets();
    const backup = join(cwd, 'copy');
    t.equal((await wfxIn(['daemon', 'backup', backup], { cwd })).code, 0);
    t.equal((await wfxIn(['daemon', 'stop'], { cwd })).code, 0);

    const key = join(dataDir, 'secrets.key');
    renameSync(key, join(cwd, 'kept.key'));
    for (const foreground of [false, true]) {
      const args = ['daemon', 'start', '--port', '0', ...(foreground ? ['--foreground'] : [])];
      // A foreground start runs as its own process: were it to start, it would not block this one.
      const refused = foreground ? await wfx(args, { cwd }) : await wfxIn(args, { cwd });
      t.equal(refused.code, 1, args.join(' '));
      t.match(refused.stderr, new RegExp(`^SECRETS_KEY_MISSING: .*key ${keyId}`), 'the code, and the key it needs');
      t.equal((await wfxIn(['daemon', 'status'], { cwd })).code, 5, 'no daemon runs');
    }
    t.notOk(existsSync(key), 'no new key was made in its place');
    const damaged = 'hunter2-is-no-key\n';
    writeFileSync(key, damaged, { mode: 0o600 });
    const invalid = await wfxIn(['daemon', 'start', '--port', '0'], { cwd });
    t.match(invalid.stderr, /^SECRETS_KEY_INVALID: line 1 of /);
    t.notMatch(invalid.stderr, damaged.trim(), 'the line is not shown');

    // From another file: --secrets-key-file.
    const elsewhere = await startDaemon(t, { cwd, args: ['--secrets-key-file', join(cwd, 'kept.key')] });
    await secretsWork(t, clientIn(cwd, elsewhere.url), elsewhere.url, ai, s);
    t.equal((await wfxIn(['daemon', 'stop'], { cwd })).code, 0);

    // The backup: refused on its own, started once the key is put beside it.
    const restored = await wfxIn(['daemon', 'start', '--port', '0', '--data-dir', backup], { cwd });
    t.match(restored.stderr, /^SECRETS_KEY_MISSING: /, 'a backup holds no key');
    copyFileSync(join(cwd, 'kept.key'), join(backup, 'secrets.key'));
    const onCopy = await startDaemon(t, { cwd, dataDir: backup });
    const copyClient = new WfxClient({
      url: onCopy.url,
      apiKey: readFileSync(join(cwd, '.wfx', 'bootstrap.key'), 'utf8').trim(),
      credentialSource: 'test',
    });
    await secretsWork(t, copyClient, onCopy.url, ai, s);
    t.equal((await wfxIn(['daemon', 'stop', '--data-dir', backup], { cwd })).code, 0);

    // The key lost for good: told to, the daemon forgets what it sealed, and starts.
    renameSync(key, join(cwd, 'damaged.key'));
    const forgot = await startDaemon(t, { cwd, args: ['--forget-secrets-without-key'] });
    const after = clientIn(cwd, forgot.url);
    t.match(await after.aiProviders.get('gpt'), { hasApiKey: false }, 'the provider is kept, without its key');
    t.match(await after.webhooks.get('hook'), { endpoints: [{ secrets: 0 }] }, 'the webhook, without its secret');
    const report = await after.admin.secrets();
    t.not(report.keyId, keyId, 'a new key');
    t.same(
      report.keys.map((k) => k.keyId),
      [report.keyId],
      'nothing sealed with the lost one is left',
    );
    t.same(
      scanDir(dataDir, [{ secret: 'lost key', encoding: 'envelope', bytes: Buffer.from(`wfxenc:v1:${keyId}:`) }])
        .findings,
      [],
      'nor on disk',
    );
  },
);

t.test(
  "on PostgreSQL a standby without the database's key is refused at its start; given the key, it takes over and opens the secrets",
  { skip: POSTGRES_SKIP },
  async (t) => {
    const s = plainSecrets();
    const ai = await openAi(t, s.providerKey);
    const store = await postgres!.createDatabase('standby');
    const root = t.testdir({});
    const [dirA, dirB] = [join(root, 'a'), join(root, 'b')];
    const a = await startDaemon(t, { dataDir: dirA, args: ['--store', store, '--lease', '2s'] });
    const adminKey = readFileSync(join(dirA, 'bootstrap.key'), 'utf8').trim();
    const clientA = new WfxClient({ url: a.url, apiKey: adminKey, credentialSource: 'test' });
    await clientA.aiProviders.create({
      name: 'gpt',
      kind: 'openai-compatible',
      baseUrl: ai.baseUrl,
      model: 'tiny',
      apiKey: s.providerKey,
    });
    await clientA.webhooks.register({ name: 'hook', provider: 'GITHUB', secret: s.hookSecret });
    const { keyId } = await clientA.admin.secrets();

    const standbyArgs = ['daemon', 'start', '--foreground', '--standby', '--port', '0', '--data-dir', dirB];
    const refused = await wfx([...standbyArgs, '--store', store]);
    t.equal(refused.code, 1, 'the standby exits');
    t.match(refused.stderr, new RegExp(`SECRETS_KEY_MISSING: .*key ${keyId}`), 'naming the key it needs');

    const b = spawnWfx(t, [...standbyArgs, '--store', store, '--secrets-key-file', join(dirA, 'secrets.key')]);
    let out = '';
    b.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    await eventually('b stands by', () => out.includes('standing by') || out.includes('forwarding'));
    await gone(a.pid);
    const info = await eventually('b serves', async () => {
      const url = (JSON.parse(await readFile(join(dirB, 'daemon.json'), 'utf8')) as { url: string }).url;
      const health = (await (await fetch(`${url}/health`)).json()) as { status: string };
      return health.status === 'ok' && url;
    });
    const clientB = new WfxClient({ url: info, apiKey: adminKey, credentialSource: 'test' });
    await secretsWork(t, clientB, info, ai, s);
  },
);
