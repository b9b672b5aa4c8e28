import '../../setup/fixtures.js'; // fixtures under the OS temp dir (see there)
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createRemoteJWKSet, jwtVerify } from 'jose';
import * as oidc from 'openid-client';
import t, { type Test } from 'tap';
import {
  axeCheck,
  CHROMIUM_SKIP,
  collectConsoleErrors,
  crossSiteUrl,
  groupMembers,
  launchBrowser,
  processesUsing,
  screenshot,
} from '../../helpers/browser.js';
import { eventually } from '../../helpers/eventually.js';
import { AUDIENCE, signInAtProvider, startIssuer, type TestIssuer } from '../../helpers/oidc-issuer.js';

/*
 * The harness the console's end-to-end tests run on, proven on its own: a real Chromium, a real
 * OIDC provider, and a small relying party here doing what the daemon's sign-in will do
 * (authorization code with PKCE, state and nonce through openid-client; refresh; RP-initiated
 * logout), under the console's Content-Security-Policy.
 */

/** The console's policy: nothing inline, nothing from elsewhere, no framing. */
const CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
  "font-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

/** The relying party's script: sign-out as the console does it (POST, then to the provider), and a live list. */
const APP_JS = `
document.getElementById('signout')?.addEventListener('click', async () => {
  const res = await fetch('/logout', { method: 'POST', credentials: 'same-origin' });
  const { endSessionUrl } = await res.json();
  location.assign(endSessionUrl);
});
const list = document.getElementById('events');
if (list) {
  const source = new EventSource('/events');
  source.onmessage = (e) => list.append(Object.assign(document.createElement('li'), { textContent: e.data }));
  source.addEventListener('end', () => { source.close(); list.dataset.done = 'true'; });
}
`;

interface RelyingParty {
  readonly url: string;
  readonly config: oidc.Configuration;
  /** The tokens of the last sign-in or refresh. */
  tokens(): oidc.TokenEndpointResponse | null;
  /** Sends the open `/events` stream its last event and `end`. */
  endEvents(): void;
}

function send(res: ServerResponse, status: number, type: string, body: string, headers: Record<string, string> = {}) {
  res.writeHead(status, { 'content-type': type, 'cache-control': 'no-store', ...headers }).end(body);
}

function page(
  res: ServerResponse,
  title: string,
  body: string,
  options: { csp?: boolean; headers?: Record<string, string> } = {},
) {
  send(
    res,
    200,
    'text/html; charset=utf-8',
    `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${title}</title>` +
      `<link rel="stylesheet" href="/app.css"><script type="module" src="/app.js"></script></head>` +
      `<body><main>${body}</main></body></html>`,
    { ...(options.csp !== false && { 'content-security-policy': CSP }), ...options.headers },
  );
}

function cookie(req: IncomingMessage, name: string): string | undefined {
  return new RegExp(`(?:^|; )${name}=([^;]+)`).exec(req.headers.cookie ?? '')?.[1];
}

/**
 * A relying party on 127.0.0.1 for client `clientId` (public, or confidential with `secret`),
 * registered at `idp` with its callback and post-logout addresses.
 */
