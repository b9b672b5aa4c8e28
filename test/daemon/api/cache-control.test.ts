import '../../setup/fixtures.js'; // fixtures under the OS temp dir (see there)
import t, { type Test } from 'tap';
import type { LightMyRequestResponse } from 'fastify';
import { apiHarness } from '../../helpers/api.js';

/*
 * An answer made for a credential is never stored (`Cache-Control: no-store`): by a browser's
 * cache, where the next person at the machine could read it, or by a proxy. The console's
 * hashed assets, which need no credential, keep their cache for good even when the browser
 * sends its session cookie with them.
 */

const HOST = '127.0.0.1:7878';
const ORIGIN = `http://${HOST}`;
const IMMUTABLE = 'public, max-age=31536000, immutable';

function noStore(t: Test, res: LightMyRequestResponse, what: string) {
  t.equal(res.headers['cache-control'], 'no-store', `${what} (${res.statusCode})`);
}

t.test('every answer to a request with a credential says no-store, refusals included', async (t) => {
  const dir = t.testdir({ 'index.html': '<!doctype html>\n', assets: { 'main-ABC123.js': 'void 0;\n' } });
  const h = await apiHarness(t, { console: { dir } });
  const admin = await h.key('admin', null);
  const viewer = await h.key('viewer', 'acme');

  // An API key.
  noStore(t, await h.call(admin, { method: 'GET', url: '/auth/whoami' }), 'whoami, API key');
  noStore(t, await h.call(admin, { method: 'GET', url: '/admin/api-keys' }), 'a list');
  noStore(t, await h.call(viewer, { method: 'GET', url: '/admin/api-keys' }), 'forbidden');
  noStore(t, await h.call(viewer, { method: 'GET', url: '/process/instance/nope' }), 'not found');
  noStore(t, await h.call(admin, { method: 'POST', url: '/auth/links', headers: { host: HOST } }), 'a link made');
  noStore(
    t,
    await h.app.inject({ method: 'GET', url: '/auth/whoami', headers: { 'x-api-key': 'apk_nope_nope' } }),
    'a wrong key',
  );
  noStore(t, await h.app.inject({ method: 'GET', url: '/auth/whoami' }), 'no credential at all');
  // A bearer token (this daemon takes none: refused, and the refusal is not stored either).
  noStore(
    t,
    await h.app.inject({ method: 'GET', url: '/auth/whoami', headers: { authorization: 'Bearer eyJ.x.y' } }),
    'a bearer token',
  );

  // A session cookie, from signing in onwards.
  const signIn = await h.app.inject({
    method: 'POST',
    url: '/auth/session',
    headers: { host: HOST, origin: ORIGIN, 'sec-fetch-site': 'same-origin' },
    payload: { apiKey: viewer.apiKey },
  });
  noStore(t, signIn, 'signing in');
  const cookie = [signIn.headers['set-cookie']].flat()[0]!.split(';')[0]!;
  const fromConsole = (method: 'GET' | 'POST', url: string) =>
    h.app.inject({ method, url, headers: { host: HOST, origin: ORIGIN, cookie, 'sec-fetch-site': 'same-origin' } });
  noStore(t, await fromConsole('GET', '/auth/whoami'), 'whoami, session');
  noStore(t, await fromConsole('GET', '/process/instances'), 'executions, session');
  noStore(t, await fromConsole('POST', '/auth/signout'), 'signing out');
  noStore(
    t,
    await h.app.inject({ method: 'POST', url: '/auth/session', payload: { apiKey: 'apk_nope_nope' } }),
    'a refused sign-in',
  );

  // The console's own files need no credential: the assets keep their long cache, whatever is sent.
  for (const headers of [{}, { cookie }, { 'x-api-key': admin.apiKey }]) {
    const asset = await h.app.inject({ method: 'GET', url: '/assets/main-ABC123.js', headers });
    t.equal(asset.statusCode, 200);
    t.equal(asset.headers['cache-control'], IMMUTABLE, `an asset, with ${Object.keys(headers).join() || 'nothing'}`);
    t.equal((await h.app.inject({ method: 'GET', url: '/executions', headers })).headers['cache-control'], 'no-cache');
  }
});
