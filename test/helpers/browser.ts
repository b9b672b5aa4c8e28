/**
 * A real headless Chromium for the console's end-to-end tests: Debian's `chromium` package
 * (.ci/run installs it) driven by playwright-core through its `executablePath`; playwright never
 * downloads a browser here. One browser per `launchBrowser(t)`, with a profile, a home and a temp
 * dir of its own beside the test's fixture, closed before tap removes that fixture and killed
 * with its whole process group if closing fails; noted for the sweep after the suite
 * (test/setup/daemons.ts) in case the test process is killed outright.
 *
 * Every context `newContext` makes reaches loopback only: a request to any other host is
 * aborted and reported among the page's problems (`collectConsoleErrors`), and the browser's
 * own resolver maps every other host name to nothing, so neither a page nor Chromium's
 * background services can send a packet or a DNS query off the machine.
 */
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { chromium, type Browser, type BrowserContext, type BrowserContextOptions, type Page } from 'playwright-core';
import type { Test } from 'tap';
import { forgetDaemon, noteDaemon } from '../setup/daemons.js';
import { beforeFixtureRemoval } from './cli.js';

/** The browser the tests run: Debian's, or `WFX_CHROMIUM` (another Chromium build). */
export const CHROMIUM = process.env.WFX_CHROMIUM ?? '/usr/bin/chromium';

/** Whether the browser is installed here; under CI=true its absence fails the test instead. */
export const HAVE_CHROMIUM = existsSync(CHROMIUM);

/**
 * A test's `skip` option: a message on a machine without Chromium, never under CI=true (there
 * `.ci/run` installs it, and launchBrowser throws if it is missing).
 */
export const CHROMIUM_SKIP: string | false =
  !HAVE_CHROMIUM && process.env.CI !== 'true' && `Chromium is not installed at ${CHROMIUM} (apt-get install chromium)`;

/** Hosts a page may reach: the loopback servers of the test. `localhost` is a second site. */
const LOOPBACK_HOSTS = new Set(['127.0.0.1', 'localhost']);

/**
 * Chromium's switches besides playwright's own (which already turn off background networking,
 * component updates, extensions, first-run and default-browser checks, crash reports).
 */
export const CHROMIUM_ARGS = [
  // playwright adds --no-sandbox itself (CI runs as root; the tests load only pages of their own)
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
  '--disable-quic',
  '--disable-domain-reliability',
  '--no-pings',
  // Sign-in and device check-in requests still start with the switches above (Debian's build
  // carries Google API keys): every host name but loopback resolves to nothing, inside the
  // browser, so not even a DNS query leaves.
  '--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1 , EXCLUDE localhost',
  '--lang=en-US',
];

/** What a page did wrong: `collectConsoleErrors` lists them; a test asserts there are none. */
export interface PageProblem {
  /**
   * `pageerror` an uncaught exception, `console` a console.error (or a resource that failed to
   * load), `csp` a Content-Security-Policy violation, `request` a request to a non-loopback host
   * (aborted).
   */
  readonly kind: 'pageerror' | 'console' | 'csp' | 'request';
  readonly text: string;
}

/** A Chromium started for one test. */
export interface TestBrowser {
  readonly browser: Browser;
  /** The browser process (the leader of its process group). */
  readonly pid: number;
  /** Where its profile, home and `screenshots/` are. */
  readonly dir: string;
  /**
   * A new isolated context (cookies and storage of its own: one per signed-in user), locale
   * en-US, time zone UTC, 1280x800, loopback only, every page watched from its first request
   * (`collectConsoleErrors`). `options` override those defaults.
   */
  newContext(options?: BrowserContextOptions): Promise<BrowserContext>;
  /** A page in a new context of its own. */
  newPage(options?: BrowserContextOptions): Promise<Page>;
  /** Closes the browser (teardown does it too); kills its process group if it will not close. */
  close(): Promise<void>;
}

const problemsOf = new WeakMap<Page, PageProblem[]>();
const screenshotsOf = new WeakMap<BrowserContext, string>();
/**
 * The browsers still running (process group -> temp dir): killed, and the dir removed, if this
 * process exits first.
 */
const running = new Map<number, string>();
process.once('exit', () => {
  for (const [pid, tmp] of running) {
    killGroup(pid);
    rmSync(tmp, { recursive: true, force: true });
  }
});

function killGroup(pid: number): void {
  try {
    process.kill(-pid, 'SIGKILL');
  } catch {
    // gone already
  }
}

/**
 * The live processes of process group `pgid` (zombies, already dead, left out). Linux reads
 * /proc; elsewhere `[pgid]` while any member can be signalled.
 */
