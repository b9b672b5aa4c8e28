import t, { type Test } from 'tap';
import type { LightMyRequestResponse } from 'fastify';
import { apiHarness, type ApiHarness, type TestKey } from '../../../helpers/api.js';
import { parseApiKey } from '../../../../src/daemon/auth/api-keys.js';
import { LINK_TTL_MS } from '../../../../src/daemon/api/console/links.js';
import type { OidcLogin } from '../../../../src/daemon/api/console/oidc-login.js';

const HOST = '127.0.0.1:7878';
const ORIGIN = `http://${HOST}`;
const FLOW = (id: string) =>
  `processId: ${id}\nname: F\nnodes:\n  s: { type: startEvent, next: w }\n  w: { type: intermediateCatchEvent, eventType: message, messageRef: go, next: e }\n  e: { type: endEvent }\n`;

/** The session cookie's value from a Set-Cookie answer. */
function sessionCookie(res: LightMyRequestResponse): string {
  const header = [res.headers['set-cookie']].flat().find((c) => c?.startsWith('wfx_session='));
  if (!header) throw new Error(`no session cookie in ${JSON.stringify(res.headers)}`);
  return header.split(';')[0]!;
}

/** A request as the console's own page makes it: the session cookie, same-origin fetch metadata. */
function fromConsole(h: ApiHarness, cookie: string, method: 'GET' | 'POST', url: string, payload?: object) {
  return h.app.inject({
    method,
    url,
    headers: { host: HOST, cookie, 'sec-fetch-site': 'same-origin', ...(method === 'POST' && { origin: ORIGIN }) },
    ...(payload && { payload }),
  });
}

async function signInWithKey(t: Test, h: ApiHarness, key: TestKey): Promise<string> {
  const res = await h.app.inject({
    method: 'POST',
    url: '/auth/session',
    headers: { host: HOST, origin: ORIGIN, 'sec-fetch-site': 'same-origin' },
    payload: { apiKey: key.apiKey },
  });
  t.equal(res.statusCode, 200, 'signed in');
  return sessionCookie(res);
}

t.test('an API key pasted once becomes an HttpOnly, SameSite=Strict session of that key', async (t) => {
  const h = await apiHarness(t);
  const key = await h.key('operator', 'acme');
  const res = await h.app.inject({
    method: 'POST',
    url: '/auth/session',
    headers: { host: HOST, origin: ORIGIN },
    payload: { apiKey: key.apiKey },
  });
  t.equal(res.statusCode, 200);
  t.equal(res.json().whoami.keyId, key.keyId);
  const setCookie = String(res.headers['set-cookie']);
  t.match(setCookie, /HttpOnly/);
  t.match(setCookie, /SameSite=Strict/);
  // The secret is base64url, '_' among its characters: cut by the key's own parser, not at the last '_'.
  t.notOk(setCookie.includes(parseApiKey(key.apiKey)!.secret), 'the key itself is not in the cookie');
  const cookie = sessionCookie(res);
  const me = await fromConsole(h, cookie, 'GET', '/auth/whoami');
  t.equal(me.statusCode, 200);
  t.equal(me.json().keyId, key.keyId);
  t.equal(me.json().organization, 'acme');

  const wrong = await h.app.inject({
    method: 'POST',
    url: '/auth/session',
    headers: { host: HOST, origin: ORIGIN },
    payload: { apiKey: `${key.apiKey}x` },
  });
  t.equal(wrong.json().error, 'UNAUTHORIZED');
  t.notOk(wrong.headers['set-cookie'], 'no session for a wrong key');
});

t.test('cross-site requests with the session cookie are refused', async (t) => {
  const h = await apiHarness(t);
  const key = await h.key('operator', 'acme');
  const cookie = await signInWithKey(t, h, key);
  const inject = (method: 'GET' | 'POST', headers: Record<string, string>) =>
    h.app.inject({
      method,
      url: method === 'GET' ? '/auth/whoami' : '/auth/signout',
      headers: { host: HOST, cookie, ...headers },
    });

  for (const site of ['cross-site', 'same-site'])
    t.equal((await inject('GET', { 'sec-fetch-site': site })).json().error, 'CROSS_SITE_REQUEST', `GET, ${site}`);
  t.equal(
    (await inject('POST', { 'sec-fetch-site': 'cross-site', origin: 'http://evil.test' })).json().error,
    'CROSS_SITE_REQUEST',
  );
  t.equal(
    (await inject('POST', { origin: 'http://evil.test' })).json().error,
    'CROSS_SITE_REQUEST',
    'older browser, other origin',
  );
  t.equal((await inject('POST', {})).json().error, 'CROSS_SITE_REQUEST', 'a POST with neither header');
  t.equal(
    (await inject('POST', { 'sec-fetch-site': 'none' })).json().error,
    'CROSS_SITE_REQUEST',
    'a POST is never typed in',
  );
  // A login form on another site cannot sign this browser in either.
  const forged = await h.app.inject({
    method: 'POST',
    url: '/auth/session',
    headers: { host: HOST, origin: 'http://evil.test', 'sec-fetch-site': 'cross-site' },
    payload: { apiKey: key.apiKey },
  });
  t.equal(forged.json().error, 'CROSS_SITE_REQUEST');
  // The session still works from the console itself: nothing above ended it.
  t.equal((await inject('GET', { 'sec-fetch-site': 'same-origin' })).statusCode, 200);
  t.equal((await inject('GET', {})).statusCode, 200, 'a read from an older browser');
});

