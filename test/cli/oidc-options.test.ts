import '../setup/fixtures.js'; // fixtures under the OS temp dir (see there)
import { join } from 'node:path';
import t from 'tap';
import { oidcArgs, oidcOptions } from '../../src/cli/oidc-options.js';
import type { CliContext } from '../../src/cli/context.js';
import { codeOfCall } from '../helpers/error-code.js';

const ctx = (cwd: string, env: NodeJS.ProcessEnv = {}) => ({ cwd, env }) as unknown as CliContext;
const issuer = { oidcIssuer: 'http://127.0.0.1:1/', oidcAudience: 'wfx' };

t.test('the console client needs the issuer; its secret comes from a file or the environment', async (t) => {
  const dir = t.testdir({ secret: 's3cret\n', empty: '' });
  t.equal(
    codeOfCall(() => oidcOptions(ctx(dir), { oidcClientId: 'console' })),
    'USAGE_ERROR',
  );
  t.equal(
    codeOfCall(() => oidcOptions(ctx(dir), { ...issuer, oidcScopes: 'openid' })),
    'USAGE_ERROR',
  );
  t.equal(
    codeOfCall(() => oidcOptions(ctx(dir), { oidcIssuer: issuer.oidcIssuer })),
    'USAGE_ERROR',
  );
  t.equal(
    codeOfCall(() => oidcOptions(ctx(dir), { ...issuer, oidcClientId: 'c', oidcClientSecretFile: 'empty' })),
    'USAGE_ERROR',
  );
  t.equal(
    codeOfCall(() => oidcOptions(ctx(dir), { ...issuer, oidcClientId: 'c', oidcClientSecretFile: 'missing' })),
    'USAGE_ERROR',
  );

  t.same(oidcOptions(ctx(dir), { ...issuer, oidcClientId: 'c', oidcClientSecretFile: 'secret' }).oidcClient, {
    clientId: 'c',
    clientSecret: 's3cret',
  });
  t.same(oidcOptions(ctx(dir, { WFX_OIDC_CLIENT_SECRET: 'from-env' }), { ...issuer, oidcClientId: 'c' }).oidcClient, {
    clientId: 'c',
    clientSecret: 'from-env',
  });
  t.same(
    oidcOptions(ctx(dir), { ...issuer, oidcClientId: 'c', oidcScopes: 'openid' }).oidcClient,
    {
      clientId: 'c',
      scopes: 'openid',
    },
    'a public client: no secret',
  );
  t.same(oidcOptions(ctx(dir), {}), {}, 'no OIDC at all');
  t.same(oidcArgs(ctx(dir), { ...issuer, oidcClientId: 'c', oidcClientSecretFile: 'secret' }), [
    '--oidc-issuer',
    issuer.oidcIssuer,
    '--oidc-audience',
    'wfx',
    '--oidc-client-id',
    'c',
    '--oidc-client-secret-file',
    join(dir, 'secret'),
  ]);
});

t.test('--public-url is passed on to the daemon and to a background one', async (t) => {
  const dir = t.testdir({});
  t.same(oidcOptions(ctx(dir), { publicUrl: 'https://wfx.example.com' }), { publicUrl: 'https://wfx.example.com' });
  t.same(oidcArgs(ctx(dir), { publicUrl: 'https://wfx.example.com' }), ['--public-url', 'https://wfx.example.com']);
});