export function groupMembers(pgid: number): number[] {
  if (process.platform !== 'linux') {
    try {
      process.kill(-pgid, 0);
      return [pgid];
    } catch {
      return [];
    }
  }
  const members: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      // Fields after the command name (which may hold spaces): state, ppid, pgrp, ...
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const [state, , pgrp] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (Number(pgrp) === pgid && state !== 'Z') members.push(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return members;
}

/**
 * The live processes whose command line mentions `path` (a TestBrowser's `dir`): the browser's
 * process group and its crash handler, which runs in a group of its own. Linux only (else []).
 */
export function processesUsing(path: string): number[] {
  if (process.platform !== 'linux') return [];
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      if (stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z')) continue;
      if (readFileSync(`/proc/${entry}/cmdline`, 'utf8').includes(path)) found.push(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return found;
}

/**
 * Starts Chromium for test `t` (skip the test with CHROMIUM_SKIP where it is missing). Closed
 * when `t` ends, before tap removes the test's fixture, and at teardown, whichever comes first.
 */
export async function launchBrowser(t: Test): Promise<TestBrowser> {
  if (!HAVE_CHROMIUM)
    throw new Error(`Chromium is not installed at ${CHROMIUM}; .ci/run installs the chromium package`);
  mkdirSync(dirname(t.testdirName), { recursive: true });
  const dir = mkdtempSync(`${t.testdirName}-browser-`);
  const home = join(dir, 'home');
  // Beside it, named short: Chromium's singleton socket goes there, and a socket's path has at
  // most 107 bytes (a test's name can be longer alone).
  const tmp = mkdtempSync(join(dirname(t.testdirName), 'chromium-'));
  for (const d of [home, join(dir, 'screenshots')]) mkdirSync(d, { recursive: true });
  // A persistent context is how playwright takes a profile directory of ours (`--user-data-dir`
  // is its own); its browser makes the isolated contexts the tests use.
  const persistent = await chromium
    .launchPersistentContext(join(dir, 'profile'), {
      executablePath: CHROMIUM,
      headless: true,
      args: CHROMIUM_ARGS,
      timeout: 30_000,
      // Chromium writes its NSS database under $HOME and shared memory under $TMPDIR: the
      // developer's own are never touched.
      env: {
        ...process.env,
        HOME: home,
        XDG_CONFIG_HOME: join(home, '.config'),
        XDG_CACHE_HOME: join(home, '.cache'),
        TMPDIR: tmp,
        DBUS_SESSION_BUS_ADDRESS: 'disabled:',
      },
    })
    .catch((err: unknown) => {
      rmSync(tmp, { recursive: true, force: true });
      throw err;
    });
  const browser = persistent.browser();
  if (browser === null) throw new Error('playwright gave no browser for the persistent context');
  const cdp = await browser.newBrowserCDPSession();
  const info = (await cdp.send('SystemInfo.getProcessInfo')) as { processInfo: { type: string; id: number }[] };
  await cdp.detach();
  const pid = info.processInfo.find((p) => p.type === 'browser')?.id;
  if (pid === undefined) {
    await persistent.close();
    rmSync(tmp, { recursive: true, force: true });
    throw new Error('Chromium did not report its browser process');
  }
  running.set(pid, tmp);
  noteDaemon(pid);

  let closing: Promise<void> | null = null;
  const close = () =>
    (closing ??= (async () => {
      const closed = persistent.close().then(
        () => true,
        () => false,
      );
      let timer: NodeJS.Timeout | undefined;
      const bounded = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), 10_000)));
      const ok = await Promise.race([closed, bounded]);
      clearTimeout(timer);
      if (!ok || groupMembers(pid).length > 0) killGroup(pid);
      running.delete(pid);
      forgetDaemon(pid);
      rmSync(join(dir, 'profile'), { recursive: true, force: true });
      rmSync(home, { recursive: true, force: true });
      rmSync(tmp, { recursive: true, force: true });
    })());
  beforeFixtureRemoval(t, close);
  t.teardown(close);

  const newContext = async (options: BrowserContextOptions = {}): Promise<BrowserContext> => {
    const context = await browser.newContext({
      locale: 'en-US',
      timezoneId: 'UTC',
      viewport: { width: 1280, height: 800 },
      ...options,
    });
    screenshotsOf.set(context, join(dir, 'screenshots'));
    await guard(context);
    return context;
  };
  return {
    browser,
    pid,
    dir,
    newContext,
    newPage: async (options) => (await newContext(options)).newPage(),
    close,
  };
}

/** What the page reports of a CSP violation, through the binding `guard` exposes. */
interface Violation {
  readonly directive: string;
  readonly blocked: string;
  readonly source: string;
  readonly disposition: string;
}

/**
 * Loopback only, and every page watched: problems collected from the page's creation, CSP
 * violations reported by a listener installed before any script of the page runs.
 */
