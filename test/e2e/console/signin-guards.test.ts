import '../../setup/fixtures.js'; // fixtures under the OS temp dir (see there)
import { once } from 'node:events';
import { readFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { CHROMIUM_SKIP, collectConsoleErrors, launchBrowser } from '../../helpers/browser.js';
import { startDaemon } from '../../helpers/cli.js';
import { signInWithKey } from '../../helpers/console-session.js';

/*
 * The console's sign-in against an attack of issue #81, in a real Chromium: a `returnTo` that
 * the browser turns into another host once a key is submitted (an open redirect). The "other
 * host" is a server of the test on loopback, 127.0.0.1 on a port of its own.
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

t.test('signing in with a key never leaves the origin, whatever returnTo says', { skip: CHROMIUM_SKIP }, async (t) => {
  const cwd = t.testdir({});
  const { url } = await startDaemon(t, { cwd });
  const origin = new URL(url).origin;
  const admin = (await readFile(join(cwd, '.wfx', 'bootstrap.key'), 'utf8')).trim();
  const evil = await pageServer(t, () => '<!doctype html><title>evil</title><h1>evil</h1>');
  const host = `127.0.0.1:${evil.port}`;
  const browser = await launchBrowser(t);

  /** Signs in on /sign-in?returnTo=<value> in a fresh browser context; where the browser ends up. */
  const landing = async (value: string): Promise<URL> => {
    const context = await browser.newContext();
    const page = await context.newPage();
    const problems = collectConsoleErrors(page);
    await page.goto(`${url}/sign-in?returnTo=${encodeURIComponent(value)}`);
    await signInWithKey(page, admin);
    await page.waitForURL((u) => u.origin !== origin || u.pathname !== '/sign-in');
    const at = new URL(page.url());
    if (problems.some((p) => p.kind === 'pageerror')) t.fail(`page error for ${JSON.stringify(value)}`, { problems });
    await context.close();
    return at;
  };

  const wanted = await landing('/executions?state=FAILED');
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
  for (const value of variants) {
    const at = await landing(value);
    t.equal(at.origin, origin, `stays on the console's origin: ${JSON.stringify(value)} (landed on ${at.href})`);
  }
  t.same(evil.hits, [], 'the other host was never asked for anything');
});