async function startRelyingParty(
  t: Test,
  idp: TestIssuer,
  client: { clientId: string; secret?: string },
): Promise<RelyingParty> {
  const flows = new Map<string, { verifier: string; state: string; nonce: string }>();
  const sessions = new Map<string, oidc.TokenEndpointResponse>();
  let last: oidc.TokenEndpointResponse | null = null;
  let stream: ServerResponse | null = null;
  const config = await oidc.discovery(
    new URL(idp.issuer),
    client.clientId,
    undefined,
    client.secret === undefined ? oidc.None() : oidc.ClientSecretBasic(client.secret),
    { execute: [oidc.allowInsecureRequests] }, // the test provider is plain HTTP on loopback
  );
  let url = '';
  const jwks = createRemoteJWKSet(new URL(`${idp.issuer}/jwks`));
  const routes: Record<string, (req: IncomingMessage, res: ServerResponse) => Promise<void> | void> = {
    'GET /login': async (_req, res) => {
      const flow = { verifier: oidc.randomPKCECodeVerifier(), state: oidc.randomState(), nonce: oidc.randomNonce() };
      const id = randomBytes(16).toString('hex');
      flows.set(id, flow);
      const to = oidc.buildAuthorizationUrl(config, {
        redirect_uri: `${url}/auth/callback`,
        scope: 'openid profile',
        code_challenge: await oidc.calculatePKCECodeChallenge(flow.verifier),
        code_challenge_method: 'S256',
        state: flow.state,
        nonce: flow.nonce,
      });
      send(res, 302, 'text/plain', '', {
        location: to.href,
        'set-cookie': `rp_flow=${id}; Path=/; HttpOnly; SameSite=Lax`,
      });
    },
    'GET /auth/callback': async (req, res) => {
      const flow = flows.get(cookie(req, 'rp_flow') ?? '');
      if (!flow) return send(res, 400, 'text/plain', 'no sign-in in progress');
      const tokens = await oidc.authorizationCodeGrant(config, new URL(req.url!, url), {
        pkceCodeVerifier: flow.verifier,
        expectedState: flow.state,
        expectedNonce: flow.nonce,
        idTokenExpected: true,
      });
      const sid = randomBytes(16).toString('hex');
      sessions.set(sid, (last = tokens));
      send(res, 303, 'text/plain', '', {
        location: '/me',
        'set-cookie': `rp_session=${sid}; Path=/; HttpOnly; SameSite=Strict`,
      });
    },
    'GET /me': async (req, res) => {
      const tokens = sessions.get(cookie(req, 'rp_session') ?? '');
      if (!tokens) return send(res, 401, 'text/plain', 'not signed in');
      const { payload } = await jwtVerify(tokens.access_token, jwks, { issuer: idp.issuer, audience: AUDIENCE });
      const row = (name: string, value: unknown) => `<dt>${name}</dt><dd id="${name}">${String(value)}</dd>`;
      page(
        res,
        'Signed in',
        `<h1>Signed in</h1><dl>${['sub', 'org_id', 'roles', 'aud', 'client_id', 'jti'].map((k) => row(k, payload[k])).join('')}` +
          `${row('lifetime', payload.exp! - payload.iat!)}</dl>` +
          `<form method="post" action="/refresh"><button type="submit">Refresh the token</button></form>` +
          `<button type="button" id="signout">Sign out</button>`,
      );
    },
    'POST /refresh': async (req, res) => {
      const sid = cookie(req, 'rp_session') ?? '';
      const tokens = sessions.get(sid);
      if (!tokens?.refresh_token) return send(res, 401, 'text/plain', 'not signed in');
      sessions.set(sid, (last = await oidc.refreshTokenGrant(config, tokens.refresh_token)));
      send(res, 303, 'text/plain', '', { location: '/me' });
    },
    'POST /logout': (req, res) => {
      const sid = cookie(req, 'rp_session') ?? '';
      const tokens = sessions.get(sid);
      sessions.delete(sid);
      const to = oidc.buildEndSessionUrl(config, {
        ...(tokens?.id_token && { id_token_hint: tokens.id_token }),
        post_logout_redirect_uri: `${url}/signed-out`,
      });
      send(res, 200, 'application/json', JSON.stringify({ endSessionUrl: to.href }));
    },
    'GET /signed-out': (_req, res) => page(res, 'Signed out', '<h1>Signed out</h1>'),
    'GET /app.js': (_req, res) => send(res, 200, 'text/javascript', APP_JS),
    'GET /app.css': (_req, res) => send(res, 200, 'text/css', 'main { font-family: sans-serif; max-width: 40rem; }'),
    'GET /plain': (_req, res) =>
      page(
        res,
        'A plain page',
        '<h1>A plain page</h1><p>Text.</p><form><label for="q">Search</label> <input id="q" name="q"> <button type="submit">Go</button></form>',
      ),
    'GET /inaccessible': (_req, res) =>
      page(res, 'Inaccessible', '<h1>Inaccessible</h1><img src="/app.css"><button type="button"></button>'),
    'GET /inline': (_req, res) =>
      send(
        res,
        200,
        'text/html',
        `<!doctype html><html lang="en"><head><title>Inline</title><script>document.title = 'ran';</script></head><body><main><h1 style="color: red">Inline</h1></main></body></html>`,
        { 'content-security-policy': CSP },
      ),
    'GET /stray': (_req, res) =>
      page(res, 'Stray', '<h1>Stray</h1><img alt="" src="http://stray.invalid/pixel.png">', { csp: false }),
    'GET /live': (_req, res) => page(res, 'Live', '<h1>Live</h1><ul id="events"></ul>'),
    'GET /events': (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-store' });
      res.write('id: 1\ndata: one\n\n');
      stream = res; // the rest when the test says (`endEvents`)
    },
    'GET /cookie': (req, res) =>
      send(res, 200, 'application/json', JSON.stringify({ session: cookie(req, 'rp_session') !== undefined })),
    'GET /elsewhere': (req, res) =>
      page(
        res,
        'Elsewhere',
        `<h1>Elsewhere</h1><a href="${new URL(req.url!, url).searchParams.get('to')}">Go back</a>`,
      ),
  };
  const server = createServer((req, res) => {
    const route = routes[`${req.method} ${new URL(req.url ?? '/', 'http://x').pathname}`];
    if (!route) return send(res, 404, 'text/plain', 'not found');
    Promise.resolve(route(req, res)).catch((err: unknown) => send(res, 500, 'text/plain', String(err)));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => {
    server.close();
    server.closeAllConnections(); // the browser's kept-alive and preconnected sockets too
  });
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  await idp.addBrowserClient({
    clientId: client.clientId,
    redirectUri: `${url}/auth/callback`,
    postLogoutRedirectUri: `${url}/signed-out`,
    ...(client.secret !== undefined && { secret: client.secret }),
  });
  return {
    url,
    config,
    tokens: () => last,
    endEvents: () => stream?.end('id: 2\ndata: two\n\nevent: end\ndata: \n\n'),
  };
}

t.test('the browser harness: Chromium, a real OIDC provider, the console CSP', { skip: CHROMIUM_SKIP }, async (t) => {
  const idp = await startIssuer(t);
  const browser = await launchBrowser(t);

  await t.test('sign-in (public client, PKCE, state, nonce), refresh, RP-initiated logout', async (t) => {
    const rp = await startRelyingParty(t, idp, { clientId: 'console-public' });
    const page = await browser.newPage();
    const problems = collectConsoleErrors(page);
    await page.goto(`${rp.url}/login`);
    await signInAtProvider(page, 'alice@acme');
    t.equal(new URL(page.url()).pathname, '/me', 'back at the application, signed in');
    const text = (id: string) => page.locator(`#${id}`).textContent();
    t.equal(await text('sub'), 'alice@acme');
    t.equal(await text('org_id'), 'acme', "the account's organization, in the access token");
    t.equal(await text('roles'), 'operator');
    t.equal(await text('aud'), AUDIENCE, "a JWT for the daemon's audience");
    t.equal(await text('client_id'), 'console-public');
    t.equal(await text('lifetime'), '300', 'the default lifetime');
    await screenshot(page, 'harness-signed-in');

    const before = await text('jti');
    const firstRefresh = rp.tokens()?.refresh_token;
    t.ok(firstRefresh, 'a refresh token was issued');
    const reloaded = page.waitForEvent('load');
    await page.getByRole('button', { name: 'Refresh the token' }).click();
    await reloaded;
    t.not(await text('jti'), before, 'a new access token');
    t.equal(await text('org_id'), 'acme', 'with the same claims');
    const refreshToken = rp.tokens()!.refresh_token!;
    t.not(refreshToken, firstRefresh, "a public client's refresh token is rotated at each use");

    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.waitForURL(`${rp.url}/signed-out`);
    t.pass('the provider sent the browser back to the post-logout address');
    const refused = await oidc.refreshTokenGrant(rp.config, refreshToken).catch((err: unknown) => err);
    t.match(refused, { error: 'invalid_grant' }, 'the refresh token ended with the session');
    await page.goto(`${rp.url}/login`);
    await page.getByLabel('Password').waitFor();
    t.pass('signing in again asks for the password: the provider session ended');
    t.same(problems, [], 'no console error, page error, CSP violation or stray request');
  });

  await t.test('a confidential client, short-lived tokens; a wrong password is refused', async (t) => {
    const shortLived = await startIssuer(t, { accessTokenTTL: 5 });
    const rp = await startRelyingParty(t, shortLived, { clientId: 'console-confidential', secret: 'rp-secret' });
    const page = await browser.newPage();
    const problems = collectConsoleErrors(page);
    await page.goto(`${rp.url}/login`);
    await t.rejects(signInAtProvider(page, 'bob@globex', 'wrong'), /refused bob@globex/);
    await screenshot(page, 'harness-provider-refused');
    await signInAtProvider(page, 'bob@globex');
    t.equal(await page.locator('#org_id').textContent(), 'globex');
    t.equal(await page.locator('#client_id').textContent(), 'console-confidential');
    t.equal(await page.locator('#lifetime').textContent(), '5', 'the lifetime the issuer was given');
    t.same(problems, []);
  });

  await t.test('axe-core under the CSP: none on a plain page, the violations of a bad one', async (t) => {
    const rp = await startRelyingParty(t, idp, { clientId: 'axe' });
    const page = await browser.newPage();
    const problems = collectConsoleErrors(page);
    await page.goto(`${rp.url}/plain`);
    t.same(await axeCheck(page), [], 'no serious or critical violation');
    await page.goto(`${rp.url}/inaccessible`);
    const found = await axeCheck(page);
    t.same(found.map((v) => v.id).sort(), ['button-name', 'image-alt']);
    t.same(found.find((v) => v.id === 'image-alt')?.targets, ['img']);
    t.same(problems, [], 'injecting axe violates no CSP');
  });

  await t.test('the collector catches CSP violations, page errors and requests off loopback', async (t) => {
    const rp = await startRelyingParty(t, idp, { clientId: 'collector' });
    const page = await browser.newPage();
    const problems = collectConsoleErrors(page);
    await page.goto(`${rp.url}/inline`);
    t.equal(await page.title(), 'Inline', 'the inline script did not run');
    const csp = () => problems.filter((p) => p.kind === 'csp').map((p) => p.text);
    t.match(csp(), [/^script-src-elem blocked inline/, /^style-src-attr blocked inline/]);

    const elsewhere = collectConsoleErrors(await browser.newPage());
    await page.goto(`${rp.url}/plain`);
    const thrown = page.waitForEvent('pageerror');
    await page.evaluate('setTimeout(() => { throw new Error("deliberate") })');
    await thrown;
    t.match(problems.at(-1), { kind: 'pageerror', text: /deliberate/ }, 'an uncaught exception');
    t.same(elsewhere, [], "another page's problems are its own");

    await page.goto(`${rp.url}/stray`);
    t.match(
      problems.filter((p) => p.kind === 'request'),
      [{ text: /^GET http:\/\/stray\.invalid\/pixel\.png \(aborted/ }],
      'a request off loopback is aborted and reported',
    );
  });

  await t.test('server-sent events stream through the loopback guard, under the CSP', async (t) => {
    const rp = await startRelyingParty(t, idp, { clientId: 'sse' });
    const page = await browser.newPage();
    const problems = collectConsoleErrors(page);
    await page.goto(`${rp.url}/live`);
    await page.getByText('one').waitFor();
    t.pass('the first event shows while its response is still open');
    rp.endEvents();
    await page.locator('#events[data-done="true"]').waitFor();
    t.same(await page.locator('#events li').allTextContents(), ['one', 'two']);
    t.same(problems, []);
  });

  await t.test('localhost is another site: a SameSite=Strict cookie stays home', async (t) => {
    const rp = await startRelyingParty(t, idp, { clientId: 'cross-site' });
    const page = await browser.newPage();
    await page.goto(`${rp.url}/login`);
    await signInAtProvider(page, 'alice@acme');
    await page.goto(`${rp.url}/cookie`);
    t.same(
      JSON.parse((await page.locator('body').textContent())!),
      { session: true },
      'sent on a same-site navigation',
    );
    await page.goto(`${crossSiteUrl(rp.url)}/elsewhere?to=${encodeURIComponent(`${rp.url}/cookie`)}`);
    await page.getByRole('link', { name: 'Go back' }).click();
    await page.waitForURL(`${rp.url}/cookie`);
    t.same(JSON.parse((await page.locator('body').textContent())!), { session: false }, 'not on a cross-site one');
  });
});

t.test('the browser closes with its test and leaves no process', { skip: CHROMIUM_SKIP }, async (t) => {
  let pid = 0;
  let dir = '';
  await t.test('a test with a browser', async (t) => {
    const browser = await launchBrowser(t);
    ({ pid, dir } = browser);
    await (await browser.newPage()).goto('about:blank');
    t.ok(groupMembers(pid).length > 1, 'the browser runs, with its helper processes');
    t.ok(processesUsing(dir).length > groupMembers(pid).length, 'and its crash handler, in a group of its own');
  });
  t.same(groupMembers(pid), [], 'none of its processes is left');
  // The crash handler leaves by itself once the browser is gone, a moment later.
  await eventually('the crash handler is gone', () => processesUsing(dir).length === 0);
  t.pass('nothing that used its directory runs');
});
