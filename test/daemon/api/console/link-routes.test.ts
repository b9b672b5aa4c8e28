import t, { type Test } from 'tap';
import type { LightMyRequestResponse } from 'fastify';
import { apiHarness, type ApiHarness, type TestKey } from '../../../helpers/api.js';
import { parseApiKey } from '../../../../src/daemon/auth/api-keys.js';
import { LINK_TTL_MS } from '../../../../src/daemon/api/console/links.js';

/*
 * The one-time link's two routes: GET /auth/link signs in at once only when the person opened
 * it themselves in a browser with no session of someone else; otherwise it answers a page that
 * asks, and only the page's POST (same-origin only) uses the token up.
 */

const HOST = '127.0.0.1:7878';
const ORIGIN = `http://${HOST}`;

function sessionCookie(res: LightMyRequestResponse): string | null {
  const header = [res.headers['set-cookie']].flat().find((c) => c?.startsWith('wfx_session='));
  return header ? header.split(';')[0]! : null;
}

async function linkOf(t: Test, h: ApiHarness, key: TestKey): Promise<{ path: string; token: string }> {
  const made = await h.call(key, { method: 'POST', url: '/auth/links', headers: { host: HOST } });
  t.equal(made.statusCode, 200);
  const path = made.json().path as string;
  return { path, token: new URL(path, ORIGIN).searchParams.get('token')! };
}

/** GET the link as a browser navigation with `headers` (Sec-Fetch-Site, a cookie). */
function open(h: ApiHarness, path: string, headers: Record<string, string>) {
  return h.app.inject({ method: 'GET', url: path, headers: { host: HOST, ...headers } });
}

/**
 * POST the confirmation form as the page's button does: same-origin unless `headers` say
 * otherwise (an empty value leaves that header out).
 */
function confirm(h: ApiHarness, token: string, headers: Record<string, string> = {}) {
  const all: Record<string, string> = {
    host: HOST,
    origin: ORIGIN,
    'sec-fetch-site': 'same-origin',
    'content-type': 'application/x-www-form-urlencoded',
    ...headers,
  };
  return h.app.inject({
    method: 'POST',
    url: '/auth/link',
    headers: Object.fromEntries(Object.entries(all).filter(([, v]) => v !== '')),
    payload: new URLSearchParams({ token }).toString(),
  });
}

async function whoami(h: ApiHarness, cookie: string) {
  const res = await h.app.inject({
    method: 'GET',
    url: '/auth/whoami',
    headers: { host: HOST, cookie, 'sec-fetch-site': 'same-origin' },
  });
  return res.json() as { keyId?: string; organization?: string | null; error?: string };
}

t.test('a link opened by the person, with no session, signs in at once', async (t) => {
  const h = await apiHarness(t);
  const key = await h.key('admin', null);
  const { path } = await linkOf(t, h, key);
  const head = await h.app.inject({ method: 'HEAD', url: path, headers: { host: HOST, 'sec-fetch-site': 'none' } });
  t.notOk(head.headers['set-cookie'], 'a HEAD signs no one in');
  const res = await open(h, path, { 'sec-fetch-site': 'none' });
  t.equal(res.statusCode, 303);
  t.equal(res.headers.location, '/');
  t.equal(res.headers['cache-control'], 'no-store');
  t.equal((await whoami(h, sessionCookie(res)!)).keyId, key.keyId);
  t.equal((await open(h, path, { 'sec-fetch-site': 'none' })).statusCode, 401, 'good once');
});

