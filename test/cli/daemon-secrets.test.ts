import '../setup/fixtures.js'; // fixtures under the OS temp dir (see there)
import { join } from 'node:path';
import t from 'tap';
import { secretsOptions } from '../../src/cli/daemon-options.js';
import type { CliContext } from '../../src/cli/context.js';
import { startDaemon, wfxIn } from '../helpers/cli.js';

const ctx = (env: NodeJS.ProcessEnv) => ({ env, cwd: '/work' }) as CliContext;

t.test('the secrets key: one way only, a file resolved where the command runs', async (t) => {
  t.same(secretsOptions(ctx({}), {}), {}, 'none: <data-dir>/secrets.key');
  t.same(secretsOptions(ctx({}), { secretsKeyFile: 'keys/k' }), { secretsKey: { file: '/work/keys/k' } });
  t.same(secretsOptions(ctx({ WFX_SECRETS_KEY_FILE: '/etc/wfx/k' }), {}), { secretsKey: { file: '/etc/wfx/k' } });
  t.same(secretsOptions(ctx({ WFX_SECRETS_KEY: 'abc' }), {}), { secretsKey: { text: 'abc' } });
  t.same(secretsOptions(ctx({}), { secretsKeyring: true }), { secretsKey: { keyring: true } });
  t.same(secretsOptions(ctx({}), { forgetSecretsWithoutKey: true }), { secretsKey: { forgetMissing: true } });
  for (const [env, flags] of [
    [{ WFX_SECRETS_KEY: 'abc' }, { secretsKeyFile: 'k' }],
    [{}, { secretsKeyFile: 'k', secretsKeyring: true }],
    [{ WFX_SECRETS_KEY_FILE: 'k', WFX_SECRETS_KEY: 'abc' }, {}],
  ] as const)
    t.throws(() => secretsOptions(ctx(env), flags), { code: 'USAGE_ERROR' }, JSON.stringify([env, flags]));
});

t.test('wfx daemon secrets and rotate-secrets-key: the keys, never a key; a system key only', async (t) => {
  const cwd = t.testdir({});
  await startDaemon(t, { cwd });
  const run = (args: string[]) => wfxIn(args, { cwd });
  const shown = await run(['daemon', 'secrets']);
  t.equal(shown.code, 0, shown.stderr);
  t.match(
    shown.stdout,
    /^keys kept in .*\/\.wfx\/secrets\.key\n\nKEY\s+SECRETS\n[0-9a-f]{16}\s+0\s+current: seals new secrets\n$/,
  );
  t.equal((await run(['webhooks', 'create', '--name', 'h', '--provider', 'GITHUB'])).code, 0);
  const rotated = await run(['daemon', 'rotate-secrets-key']);
  t.equal(rotated.code, 0, rotated.stderr);
  t.match(rotated.stdout, /^sealed 1 secret\(s\) with key ([0-9a-f]{16}) \(added to .*secrets\.key\)\n/);
  t.match(rotated.stdout, /[0-9a-f]{16}\s+0\s+unused: remove it once no backup you keep needs it\n/);
  t.match(rotated.stdout, /[0-9a-f]{16}\s+1\s+current: seals new secrets\n/);
  const json = JSON.parse((await run(['daemon', 'secrets', '--json'])).stdout) as { keys: unknown[]; where: string };
  t.equal(json.keys.length, 2);
  t.equal(json.where, join(cwd, '.wfx', 'secrets.key'));
  const org = JSON.parse(
    (await run(['keys', 'create', '--name', 'a', '--role', 'admin', '--org', 'acme', '--json'])).stdout,
  ) as {
    apiKey: string;
  };
  const refused = await wfxIn(['daemon', 'secrets', '--api-key', org.apiKey], { cwd });
  t.equal(refused.code, 1);
  t.match(refused.stderr, /^FORBIDDEN: /);
});
