import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import t from 'tap';
import { createOidcVerifier } from '../../../src/daemon/api/oidc.js';
import { buildServer } from '../../../src/daemon/api/server.js';
import { WebhookReceiver } from '../../../src/daemon/triggers/webhooks.js';
import { engineHarness } from '../../helpers/engine.js';
import { AUDIENCE, startIssuer } from '../../helpers/oidc-issuer.js';

t.test('bearer JWTs from a real OIDC provider: accepted, mapped, and refused for every reason', async (t) => {
  const idp = await startIssuer(t);
  const h = await engineHarness(t);
  let offsetMs = 0; // moves the verifier's clock
  const app = buildServer({
    store: h.store,
    engine: h.engine,
    webhooks: new WebhookReceiver({ store: h.store, engine: h.engine }),
    bearer: createOidcVerifier({
      issuer: idp.issuer,
      audience: AUDIENCE,
      jwksCooldownMs: 0,
      now: () => new Date(Date.now() + offsetMs),
    }),
  });
  t.teardown(() => app.close());
  const whoami = (token: string) =>
    app.inject({ method: 'GET', url: '/auth/whoami', headers: { authorization: `Bearer ${token}` } });

  const operator = await idp.token('acme-operator');
  const ok = await whoami(operator);
  t.equal(ok.statusCode, 200);
  t.match(
    ok.json(),
    {
      subject: 'acme-operator',
      organization: 'acme',
      system: false,
      permissions: ['WORKFLOW_READ', 'WORKFLOW_EXECUTE'],
    },
    'roles claim -> permissions',
  );
  t.same((await whoami(await idp.token('acme-reader'))).json().permissions, ['WORKFLOW_READ'], 'permissions claim');

  const pid = await h.publish(
    `processId: AUTO\nname: J\nnodes:\n  start: { type: startEvent, next: done }\n  done: { type: endEvent }\n`,
    { organization: 'acme' },
  );
  const exec = await app.inject({
    method: 'POST',
    url: '/process/exec',
    headers: { authorization: `Bearer ${operator}` },
    payload: { processId: pid },
  });
  t.equal(exec.statusCode, 200, 'an org-scoped JWT starts with /process/exec');
  const reader = await app.inject({
    method: 'POST',
    url: '/process/exec',
    headers: { authorization: `Bearer ${await idp.token('acme-reader')}` },
    payload: { processId: pid },
  });
  t.equal(reader.statusCode, 403, 'without WORKFLOW_EXECUTE');

  const refusals: Array<[string, Promise<string> | string, RegExp]> = [
    ['wrong audience', idp.token('acme-operator', 'https://someone-else.test/api'), /aud/],
    ['no organization claim', idp.token('no-org'), /org_id/],
    ['garbage', 'not.a.jwt', /invalid bearer token/],
  ];
  const { privateKey } = await generateKeyPair('RS256');
  const forged = await new SignJWT({ org_id: 'acme', roles: ['admin'] })
    .setProtectedHeader({ alg: 'RS256', kid: 'key-1' })
    .setIssuer(idp.issuer)
    .setAudience(AUDIENCE)
    .setIssuedAt()
    .setExpirationTime('5m')
    .sign(privateKey);
  refusals.push(['signed by another key', forged, /signature/]);
  const now = Math.floor(Date.now() / 1000);
  refusals.push([
    'signed by the issuer, but with no expiry',
    idp.sign({ org_id: 'acme', roles: ['admin'], iat: now }),
    /exp/,
  ]);
  t.equal(
    (await whoami(await idp.sign({ org_id: 'acme', roles: ['admin'], iat: now, exp: now + 300 }))).statusCode,
    200,
    'the same token with an expiry is accepted',
  );
  for (const [name, token, why] of refusals) {
    const res = await whoami(await token);
    t.equal(res.statusCode, 401, name);
    t.match(res.json(), { error: 'UNAUTHORIZED', message: why }, name);
  }

  offsetMs = (300 + 30) * 1000; // 30 s past expiry: within the 60 s skew
  t.equal((await whoami(operator)).statusCode, 200, 'expired less than 60 s ago: accepted (clock skew)');
  offsetMs = (300 + 61) * 1000;
  const expired = await whoami(operator);
  t.equal(expired.statusCode, 401, 'expired more than 60 s ago');
  t.match(expired.json().message, /expired/);
  offsetMs = 0;

  await idp.rotate();
  const rotated = await idp.token('acme-operator');
  t.not(
    JSON.parse(Buffer.from(rotated.split('.')[0]!, 'base64url').toString()).kid,
    'key-1',
    'the issuer signs with a new key',
  );
  t.equal((await whoami(rotated)).statusCode, 200, 'after key rotation, the new key is fetched and tokens verify');
  t.equal((await whoami(operator)).statusCode, 401, 'tokens of the retired key no longer verify');
  const apiKey = await whoami('apk_0123456789abcdef_secret');
  t.equal(apiKey.statusCode, 401);
  t.match(apiKey.json(), { error: 'UNAUTHORIZED', message: /X-API-Key/ }, 'an API key as a bearer: told where it goes');
  void exportJWK;
});