t.test('a link from another site asks first, and its GET neither signs in nor uses the token', async (t) => {
  const h = await apiHarness(t);
  const system = await h.key('admin', null);
  const attacker = await h.key('admin', 'evilcorp', { name: 'attacker <b>key</b>' });
  const { path, token } = await linkOf(t, h, attacker);

  for (const headers of [
    { 'sec-fetch-site': 'cross-site' } as Record<string, string>,
    { 'sec-fetch-site': 'same-site' },
    { 'sec-fetch-site': 'same-origin' },
    {}, // a browser without Fetch Metadata: it cannot say the person opened it
    { 'sec-fetch-site': 'none', 'sec-purpose': 'prefetch;prerender' }, // ahead of the person's navigation
    { 'sec-fetch-site': 'none', purpose: 'prefetch' },
  ]) {
    const page = await open(h, path, headers);
    const why = JSON.stringify(headers);
    t.equal(page.statusCode, 200, why);
    t.notOk(page.headers['set-cookie'], `${why}: no session`);
    t.match(page.headers['content-type'], /^text\/html/);
    t.equal(page.headers['cache-control'], 'no-store');
    t.match(page.headers['content-security-policy'], /form-action 'self'/);
    t.equal(page.headers['x-frame-options'], 'DENY');
    t.match(page.body, /evilcorp/, `${why}: names the organization`);
    t.match(page.body, new RegExp(attacker.keyId), `${why}: and the key's id`);
    t.match(page.body, /attacker &#60;b&#62;key&#60;\/b&#62;/, `${why}: and its name, escaped`);
    t.notMatch(page.body, parseApiKey(attacker.apiKey)!.secret, `${why}: never the secret`);
    t.match(page.body, /<form method="post" action="\/auth\/link">/);
    t.match(page.body, new RegExp(`name="token" value="${token}"`));
    t.notMatch(page.body, /<script|style=/, 'no script or inline style');
  }

  // A form on another site posting the token is refused, and does not use it up.
  for (const headers of [
    { 'sec-fetch-site': 'cross-site', origin: 'http://evil.test' } as Record<string, string>,
    { 'sec-fetch-site': 'same-site', origin: 'http://a.127.0.0.1:7878' },
    { 'sec-fetch-site': 'none' }, // a POST is never typed in
    { 'sec-fetch-site': '', origin: 'http://evil.test' },
    { 'sec-fetch-site': '', origin: 'null' },
    { 'sec-fetch-site': '', origin: '' },
  ]) {
    const forged = await confirm(h, token, headers);
    t.equal(forged.statusCode, 403, JSON.stringify(headers));
    t.equal(forged.json().error, 'CROSS_SITE_REQUEST');
    t.notOk(forged.headers['set-cookie']);
  }

  // The person presses the button: signed in, the token used up.
  const confirmed = await confirm(h, token);
  t.equal(confirmed.statusCode, 303);
  t.equal(confirmed.headers.location, '/');
  t.equal(confirmed.headers['cache-control'], 'no-store');
  const cookie = sessionCookie(confirmed)!;
  t.match(await whoami(h, cookie), { keyId: attacker.keyId, organization: 'evilcorp' });
  t.equal((await confirm(h, token)).statusCode, 401, 'good once');
  t.equal((await open(h, path, { 'sec-fetch-site': 'cross-site' })).statusCode, 401, 'and no page for it either');

  // An older browser without Fetch Metadata sends this origin from the page (its Referrer-Policy says same-origin).
  const { token: other } = await linkOf(t, h, system);
  const page = await open(h, `/auth/link?token=${other}`, {});
  t.equal(page.headers['referrer-policy'], 'same-origin');
  t.equal((await confirm(h, other, { 'sec-fetch-site': '' })).statusCode, 303, 'Origin alone suffices');
});

t.test("a link opened with someone else's session asks before it replaces it", async (t) => {
  const h = await apiHarness(t);
  const victim = await h.key('admin', 'acme');
  const attacker = await h.key('admin', 'evilcorp');
  const signedIn = await open(h, (await linkOf(t, h, victim)).path, { 'sec-fetch-site': 'none' });
  const victimCookie = sessionCookie(signedIn)!;

  const { path, token } = await linkOf(t, h, attacker);
  const page = await open(h, path, { 'sec-fetch-site': 'none', cookie: victimCookie });
  t.equal(page.statusCode, 200, 'typed in, but another session would be replaced: asks');
  t.notOk(page.headers['set-cookie']);
  t.equal((await whoami(h, victimCookie)).organization, 'acme', 'the session is as it was');

  const confirmed = await confirm(h, token, { cookie: victimCookie });
  t.equal(confirmed.statusCode, 303);
  t.equal((await whoami(h, sessionCookie(confirmed)!)).organization, 'evilcorp');
  t.equal((await whoami(h, victimCookie)).error, 'UNAUTHORIZED', 'the replaced session ended');

  // A session of the link's own key is no one else's: `wfx console` run again signs in at once.
  const again = await open(h, (await linkOf(t, h, attacker)).path, {
    'sec-fetch-site': 'none',
    cookie: sessionCookie(confirmed)!,
  });
  t.equal(again.statusCode, 303);
  t.equal((await whoami(h, sessionCookie(again)!)).organization, 'evilcorp');

  // A session cookie sent twice: it is not clear whose browser this is, so the GET asks and the POST refuses.
  const { path: third, token: thirdToken } = await linkOf(t, h, attacker);
  const twice = `wfx_session=; ${sessionCookie(again)!}`;
  t.equal((await open(h, third, { 'sec-fetch-site': 'none', cookie: twice })).statusCode, 200, 'asks');
  const refused = await confirm(h, thirdToken, { cookie: twice });
  t.equal(refused.statusCode, 401);
  t.equal(refused.json().error, 'DUPLICATE_COOKIE');
  t.equal((await confirm(h, thirdToken)).statusCode, 303, 'the token still good after the refusal');
});

t.test('a link expires and a lapsed key signs no one in, whichever route', async (t) => {
  const h = await apiHarness(t);
  const admin = await h.key('admin', null);
  const key = await h.key('operator', 'acme');
  const { path, token } = await linkOf(t, h, key);
  t.equal((await open(h, path, { 'sec-fetch-site': 'cross-site' })).statusCode, 200, 'asks while it is good');
  h.clock.advance(LINK_TTL_MS);
  t.equal((await open(h, path, { 'sec-fetch-site': 'cross-site' })).statusCode, 401, 'expired: no page');
  t.equal((await confirm(h, token)).statusCode, 401, 'expired: no sign-in');

  const fresh = await linkOf(t, h, key);
  t.equal((await h.call(admin, { method: 'POST', url: `/admin/api-keys/${key.keyId}/suspend` })).statusCode, 200);
  t.equal((await open(h, fresh.path, { 'sec-fetch-site': 'none' })).statusCode, 401, 'suspended: no sign-in');
  t.equal((await confirm(h, fresh.token)).statusCode, 401);
});
