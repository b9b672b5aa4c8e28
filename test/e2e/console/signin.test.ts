import '../../setup/fixtures.js'; // fixtures under the OS temp dir (see there)
import t from 'tap';
import type { Page } from 'playwright-core';
import { CHROMIUM_SKIP, collectConsoleErrors, crossSiteUrl, launchBrowser, screenshot } from '../../helpers/browser.js';
import { callDaemon, startDaemon } from '../../helpers/cli.js';
import { AUDIENCE, signInAtProvider, startIssuer } from '../../helpers/oidc-issuer.js';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';

/*
 * Signing in to the daemon's console through a real OIDC provider, in a real Chromium: the code
 * flow through /auth/callback, what the session may do, what a cross-site page may not, and
 * signing out at the provider too. (The console's pages are tested in console.test.ts.)
 */

const WAITING_FLOW = (id: string) =>
  `processId: ${id}\nname: Waits\nnodes:\n  s: { type: startEvent, next: w }\n` +
  `  w: { type: intermediateCatchEvent, eventType: message, messageRef: go, next: e }\n  e: { type: endEvent }\n`;
const FLOWS = { acme: '2a1e2f3a-4b5c-4d6e-8f70-8192a3b4c5d6', globex: '3a1e2f3a-4b5c-4d6e-8f70-8192a3b4c5d6' };

/** GET `path` from the page, as the console's own script would: status and JSON body. */
function fetchFromPage(
  page: Page,
  path: string,
  method = 'GET',
): Promise<{ status: number; body: Record<string, unknown> }> {
  return page.evaluate(
    async ([p, m]) => {
      const res = await fetch(p!, { method: m, credentials: 'same-origin' });
      return { status: res.status, body: (await res.json()) as Record<string, unknown> };
    },
    [path, method],
  );
}

t.test(
  'OIDC sign-in through /auth/callback, in Chromium, against a real provider',
  { skip: CHROMIUM_SKIP },
  async (t) => {
    const idp = await startIssuer(t);
    const cwd = t.testdir({});
    const { url } = await startDaemon(t, {
      cwd,
      args: ['--oidc-issuer', idp.issuer, '--oidc-audience', AUDIENCE, '--oidc-client-id', 'wfx-console'],
    });
    await idp.addBrowserClient({
      clientId: 'wfx-console',
      redirectUri: `${url}/auth/callback`,
      postLogoutRedirectUri: `${url}/sign-in`,
    });
    const admin = (await readFile(join(cwd, '.wfx', 'bootstrap.key'), 'utf8')).trim();
    const runs: Record<string, string> = {};
    for (const org of ['acme', 'globex'] as const) {
      const published = await callDaemon(url, admin, 'POST', '/admin/flows', {
        source: WAITING_FLOW(FLOWS[org]),
        organization: org,
      });
      t.equal(published.status, 200, `published for ${org}`);
      const started = await callDaemon(url, admin, 'POST', '/process/start', { processId: FLOWS[org] });
      t.equal(started.status, 200);
      runs[org] = started.body.processInstanceId as string;
    }
    t.same((await callDaemon(url, admin, 'GET', '/auth/config')).body, { oidc: true, apiKey: true, link: true });

    const browser = await launchBrowser(t);
    const context = await browser.newContext();
    const page = await context.newPage();
    const problems = collectConsoleErrors(page);
    await page.goto(`${url}/auth/login?returnTo=${encodeURIComponent('/auth/whoami')}`);
    await signInAtProvider(page, 'alice@acme');
    await page.waitForURL(`${url}/auth/whoami`);
    const me = JSON.parse((await page.locator('body').textContent())!) as Record<string, unknown>;
    t.match(
      me,
      { subject: 'alice@acme', organization: 'acme', system: false },
      "the provider's account, in its organization",
    );
    t.same([...(me.permissions as string[])].sort(), ['WORKFLOW_EXECUTE', 'WORKFLOW_READ'], 'an operator');
    await screenshot(page, 'oidc-signed-in');

    const cookies = await context.cookies(url);
    const session = cookies.find((c) => c.name === 'wfx_session');
    t.match(session, { httpOnly: true, sameSite: 'Strict' }, 'an HttpOnly, SameSite=Strict cookie');
    t.notOk(
      cookies.some((c) => c.name === 'wfx_login'),
      "the sign-in's binding cookie is gone",
    );
    // Evaluated in the page (the test's own lib has no DOM types).
    const stored = await page.evaluate('[localStorage.length, sessionStorage.length, document.cookie]');
    t.same(stored, [0, 0, ''], 'nothing in web storage, no cookie a script can read');
    t.notMatch(page.url(), /code=|token|state=/, 'no code or token left in the address');

    // Exactly what alice may do over the API: her organization's execution, not another's.
    t.equal((await fetchFromPage(page, `/process/instance/${runs.acme}`)).status, 200);
    t.match((await fetchFromPage(page, `/process/instance/${runs.globex}`)).body, { error: 'INSTANCE_NOT_FOUND' });
    t.match((await fetchFromPage(page, '/admin/api-keys')).body, { error: 'FORBIDDEN' }, 'no admin rights');

    // A page of another site: a form posting to the daemon carries no session, so nothing happens.
    const other = await context.newPage();
    await other.goto(`${crossSiteUrl(url)}/sign-in-does-not-matter`).catch(() => undefined);
    await other.setContent(
      `<form method="post" action="${url}/process/instance/${runs.acme}/cancel"><button>go</button></form>`,
    );
    const answered = other.waitForNavigation();
    await other.getByRole('button', { name: 'go' }).click();
    await answered;
    t.match(
      JSON.parse((await other.locator('body').textContent())!),
      { error: 'UNAUTHORIZED' },
      'the cookie stayed home',
    );
    const still = await callDaemon(url, admin, 'GET', `/process/instance/${runs.acme}`);
    t.equal(still.body.state, 'RUNNING', 'the execution was not cancelled');

    // Signing out ends the session here and at the provider.
    const out = await fetchFromPage(page, '/auth/signout', 'POST');
    t.equal(out.status, 200);
    t.match(out.body.endSessionUrl, new RegExp(`^${idp.issuer}/`), "the provider's end-session endpoint");
    await page.goto(out.body.endSessionUrl as string);
    await page.waitForURL((u) => u.href.startsWith(`${url}/sign-in`));
    t.equal((await fetchFromPage(page, '/auth/whoami')).status, 401, 'signed out');

    // Signing in again from the console's own sign-in page, as someone else: the provider asks
    // for the password (its session ended too), and the console comes back where it was asked for.
    await page.goto(`${url}/executions`);
    await page.waitForURL((u) => u.pathname === '/sign-in');
    await page.getByRole('link', { name: 'Sign in with your identity provider' }).click();
    await page.getByLabel('Password').waitFor();
    t.pass('signing in again asks for the password: the provider session ended too');
    await signInAtProvider(page, 'bob@globex');
    await page.waitForURL(`${url}/executions`);
    await page.locator(`tr[data-row][aria-label*="${runs.globex}"]`).waitFor();
    t.equal(
      await page.locator(`tr[data-row][aria-label*="${runs.acme}"]`).count(),
      0,
      "bob sees globex's run, not acme's",
    );
    await screenshot(page, 'oidc-console-list');
    t.same(
      problems.filter((p) => !(p.kind === 'console' && /status of (401|403|404)/.test(p.text))),
      [],
      'no page error, CSP violation or stray request (the refusals asked for above aside)',
    );
  },
);