t.test("a session sees and does exactly what its key may: another organization's execution is not found", async (t) => {
  const h = await apiHarness(t);
  const admin = await h.key('admin', null);
  const acme = await h.key('operator', 'acme');
  const globex = await h.key('operator', 'globex');
  const reader = await h.key('viewer', 'acme');
  const ids = { acme: '0c1e2f3a-4b5c-4d6e-8f70-8192a3b4c5d6', globex: '1c1e2f3a-4b5c-4d6e-8f70-8192a3b4c5d6' };
  for (const org of ['acme', 'globex'] as const) {
    const published = await h.call(admin, {
      method: 'POST',
      url: '/admin/flows',
      payload: { source: FLOW(ids[org]), organization: org },
    });
    t.equal(published.statusCode, 200, published.body);
  }
  const start = (key: TestKey, processId: string) =>
    h.call(key, { method: 'POST', url: '/process/exec', payload: { processId } });
  const globexRun = (await start(globex, ids.globex)).json().processInstanceId as string;
  const acmeRun = (await start(acme, ids.acme)).json().processInstanceId as string;

  const cookie = await signInWithKey(t, h, acme);
  t.equal((await fromConsole(h, cookie, 'GET', `/process/instance/${acmeRun}`)).statusCode, 200);
  const other = await fromConsole(h, cookie, 'GET', `/process/instance/${globexRun}`);
  t.equal(other.json().error, 'INSTANCE_NOT_FOUND');
  const cancelOther = await fromConsole(h, cookie, 'POST', `/process/instance/${globexRun}/cancel`);
  t.equal(cancelOther.json().error, 'INSTANCE_NOT_FOUND');

  // A viewer's session may read but not cancel: the daemon refuses, whatever the page shows.
  const readerCookie = await signInWithKey(t, h, reader);
  t.equal((await fromConsole(h, readerCookie, 'GET', `/process/instance/${acmeRun}`)).statusCode, 200);
  t.equal(
    (await fromConsole(h, readerCookie, 'POST', `/process/instance/${acmeRun}/cancel`)).json().error,
    'FORBIDDEN',
  );
  t.equal((await fromConsole(h, cookie, 'POST', `/process/instance/${acmeRun}/cancel`)).statusCode, 200);
});

t.test('suspending or revoking the key ends its sessions; signing out ends one', async (t) => {
  const h = await apiHarness(t);
  const admin = await h.key('admin', null);
  const key = await h.key('operator', 'acme');
  const cookie = await signInWithKey(t, h, key);
  const other = await signInWithKey(t, h, key);
  t.equal((await h.call(admin, { method: 'POST', url: `/admin/api-keys/${key.keyId}/suspend` })).statusCode, 200);
  t.equal((await fromConsole(h, cookie, 'GET', '/auth/whoami')).json().error, 'UNAUTHORIZED');
  t.equal((await h.call(admin, { method: 'POST', url: `/admin/api-keys/${key.keyId}/activate` })).statusCode, 200);
  t.equal((await fromConsole(h, cookie, 'GET', '/auth/whoami')).json().error, 'UNAUTHORIZED', 'ended, not paused');

  const out = await fromConsole(h, other, 'POST', '/auth/signout');
  t.equal(out.statusCode, 200);
  t.same(out.json(), { endSessionUrl: null });
  t.match(String(out.headers['set-cookie']), /wfx_session=;.*Max-Age=0/);
  t.equal((await fromConsole(h, other, 'GET', '/auth/whoami')).json().error, 'UNAUTHORIZED');
});

t.test('a one-time link signs in once, for a short time, and only an API key makes one', async (t) => {
  const h = await apiHarness(t);
  const key = await h.key('admin', null);
  const made = await h.call(key, { method: 'POST', url: '/auth/links', headers: { host: HOST } });
  t.equal(made.statusCode, 200);
  const { url, path } = made.json() as { url: string; path: string };
  t.equal(url, `${ORIGIN}${path}`);
  const open = () => h.app.inject({ method: 'GET', url: path, headers: { host: HOST, 'sec-fetch-site': 'none' } });
  const first = await open();
  t.equal(first.statusCode, 303);
  t.equal(first.headers.location, '/', 'on to the console: the token leaves the address bar');
  const cookie = sessionCookie(first);
  t.equal((await fromConsole(h, cookie, 'GET', '/auth/whoami')).json().keyId, key.keyId);
  const again = await open();
  t.equal(again.statusCode, 401, 'used up');
  t.match(again.headers['content-type'], /text\/html/);
  t.match(again.headers['content-security-policy'], /frame-ancestors 'none'/);
  t.notOk(again.headers['set-cookie']);

  const late = (await h.call(key, { method: 'POST', url: '/auth/links', headers: { host: HOST } })).json()
    .path as string;
  h.clock.advance(LINK_TTL_MS);
  t.equal((await h.app.inject({ method: 'GET', url: late, headers: { host: HOST } })).statusCode, 401, 'expired');

  // A session cannot make links: a stolen page cannot mint sessions that outlive it.
  const viaSession = await fromConsole(h, cookie, 'POST', '/auth/links');
  t.equal(viaSession.json().error, 'FORBIDDEN');
});

