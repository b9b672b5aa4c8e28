import '../../setup/fixtures.js'; // fixtures under the OS temp dir (see there)
import { readFile, writeFile, chmod } from 'node:fs/promises';
import { join } from 'node:path';
import t from 'tap';
import { eventually } from '../../helpers/eventually.js';
import { startDaemon, wfxIn } from '../../helpers/cli.js';

/**
 * Opens `link` as a browser would when the CLI hands it over (a navigation the person started:
 * `Sec-Fetch-Site: none`), the first time: the answer's status and session cookie.
 */
async function open(link: string): Promise<{ status: number; cookie: string | null }> {
  const res = await fetch(link, {
    redirect: 'manual',
    headers: { 'sec-fetch-site': 'none' },
    signal: AbortSignal.timeout(10_000),
  });
  const cookie = res.headers.getSetCookie().find((c) => c.startsWith('wfx_session=')) ?? null;
  return { status: res.status, cookie: cookie?.split(';')[0] ?? null };
}

t.test('wfx console gives a one-time sign-in link of the local daemon', async (t) => {
  const cwd = t.testdir({});
  const { url } = await startDaemon(t, { cwd });

  const printed = await wfxIn(['console', '--no-open'], { cwd });
  t.equal(printed.code, 0, printed.stderr);
  const link = printed.stdout.trim();
  t.match(link, new RegExp(`^${url}/auth/link\\?token=[A-Za-z0-9_-]{43}$`));
  const first = await open(link);
  t.equal(first.status, 303);
  t.ok(first.cookie, 'signed in');
  const me = await fetch(`${url}/auth/whoami`, { headers: { cookie: first.cookie! } });
  t.equal(me.status, 200);
  t.equal(((await me.json()) as { organization: string | null }).organization, null, "the bootstrap key's identity");
  t.equal((await open(link)).status, 401, 'good once');

  const json = await wfxIn(['console', '--json'], { cwd });
  t.equal(json.code, 0);
  t.match(JSON.parse(json.stdout), { url: new RegExp(`^${url}/auth/link\\?token=`) });
});

t.test('wfx console opens $BROWSER on the link', async (t) => {
  const cwd = t.testdir({});
  await startDaemon(t, { cwd });
  const seen = join(cwd, 'opened.txt');
  const browser = join(cwd, 'browser.sh');
  await writeFile(browser, `#!/bin/sh\nprintf '%s' "$1" > '${seen}'\n`);
  await chmod(browser, 0o755);
  const res = await wfxIn(['console'], { cwd, env: { BROWSER: browser } });
  t.equal(res.code, 0, res.stderr);
  t.match(res.stdout, /opened the console/);
  t.notMatch(res.stdout, /token=/, 'the link is not printed when a browser took it');
  const link = await eventually('the browser script ran', () => readFile(seen, 'utf8'));
  t.equal((await open(link)).status, 303);

  const none = await wfxIn(['console'], { cwd, env: { BROWSER: join(cwd, 'no-such-browser') } });
  t.equal(none.code, 0);
  t.match(none.stdout, /could not open a browser \(\S+no-such-browser: not found\)/);
  t.match(none.stdout, /auth\/link\?token=/);
});

t.test('wfx console prints the link when no browser opens: a failing opener, no display', async (t) => {
  const cwd = t.testdir({});
  const { url } = await startDaemon(t, { cwd });
  const link = new RegExp(`\n${url}/auth/link\\?token=[A-Za-z0-9_-]{43}\n$`);

  const failing = await wfxIn(['console'], { cwd, env: { BROWSER: '/bin/false' } });
  t.equal(failing.code, 0, failing.stderr);
  t.match(failing.stdout, /^could not open a browser \(\/bin\/false exited with 1\); open this link/);
  t.notMatch(failing.stdout, /opened the console/, 'it does not say it opened one');
  t.match(failing.stdout, link, 'the link, to open by hand');
  t.equal((await open(failing.stdout.trim().split('\n').at(-1)!)).status, 303, 'and it signs in');

  const headless = await wfxIn(['console'], { cwd, env: { BROWSER: '', DISPLAY: '', WAYLAND_DISPLAY: '' } });
  t.equal(headless.code, 0, headless.stderr);
  t.match(headless.stdout, /^could not open a browser \(no display: DISPLAY and WAYLAND_DISPLAY are unset\)/);
  t.match(headless.stdout, link);
});
