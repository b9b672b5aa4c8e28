import t from 'tap';
import { apiHarness, type ApiHarness } from '../../../helpers/api.js';
import { cookieValues } from '../../../../src/daemon/api/console/cookies.js';

/*
 * The session cookie is read by its exact name, and a name sent twice names no session: the
 * second one comes from another site under the same domain or another path, and neither may
 * choose the session.
 */

const HOST = '127.0.0.1:7878';
const ORIGIN = `http://${HOST}`;

t.test('cookieValues reads a cookie by its exact name, every time it is sent', async (t) => {
  t.same(cookieValues(undefined, 'wfx_session'), []);
  t.same(cookieValues('', 'wfx_session'), []);
  t.same(cookieValues('wfx_session=abc', 'wfx_session'), ['abc']);
  t.same(cookieValues(' a=1;  wfx_session = abc ; b=2', 'wfx_session'), ['abc'], 'white space around');
  t.same(cookieValues('xwfx_session=abc; wfx_session2=def; wfx_sessio=x; Wfx_Session=y', 'wfx_session'), []);
  t.same(cookieValues('wfx_session=; wfx_session=abc', 'wfx_session'), ['', 'abc'], 'an empty one counts');
  t.same(cookieValues('wfx_session=abc; wfx_session=def', 'wfx_session'), ['abc', 'def']);
  t.same(cookieValues('wfx_session=a=b', 'wfx_session'), ['a=b'], 'the value is all after the first =');
  t.same(cookieValues('wfx_session; other=wfx_session=x', 'wfx_session'), [], 'no = : not a value');
});

/** A signed-in session's cookie (`wfx_session=...`). */
async function signedIn(h: ApiHarness): Promise<string> {
  const key = await h.key('operator', 'acme');
  const res = await h.app.inject({
    method: 'POST',
    url: '/auth/session',
    headers: { host: HOST, origin: ORIGIN, 'sec-fetch-site': 'same-origin' },
    payload: { apiKey: key.apiKey },
  });
  if (res.statusCode !== 200) throw new Error(`sign-in failed: ${res.body}`);
  return [res.headers['set-cookie']].flat()[0]!.split(';')[0]!;
}

function whoami(h: ApiHarness, cookie: string) {
  return h.app.inject({
    method: 'GET',
    url: '/auth/whoami',
    headers: { host: HOST, cookie, 'sec-fetch-site': 'same-origin' },
  });
}

t.test('a session cookie sent twice is refused; other names are never read as it', async (t) => {
  const h = await apiHarness(t);
  const cookie = await signedIn(h);
  const value = cookie.slice('wfx_session='.length);
  t.equal((await whoami(h, `theme=dark; ${cookie}; lang=en`)).statusCode, 200, 'among other cookies');

  for (const header of [
    `wfx_session=; ${cookie}`,
    `${cookie}; wfx_session=`,
    `${cookie}; wfx_session=someone-elses`,
    `wfx_session=someone-elses; ${cookie}`,
    `${cookie}; ${cookie}`,
  ]) {
    const res = await whoami(h, header);
    t.equal(res.statusCode, 401, header);
    t.equal(res.json().error, 'DUPLICATE_COOKIE', header);
  }
  for (const header of [`xwfx_session=${value}`, `wfx_session2=${value}`, `WFX_SESSION=${value}`, 'wfx_session=']) {
    const res = await whoami(h, header);
    t.equal(res.statusCode, 401, header);
    t.equal(res.json().error, 'UNAUTHORIZED', `${header}: no session`);
  }

  // Signing in with a key over two cookies is refused too: the page says why, rather than loop.
  const key = await h.key('viewer', 'acme');
  const again = await h.app.inject({
    method: 'POST',
    url: '/auth/session',
    headers: { host: HOST, origin: ORIGIN, 'sec-fetch-site': 'same-origin', cookie: `wfx_session=x; ${cookie}` },
    payload: { apiKey: key.apiKey },
  });
  t.equal(again.json().error, 'DUPLICATE_COOKIE');
  t.notOk(again.headers['set-cookie']);
  t.equal((await whoami(h, cookie)).statusCode, 200, 'the session itself is untouched');

  // Signing out over two cookies ends each session they name, and clears the cookie.
  const other = await signedIn(h);
  const out = await h.app.inject({
    method: 'POST',
    url: '/auth/signout',
    headers: { host: HOST, origin: ORIGIN, 'sec-fetch-site': 'same-origin', cookie: `${cookie}; ${other}` },
  });
  t.equal(out.statusCode, 200);
  t.match(String(out.headers['set-cookie']), /wfx_session=;.*Max-Age=0/);
  t.equal((await whoami(h, cookie)).json().error, 'UNAUTHORIZED');
  t.equal((await whoami(h, other)).json().error, 'UNAUTHORIZED');
});

t.test('a signed-in key replaces the session the browser had', async (t) => {
  const h = await apiHarness(t);
  const before = await signedIn(h);
  const after = await signedIn(h);
  t.equal((await h.call(null, { method: 'GET', url: '/admin/sessions' })).statusCode, 401);
  const key = await h.key('admin', null);
  const listed = (await h.call(key, { method: 'GET', url: '/admin/sessions' })).json().items as unknown[];
  t.equal(listed.length, 2, 'two sessions, from two browsers');
  const replaced = await h.app.inject({
    method: 'POST',
    url: '/auth/session',
    headers: { host: HOST, origin: ORIGIN, 'sec-fetch-site': 'same-origin', cookie: before },
    payload: { apiKey: key.apiKey },
  });
  t.equal(replaced.statusCode, 200);
  t.equal((await whoami(h, before)).json().error, 'UNAUTHORIZED', 'the one it replaced ended');
  t.equal((await whoami(h, after)).statusCode, 200, "another browser's did not");
});
