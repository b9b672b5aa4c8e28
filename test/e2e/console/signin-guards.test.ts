import '../../setup/fixtures.js'; // fixtures under the OS temp dir (see there)
import { once } from 'node:events';
import { readFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import type { Page } from 'playwright-core';
import { CHROMIUM_SKIP, collectConsoleErrors, launchBrowser, screenshot } from '../../helpers/browser.js';
import { callDaemon, startDaemon } from '../../helpers/cli.js';
import { signInWithKey } from '../../helpers/console-session.js';

/*
 * The console's sign-in against the two attacks of issue #81, in a real Chromium: a `returnTo`
 * that the browser turns into another host once a key is submitted (an open redirect), and a
 * page of another site that sends a signed-in browser to a one-time link of the attacker's key
 * (login CSRF). The "other hosts" are servers of the test on loopback: 127.0.0.1 on a port of
 * its own for the redirect's target, `localhost` (another site than 127.0.0.1) for the
 * attacker's page.
 */

/** A server on 127.0.0.1, port 0, answering every request with `html`; `hits` lists the paths asked. Closed at teardown. */
async function pageServer(t: Test, html: () => string): Promise<{ port: number; hits: string[] }> {
  const hits: string[] = [];
  const server = createServer((req, res) => {
    hits.push(req.url ?? '');
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(html());
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  t.teardown(() => {
    server.closeAllConnections();
    server.close();
  });
  return { port: (server.address() as AddressInfo).port, hits };
}

/** The session's identity as the console's own script reads it: status and body of GET /auth/whoami. */
function whoami(page: Page): Promise<{ status: number; body: Record<string, unknown> }> {
  return page.evaluate(async () => {
    const res = await fetch('/auth/whoami', { credentials: 'same-origin' });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  });
}

t.test("the console's sign-in against issue #81's attacks", { skip: CHROMIUM_SKIP }, async (t) => {
  // One daemon and one browser for both: each sign-in is in a browser context of its own, and
  // the second test signs in with keys of organizations of its own.
  const cwd = t.testdir({});
  const [{ url }, browser] = await Promise.all([startDaemon(t, { cwd }), launchBrowser(t)]);
  const origin = new URL(url).origin;
  const admin = (await readFile(join(cwd, '.wfx', 'bootstrap.key'), 'utf8')).trim();

  await t.test('signing in with a key never leaves the origin, whatever returnTo says', async (t) => {
    const evil = await pageServer(t, () => '<!doctype html><title>evil</title><h1>evil</h1>');
    const host = `127.0.0.1:${evil.port}`;

    /**
     * Signs in on /sign-in?returnTo=<value> in `page`, its cookies cleared first (a browser that
     * never signed in: the console keeps nothing else in the browser); where the browser ends up.
     */
    const landing = async (page: Page, value: string): Promise<URL> => {
      await page.context().clearCookies();
      const problems = collectConsoleErrors(page);
      const seen = problems.length;
      await page.goto(`${url}/sign-in?returnTo=${encodeURIComponent(value)}`);
      await signInWithKey(page, admin);
      await page.waitForURL((u) => u.origin !== origin || u.pathname !== '/sign-in');
      const at = new URL(page.url());
      if (problems.slice(seen).some((p) => p.kind === 'pageerror'))
        t.fail(`page error for ${JSON.stringify(value)}`, { problems: problems.slice(seen) });
      return at;
    };
    // Two pages sign in side by side, each in a context of its own, one value after another.
    const pages = await Promise.all([browser.newPage(), browser.newPage()]);

    const wanted = await landing(pages[0]!, '/executions?state=FAILED');
    t.equal(
      `${wanted.origin}${wanted.pathname}${wanted.search}`,
      `${origin}/executions?state=FAILED`,
      'a path of the console is followed',
    );

    const variants = [
      `/\t/${host}/tab`,
      `/\r/${host}/cr`,
      `/\n/${host}/lf`,
      `/\t\\${host}/tab-backslash`,
      `/\\${host}/backslash`,
      `/\\\\${host}/two-backslashes`,
      `\\\\${host}/leading-backslashes`,
      `/%5C${host}/encoded-backslash`,
      `/%2F${host}/encoded-slash`,
      `/%2f%2f${host}/encoded-slashes`,
      `/%09/${host}/encoded-tab`,
      `//${host}/protocol-relative`,
      `///${host}/three-slashes`,
      `http://${host}/absolute`,
      `HTTP:${host}/scheme-relative`,
      `javascript:location.assign('http://${host}/javascript')`,
      `  /\t/${host}/leading-spaces`,
    ];
    const landed: URL[] = [];
    let next = 0;
    await Promise.all(
      pages.map(async (page) => {
        for (let i = next++; i < variants.length; i = next++) landed[i] = await landing(page, variants[i]!);
      }),
    );
    variants.forEach((value, i) =>
      t.equal(
        landed[i]!.origin,
        origin,
        `stays on the console's origin: ${JSON.stringify(value)} (landed on ${landed[i]!.href})`,
      ),
    );
    t.same(evil.hits, [], 'the other host was never asked for anything');
    await Promise.all(pages.map((page) => page.context().close()));
  });

  await t.test('a one-time link opened from another site asks before it replaces the session', async (t) => {
    const api = (method: string, path: string, body?: object, key = admin) => callDaemon(url, key, method, path, body);
    const newKey = async (name: string, organization: string) => {
      const made = await api('POST', '/admin/api-keys', { name, organization, role: 'admin' });
      t.equal(made.status, 201, `key ${name}`);
      return { keyId: made.body.keyId as string, apiKey: made.body.apiKey as string };
    };
    const victim = await newKey('victim admin', 'acme');
    const attacker = await newKey('attacker key', 'evilcorp');
    const attackerLink = async () => {
      const made = await api('POST', '/auth/links', undefined, attacker.apiKey);
      t.equal(made.status, 200);
      return `${origin}${made.body.path as string}`;
    };
    let link = await attackerLink();
    // The attacker's page, on another site (localhost is not 127.0.0.1's site): it moves the
    // browser on to the link at once, no click needed.
    const site = await pageServer(
      t,
      () => `<!doctype html><meta http-equiv="refresh" content="0;url=${link}"><title>cats</title>`,
    );

    const context = await browser.newContext();
    const console_ = await context.newPage();
    await console_.goto(`${url}/sign-in`);
    await signInWithKey(console_, victim.apiKey);
    await console_.waitForURL(`${url}/executions`);
    t.equal((await whoami(console_)).body.organization, 'acme', 'the victim is signed in to acme');

    const lured = await context.newPage();
    const problems = collectConsoleErrors(lured);
    await lured.goto(`http://localhost:${site.port}/cats`);
    await lured.waitForURL((u) => u.origin === origin);
    await lured.waitForLoadState('load');
    t.same(
      (await whoami(console_)).body.organization,
      'acme',
      "the cross-site link did not replace the victim's session",
    );
    const main = lured.locator('main');
    t.match(await main.textContent(), /evilcorp/, "the page names the link's organization");
    t.match(await main.textContent(), /attacker key/, "and the link's key by name");
    t.match(await main.textContent(), new RegExp(attacker.keyId), 'and id');
    t.notMatch(await lured.content(), new RegExp(attacker.apiKey.split('_').slice(2).join('_')), 'never its secret');
    const button = lured.getByRole('button', { name: /sign in/i });
    if (!t.equal(await button.count(), 1, 'a button to go on')) return;
    await screenshot(lured, 'link-confirmation');

    await button.click();
    await lured.waitForURL(`${url}/executions`);
    t.equal((await whoami(console_)).body.organization, 'evilcorp', 'confirmed: now signed in with the link');
    t.same(
      problems.filter((p) => p.kind !== 'console' || !/status of 401/.test(p.text)),
      [],
      'no page error or CSP violation',
    );

    // The link was used by the confirmation: it is good once.
    await lured.goto(link);
    t.match(await lured.locator('h1').textContent(), /used already or has expired/i, 'used up by the confirmation');

    // Opened by the person themselves (typed, or from `wfx console`) in a browser without a
    // session, a link signs in at once, without the extra click.
    link = await attackerLink();
    const fresh = await browser.newPage();
    await fresh.goto(link);
    await fresh.waitForURL(`${url}/executions`);
    t.equal((await whoami(fresh)).body.organization, 'evilcorp', 'signed in at once');
  });
});