t.test('a daemon without an issuer refuses bearer tokens, saying so', async (t) => {
  const h = await engineHarness(t);
  const app = buildServer({
    store: h.store,
    engine: h.engine,
    webhooks: new WebhookReceiver({ store: h.store, engine: h.engine }),
  });
  t.teardown(() => app.close());
  const res = await app.inject({ method: 'GET', url: '/auth/whoami', headers: { authorization: 'Bearer abc' } });
  t.equal(res.statusCode, 401);
  t.match(res.json().message, /no OIDC issuer.*X-API-Key/);
  const apiKey = await app.inject({
    method: 'GET',
    url: '/auth/whoami',
    headers: { authorization: 'Bearer apk_0123456789abcdef_secret' },
  });
  t.equal(apiKey.statusCode, 401);
  t.match(apiKey.json(), { error: 'UNAUTHORIZED', message: /goes in the X-API-Key header/ });
});

t.test('an organization claim that is not a valid name is refused', async (t) => {
  const { CLIENT_CLAIMS } = await import('../../helpers/oidc-issuer.js');
  CLIENT_CLAIMS['evil-org'] = { org_id: '__proto__', roles: ['admin'] };
  t.teardown(() => delete CLIENT_CLAIMS['evil-org']);
  const idp = await startIssuer(t);
  const h = await engineHarness(t);
  const app = buildServer({
    store: h.store,
    engine: h.engine,
    webhooks: new WebhookReceiver({ store: h.store, engine: h.engine }),
    bearer: createOidcVerifier({ issuer: idp.issuer, audience: AUDIENCE, jwksCooldownMs: 0 }),
  });
  t.teardown(() => app.close());
  const res = await app.inject({
    method: 'GET',
    url: '/auth/whoami',
    headers: { authorization: `Bearer ${await idp.token('evil-org' as 'no-org')}` },
  });
  t.equal(res.statusCode, 401);
  t.match(res.json().message, /not a valid organization name/);
});

t.test('a bearer verifier that rejects with something other than an Error still refuses the request', async (t) => {
  const h = await engineHarness(t);
  const app = buildServer({
    store: h.store,
    engine: h.engine,
    webhooks: new WebhookReceiver({ store: h.store, engine: h.engine }),

    bearer: () => Promise.reject(undefined),
  });
  t.teardown(() => app.close());
  const res = await app.inject({ method: 'GET', url: '/auth/whoami', headers: { authorization: 'Bearer whatever' } });
  t.equal(res.statusCode, 401, 'not let through with no caller');
  t.match(res.json(), { error: 'UNAUTHORIZED', message: /could not be verified/ });
});