t.test('an administrator lists and revokes the sessions of their own organization only', async (t) => {
  const h = await apiHarness(t);
  const system = await h.key('admin', null);
  const acmeAdmin = await h.key('admin', 'acme');
  const acme = await h.key('operator', 'acme');
  const globex = await h.key('operator', 'globex');
  const acmeCookie = await signInWithKey(t, h, acme);
  await signInWithKey(t, h, globex);
  const listed = (await h.call(acmeAdmin, { method: 'GET', url: '/admin/sessions' })).json().items as Array<{
    id: string;
    keyId: string;
    organization: string;
  }>;
  t.same(
    listed.map((s) => s.organization),
    ['acme'],
  );
  t.equal((await h.call(system, { method: 'GET', url: '/admin/sessions' })).json().items.length, 2);
  const globexSession = (await h.call(system, { method: 'GET', url: '/admin/sessions' }))
    .json()
    .items.find((s: { organization: string }) => s.organization === 'globex') as { id: string };
  const refused = await h.call(acmeAdmin, { method: 'POST', url: `/admin/sessions/${globexSession.id}/revoke` });
  t.equal(refused.json().error, 'NOT_FOUND');
  t.equal(
    (await h.call(acmeAdmin, { method: 'POST', url: `/admin/sessions/${listed[0]!.id}/revoke` })).statusCode,
    200,
  );
  t.equal((await fromConsole(h, acmeCookie, 'GET', '/auth/whoami')).json().error, 'UNAUTHORIZED');
  t.equal((await h.call(acme, { method: 'GET', url: '/admin/sessions' })).json().error, 'FORBIDDEN');
});

t.test('without an OIDC client, the console offers keys and links only', async (t) => {
  const h = await apiHarness(t);
  t.same((await h.app.inject({ method: 'GET', url: '/auth/config' })).json(), {
    oidc: false,
    apiKey: true,
    link: true,
  });
  t.equal((await h.app.inject({ method: 'GET', url: '/auth/login' })).json().error, 'NOT_FOUND');
});

t.test('the identity provider sign-in keeps only a returnTo of this origin (the shared check)', async (t) => {
  const asked: string[] = [];
  const login = {
    async begin(_redirectUri: string, returnTo: string) {
      asked.push(returnTo);
      return { url: 'http://idp.test/authorize', binding: 'b' };
    },
  } as unknown as OidcLogin;
  const h = await apiHarness(t, { console: { login } });
  for (const returnTo of [
    '/executions?state=FAILED',
    '/\t/evil.test/x',
    '/\\evil.test',
    '//evil.test',
    'https://evil.test',
  ]) {
    const res = await h.app.inject({ method: 'GET', url: `/auth/login?returnTo=${encodeURIComponent(returnTo)}` });
    t.equal(res.statusCode, 302, returnTo);
    t.equal(res.headers['cache-control'], 'no-store', `${returnTo}: not stored`);
  }
  t.same(asked, ['/executions?state=FAILED', '/', '/', '/', '/']);
});

t.test('behind a proxy that ends TLS, links and cookies are of --public-url', async (t) => {
  const h = await apiHarness(t, { publicUrl: 'https://wfx.example.com' });
  const key = await h.key('admin', null);
  const link = await h.call(key, { method: 'POST', url: '/auth/links', headers: { host: HOST } });
  t.match(link.json().url, /^https:\/\/wfx\.example\.com\/auth\/link\?token=/, "the link is the browser's address");
  const session = (origin: string) =>
    h.app.inject({
      method: 'POST',
      url: '/auth/session',
      headers: { host: HOST, origin },
      payload: { apiKey: key.apiKey },
    });
  const viaProxy = await session('https://wfx.example.com');
  t.equal(viaProxy.statusCode, 200, 'the public origin is this daemon');
  t.match(String(viaProxy.headers['set-cookie']), /; Secure/, 'a Secure cookie: browsers reach it over HTTPS');
  t.equal((await session(ORIGIN)).statusCode, 200, 'so is its own address, reached directly');
  t.equal((await session('https://evil.test')).json().error, 'CROSS_SITE_REQUEST');
});
