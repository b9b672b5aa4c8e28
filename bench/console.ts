/**
 * The browser console (part of `npm run bench`): a real daemon process whose JSON store holds
 * 100,000 executions (seeded as the list's benchmark seeds them), and Debian's Chromium opening
 * the console signed in, each time in a new browser context (an empty cache): how long until the
 * executions list shows its first row, and how many bytes the first load transfers (the page,
 * its scripts and styles, and the API's answers), then what opening one execution adds (its
 * diagram's code and layout, loaded on demand).
 */
import { startBenchDaemon } from './daemon.js';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { CHROMIUM, CHROMIUM_ARGS } from '../test/helpers/browser.js';
import { filesIn, seedExecutions } from './executions.js';
import { machineLine, writeSection } from './report.js';

/** Cold loads of the list timed (BENCH_CONSOLE_LOADS overrides). */
const LOADS = Number(process.env.BENCH_CONSOLE_LOADS ?? 10);

/** Bytes a load transferred (bodies as sent, compressed where they were, plus headers). */
export interface Transfer {
  readonly requests: number;
  /** The page and its scripts, styles and images. */
  readonly assetBytes: number;
  /** The API's answers (JSON; an event stream's bytes so far). */
  readonly apiBytes: number;
}

export interface ConsoleBench {
  readonly executions: number;
  /** Milliseconds from navigating to /executions to its first row shown: first load, then p50 and max of LOADS. */
  readonly usable: { readonly firstMs: number; readonly p50: number; readonly max: number };
  readonly firstLoad: Transfer;
  /** What opening one execution's page adds, after the list. */
  readonly executionPage: Transfer;
}

/** Watches `page`'s requests: `take()` gives what finished since the last take. */
function transfers(page: Page): { take(): Promise<Transfer> } {
  let pending: Array<Promise<{ api: boolean; bytes: number }>> = [];
  page.on('requestfinished', (request) => {
    const path = new URL(request.url()).pathname;
    const api = !(path === '/' || path.startsWith('/assets/') || request.resourceType() === 'document');
    pending.push(request.sizes().then((s) => ({ api, bytes: s.responseBodySize + s.responseHeadersSize })));
  });
  return {
    async take() {
      const done = await Promise.all(pending);
      pending = [];
      let assetBytes = 0;
      let apiBytes = 0;
      for (const d of done)
        if (d.api) apiBytes += d.bytes;
        else assetBytes += d.bytes;
      return { requests: done.length, assetBytes, apiBytes };
    },
  };
}

/** A new context signed in with `apiKey` (a session cookie, as the sign-in page makes it). */
async function signedIn(context: BrowserContext, url: string, apiKey: string): Promise<void> {
  const res = await context.request.post(`${url}/auth/session`, {
    data: { apiKey },
    headers: { origin: url },
  });
  if (res.status() !== 200) throw new Error(`sign-in answered ${res.status()}: ${await res.text()}`);
}

/** Seeds a store, starts a daemon on it, and times the console's loads in Chromium; null without Chromium. */
export async function runConsoleBench(): Promise<ConsoleBench | null> {
  if (!existsSync(CHROMIUM)) return null;
  const dataDir = await mkdtemp(join(tmpdir(), 'wfx-bench-console-'));
  const profile = await mkdtemp(join(tmpdir(), 'wfx-bench-chromium-'));
  try {
    const seeded = await seedExecutions(filesIn(dataDir));
    const daemon = await startBenchDaemon(dataDir);
    const { url } = daemon;
    const browser = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM,
      headless: true,
      args: CHROMIUM_ARGS,
    });
    try {
      const times: number[] = [];
      let firstLoad: Transfer | null = null;
      let executionPage: Transfer | null = null;
      for (let i = 0; i <= LOADS; i++) {
        const context = await browser.browser()!.newContext();
        try {
          await signedIn(context, url, seeded.apiKey);
          const page = await context.newPage();
          const watched = transfers(page);
          const t0 = performance.now();
          await page.goto(`${url}/executions`);
          await page.locator('table.executions tbody tr').first().waitFor();
          times.push(performance.now() - t0);
          if (i > 0) continue;
          firstLoad = await watched.take();
          await page.locator('table.executions tbody tr a').first().click();
          await page.locator('.diagram-pane svg').first().waitFor();
          executionPage = await watched.take();
        } finally {
          await context.close();
        }
      }
      const [first, ...rest] = times;
      rest.sort((a, b) => a - b);
      return {
        executions: seeded.ids.length,
        usable: { firstMs: first!, p50: rest[Math.floor(rest.length / 2)]!, max: rest.at(-1)! },
        firstLoad: firstLoad!,
        executionPage: executionPage!,
      };
    } finally {
      await browser.close();
      await daemon.stop();
    }
  } finally {
    await rm(dataDir, { recursive: true, force: true });
    await rm(profile, { recursive: true, force: true });
  }
}

const kb = (bytes: number) => `${(bytes / 1024).toFixed(1)} KiB`;

/** The figures as the markdown of docs/benchmarks/console.md. */
export function formatConsoleBench(r: ConsoleBench | null): string {
  if (!r) return 'Chromium is not installed here (`apt-get install chromium`): no figures.';
  return [
    `A daemon on the JSON store with ${r.executions.toLocaleString('en')} executions; Debian's Chromium, headless, a new context (empty cache) per load, signed in.`,
    '',
    '| | |',
    '|---|---|',
    `| /executions to its first row shown, first load | ${r.usable.firstMs.toFixed(0)} ms |`,
    `| the same, p50 / max of ${LOADS} more | ${r.usable.p50.toFixed(0)} / ${r.usable.max.toFixed(0)} ms |`,
    `| first load: page, scripts, styles (as transferred) | ${kb(r.firstLoad.assetBytes)} |`,
    `| first load: API answers | ${kb(r.firstLoad.apiBytes)} (${r.firstLoad.requests} requests in all) |`,
    `| opening an execution adds: code (the diagram's, on demand) | ${kb(r.executionPage.assetBytes)} |`,
    `| opening an execution adds: API answers | ${kb(r.executionPage.apiBytes)} (${r.executionPage.requests} requests) |`,
  ].join('\n');
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const table = formatConsoleBench(await runConsoleBench());
  console.log(table);
  await writeSection('console', `${machineLine()}\n\n${table}`);
  console.log('\nwritten to docs/benchmarks/');
}