async function guard(context: BrowserContext): Promise<void> {
  await context.route(
    (url) => !LOOPBACK_HOSTS.has(url.hostname) && (url.protocol === 'http:' || url.protocol === 'https:'),
    async (route) => {
      const request = route.request();
      let page: Page | undefined;
      try {
        page = request.frame().page();
      } catch {
        // a service worker's request has no frame
      }
      if (page)
        watch(page).push({ kind: 'request', text: `${request.method()} ${request.url()} (aborted: not loopback)` });
      await route.abort('blockedbyclient');
    },
  );
  await context.exposeBinding('__wfxCspViolation', ({ page }: { page: Page }, v: Violation) => {
    watch(page).push({
      kind: 'csp',
      text: `${v.disposition === 'report' ? 'report-only: ' : ''}${v.directive} blocked ${v.blocked || '(inline)'} in ${v.source}`,
    });
  });
  // A string: the test build has no DOM types. Installed before the page's own scripts run.
  await context.addInitScript(`document.addEventListener('securitypolicyviolation', (e) => {
    globalThis.__wfxCspViolation({ directive: e.effectiveDirective, blocked: e.blockedURI, source: e.sourceFile + ':' + e.lineNumber, disposition: e.disposition });
  }, true);`);
  context.on('page', (page) => void watch(page));
}

function watch(page: Page): PageProblem[] {
  let problems = problemsOf.get(page);
  if (problems) return problems;
  const list: PageProblem[] = [];
  problemsOf.set(page, list);
  page.on('pageerror', (err) => list.push({ kind: 'pageerror', text: err.stack ?? err.message }));
  page.on('console', (msg) => {
    if (msg.type() !== 'error') return;
    const at = msg.location();
    list.push({ kind: 'console', text: `${msg.text()}${at.url ? ` (${at.url}:${at.lineNumber})` : ''}` });
  });
  problems = list;
  return problems;
}

/**
 * The problems of `page` so far, a live list that grows as the page runs: uncaught exceptions,
 * console errors (a failed resource among them), CSP violations and requests aborted for leaving
 * loopback. Pages of `newContext` are watched from their creation; any other page from now on.
 */
export function collectConsoleErrors(page: Page): readonly PageProblem[] {
  return watch(page);
}

/**
 * Saves a full-page PNG of `page` as `screenshots/<name>.png` in its browser's dir, and a copy
 * in `WFX_SCREENSHOTS_DIR` when that is set (the tests' own dir goes with the test). Returns
 * the path in the browser's dir.
 */
export async function screenshot(page: Page, name: string): Promise<string> {
  const dir = screenshotsOf.get(page.context());
  if (dir === undefined) throw new Error('screenshot: the page is not of a launchBrowser context');
  const file = `${name.replace(/[^\w.-]+/g, '-')}.png`;
  const path = join(dir, file);
  await page.screenshot({ path, fullPage: true });
  const keep = process.env.WFX_SCREENSHOTS_DIR;
  if (keep) {
    mkdirSync(keep, { recursive: true });
    copyFileSync(path, join(keep, file));
  }
  return path;
}

/** One accessibility violation axe-core found. */
export interface AxeViolation {
  /** The rule, e.g. `image-alt`, `color-contrast`. */
  readonly id: string;
  readonly impact: 'serious' | 'critical';
  readonly help: string;
  /** A CSS selector of each element at fault. */
  readonly targets: string[];
}

let axeSource: string | undefined;

/**
 * Runs axe-core on the page as it is now and returns its serious and critical violations (a
 * test asserts none). axe is evaluated through the DevTools protocol, which the page's CSP does
 * not govern: `page.addScriptTag` inserts an inline script, which the console's `script-src
 * 'self'` refuses (and reports as a violation). `disableRules` names rules to leave out.
 */
export async function axeCheck(page: Page, options: { disableRules?: string[] } = {}): Promise<AxeViolation[]> {
  if (!(await page.evaluate('typeof globalThis.axe === "object"'))) {
    axeSource ??= readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
    await page.evaluate(axeSource);
  }
  type Result = { id: string; impact: string | null; help: string; nodes: { target: unknown[] }[] };
  const violations = await page.evaluate(async (disabled: string[]) => {
    const axe = (
      globalThis as unknown as {
        axe: { run(options: object): Promise<{ violations: Result[] }> };
      }
    ).axe;
    const rules = Object.fromEntries(disabled.map((id) => [id, { enabled: false }]));
    const result = await axe.run({ resultTypes: ['violations'], rules });
    return result.violations.map((v) => ({
      id: v.id,
      impact: v.impact,
      help: v.help,
      targets: v.nodes.map((n) => n.target.map(String).join(' ')),
    }));
  }, options.disableRules ?? []);
  return violations.filter((v): v is AxeViolation => v.impact === 'serious' || v.impact === 'critical');
}

/**
 * `url` at `localhost` instead of 127.0.0.1: the same server seen from another site (SameSite
 * compares sites, and ports do not make one), for cross-site requests.
 */
export function crossSiteUrl(url: string): string {
  if (new URL(url).hostname !== '127.0.0.1') throw new Error(`crossSiteUrl: ${url} is not on 127.0.0.1`);
  return url.replace('//127.0.0.1', '//localhost');
}
