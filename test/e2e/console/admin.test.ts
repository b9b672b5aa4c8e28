import '../../setup/fixtures.js'; // fixtures under the OS temp dir (see there)
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import t from 'tap';
import type { Page, Request } from 'playwright-core';
import {
  axeCheck,
  CHROMIUM_SKIP,
  collectConsoleErrors,
  launchBrowser,
  screenshot,
  type PageProblem,
} from '../../helpers/browser.js';
import { parseApiKey } from '../../../src/daemon/auth/api-keys.js';
import { callDaemon, startDaemon } from '../../helpers/cli.js';
import { signInWithLink } from '../../helpers/console-session.js';
import { eventually } from '../../helpers/eventually.js';
import { BILLING, chargeFlow } from '../../helpers/jobs.js';
import { HANDLERS_MODULE, spawnWorker } from '../../helpers/workers.js';

/*
 * The console's admin screens end to end: a real daemon, a real `wfx worker run` holding one job
 * while another waits, a model provider whose key must appear nowhere, memory written by a flow,
 * an API key made in the browser and used over HTTP, suspended, revoked; console sessions; and a
 * viewer who sees no admin section and whom the daemon refuses. Every screen is checked with axe.
 */

const PROVIDER_KEY = `sk-never-shown-${randomUUID()}`;
const FLOW_SECRET = `tok-never-shown-${randomUUID()}`;

/** A flow that remembers three entries in two namespaces. */
const MEMORY_FLOW = `processId: ${randomUUID()}
name: Remember
nodes:
  start: { type: startEvent, next: a }
  a: { type: memoryAction, action: store, namespace: customers, key: c-1, value: { name: Ada }, next: b }
  b: { type: memoryAction, action: store, namespace: customers, key: c-2, value: { name: Bob }, next: c }
  c: { type: memoryAction, action: store, namespace: tickets, key: t-1, value: open, next: done }
  done: { type: endEvent }
`;

/** The problems a test allows: what it asked for (the viewer's 403s, an ended session's 401, a failed provider test's 502). */
function unexpected(problems: readonly PageProblem[]): PageProblem[] {
  return problems.filter((p) => !(p.kind === 'console' && /status of (401|403|502)/.test(p.text)));
}

/** Every answer of the daemon's API the page fetched, as text (awaited by `all`). */
function recordAnswers(page: Page, url: string): { all: () => Promise<string[]> } {
  const bodies: Promise<string>[] = [];
  page.on('response', (r) => {
    const type = r.request().resourceType();
    if (r.url().startsWith(url) && (type === 'fetch' || type === 'xhr'))
      bodies.push(r.text().catch(() => `unreadable: ${r.url()}`));
  });
  return { all: () => Promise.all(bodies) };
}

/** GET or POST `path` from the page, as the console's own script would: the status and the error code. */
function fetchFromPage(page: Page, path: string, method = 'GET'): Promise<{ status: number; error: unknown }> {
  return page.evaluate(
    async ([p, m]) => {
      const res = await fetch(p!, {
        method: m,
        credentials: 'same-origin',
        ...(m === 'POST' && { headers: { 'content-type': 'application/json' }, body: '{}' }),
      });
      const body = (await res.json()) as { error?: unknown };
      return { status: res.status, error: body.error };
    },
    [path, method],
  );
}

t.test('the admin screens, end to end', { skip: CHROMIUM_SKIP }, async (t) => {
  const cwd = t.testdir({ 'handlers.mjs': HANDLERS_MODULE });
  const { url } = await startDaemon(t, { cwd });
  const admin = (await readFile(join(cwd, '.wfx', 'bootstrap.key'), 'utf8')).trim();
  const api = (method: string, path: string, body?: object) => callDaemon(url, admin, method, path, body);

  // Jobs: billing registered, two executions of the charge flow, a worker that holds the first.
  const domain = await api('PUT', '/admin/domains/billing', {
    description: BILLING.description,
    actions: BILLING.actions,
  });
  t.equal(domain.status, 200);
  const charge = await api('POST', '/admin/flows', { source: chargeFlow().replace('AUTO', randomUUID()) });
  t.equal(charge.status, 200);
  const runs: string[] = [];
  for (const amount of [1, 2]) {
    const started = await api('POST', '/process/start', { processId: charge.body.processId, data: { amount } });
    t.equal(started.status, 200);
    runs.push(started.body.processInstanceId as string);
  }
  const workerKey = (await api('POST', '/admin/api-keys', { name: 'worker', role: 'worker', organization: 'default' }))
    .body.apiKey as string;
  spawnWorker(t, {
    cwd,
    url,
    apiKey: workerKey,
    args: ['./handlers.mjs', '--name', 'node-1', '--concurrency', '1'],
    env: { HANG: '1' },
  });
  const jobs = await eventually('one job locked, one waiting', async () => {
    const items = (await api('GET', '/jobs')).body.items as Array<{ state: string; processInstanceId: string }>;
    const locked = items.find((j) => j.state === 'locked');
    const waiting = items.find((j) => j.state === 'waiting');
    return locked && waiting && { locked, waiting };
  });

  // A provider with a key; memory written by a flow; a viewer.
  const provider = await api('POST', '/admin/ai-providers', {
    name: 'openai',
    kind: 'openai-compatible',
    baseUrl: 'http://127.0.0.1:9/v1',
    model: 'gpt-test',
    apiKey: PROVIDER_KEY,
    isDefault: true,
  });
  t.equal(provider.status, 201, JSON.stringify(provider.body));
  const remember = await api('POST', '/admin/flows', { source: MEMORY_FLOW });
  const remembered = await api('POST', '/process/start', { processId: remember.body.processId });
  await eventually('the memory flow completed', async () => {
    const run = await api('GET', `/process/instance/${remembered.body.processInstanceId as string}`);
    return run.body.stateCd === 1;
  });
  const viewerKey = (await api('POST', '/admin/api-keys', { name: 'viewer', role: 'viewer', organization: 'default' }))
    .body.apiKey as string;

  const browser = await launchBrowser(t);
  const context = await browser.newContext();
  const page = await context.newPage();
  const problems = collectConsoleErrors(page);
  const answers = recordAnswers(page, url);
  await signInWithLink(page, url, cwd);

  await t.test('the Admin entry leads to workers and jobs: the worker, a locked job, a waiting one', async (t) => {
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Admin' }).click();
    await page.waitForURL(`${url}/manage/workers`);
    const row = page.locator('tr[data-domain="billing"]');
    await row.getByText('node-1').waitFor();
    t.match(await row.textContent(), /billing.*active/, 'the domain, active');
    const locked = page.locator('tr[data-job]', { hasText: 'locked' });
    const waiting = page.locator('tr[data-job]', { hasText: 'waiting' });
    await locked.waitFor();
    await waiting.waitFor();
    t.match(await locked.textContent(), /node-1/, 'the locked job names its worker');
    t.equal(
      await locked.getByRole('link').getAttribute('href'),
      `/executions/${jobs.locked.processInstanceId}?node=charge`,
      'linked to its execution and node',
    );
    t.equal(
      await waiting.getByRole('link').getAttribute('href'),
      `/executions/${jobs.waiting.processInstanceId}?node=charge`,
    );
    t.same(runs.sort(), [jobs.locked.processInstanceId, jobs.waiting.processInstanceId].sort());
    await screenshot(page, 'admin-workers');
    t.same(await axeCheck(page), [], 'workers: no serious accessibility violation');
  });

  await t.test('providers are listed with kind, model and base URL, never their key', async (t) => {
    await page.getByRole('navigation', { name: 'Admin' }).getByRole('link', { name: 'Model providers' }).click();
    const row = page.locator('tr[data-provider="openai"]');
    await row.waitFor();
    t.match(await row.textContent(), /openai.*default.*openai-compatible.*gpt-test.*http:\/\/127\.0\.0\.1:9\/v1/);
    t.match(await row.textContent(), /set \(never shown\)/);
    await row.getByRole('button', { name: 'Test openai' }).click();
    await t.resolves(row.getByText(/failed: AI_/).waitFor(), 'a test of an unreachable provider says its failure code');
    await screenshot(page, 'admin-providers');
    t.same(await axeCheck(page), [], 'providers: no serious accessibility violation');
    t.notOk((await page.content()).includes(PROVIDER_KEY), "the key is not in the page's HTML");
    const fetched = await answers.all();
    t.ok(
      fetched.some((b) => b.includes('gpt-test')),
      'the provider came from an answer that was recorded',
    );
    t.same(
      fetched.filter((b) => b.includes(PROVIDER_KEY)),
      [],
      'nor in any answer the page fetched',
    );
  });

  await t.test('memory: namespaces with counts, one browsed, an entry shown and deleted', async (t) => {
    await page.getByRole('navigation', { name: 'Admin' }).getByRole('link', { name: 'Memory' }).click();
    const customers = page.locator('tr[data-namespace="customers"]');
    await customers.waitFor();
    t.match(await customers.textContent(), /customers\s*2\s*\d+ B/, 'two entries');
    t.match(await page.locator('tr[data-namespace="tickets"]').textContent(), /tickets\s*1/);
    t.same(await axeCheck(page), [], 'namespaces: no serious accessibility violation');
    await customers.getByRole('link', { name: 'customers' }).click();
    await page.waitForURL(`${url}/manage/memory?namespace=customers`);
    await page.locator('tr[data-key="c-2"]').waitFor();
    const keys = await Promise.all((await page.locator('tr[data-key]').all()).map((r) => r.getAttribute('data-key')));
    t.same(keys, ['c-1', 'c-2'], 'its entries, by key');
    await page.getByRole('button', { name: 'Show the value of c-1' }).click();
    t.match(await page.getByLabel('The value of c-1', { exact: true }).textContent(), /"name": "Ada"/);
    await screenshot(page, 'admin-memory');
    t.same(await axeCheck(page), [], 'entries: no serious accessibility violation');
    await page.getByRole('button', { name: 'Delete c-2' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Delete entry' }).click();
    await page.getByText('c-2 deleted.').waitFor();
    t.equal((await api('GET', '/admin/memory/customers/c-2')).status, 404, 'gone in the daemon');
    t.equal((await api('GET', '/admin/memory/customers/c-1')).status, 200, 'the other kept');
  });

  await t.test('flow secrets: set in the browser, listed by name, never shown, removed', async (t) => {
    await page.getByRole('navigation', { name: 'Admin' }).getByRole('link', { name: 'Flow secrets' }).click();
    await page.waitForURL(`${url}/manage/secrets`);
    const form = page.getByRole('form', { name: 'Set a secret' });
    await form.getByLabel('Name').fill('WAREHOUSE_TOKEN');
    await form.getByLabel('Environment').selectOption('DEVELOPMENT');
    await form.getByLabel('Value').fill(FLOW_SECRET);
    t.equal(await form.getByLabel('Value').getAttribute('type'), 'password', 'typed unseen');
    await form.getByRole('button', { name: 'Set secret' }).click();
    await page.getByText('Secret WAREHOUSE_TOKEN set in DEVELOPMENT.').waitFor();
    t.equal(await form.getByLabel('Value').inputValue(), '', 'the field emptied');
    const row = page.getByRole('row', { name: /WAREHOUSE_TOKEN/ });
    await row.waitFor();
    t.match(await row.textContent(), /WAREHOUSE_TOKEN\s*development\s*default/);
    t.match(
      (await api('GET', '/admin/secrets/values?environment=DEVELOPMENT')).body.items,
      [{ name: 'WAREHOUSE_TOKEN', organization: 'default', environment: 'DEVELOPMENT', updatedAt: String }],
      'kept by the daemon',
    );
    t.notOk((await page.content()).includes(FLOW_SECRET), "the value is not in the page's HTML");
    t.same(
      (await answers.all()).filter((b) => b.includes(FLOW_SECRET)),
      [],
      'nor in any answer the page read',
    );
    await screenshot(page, 'admin-secrets');
    t.same(await axeCheck(page), [], 'secrets: no serious accessibility violation');
    await row.getByRole('button', { name: 'Remove secret WAREHOUSE_TOKEN from development' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Remove' }).click();
    await page.getByText('Secret WAREHOUSE_TOKEN removed from DEVELOPMENT.').waitFor();
    t.same((await api('GET', '/admin/secrets/values')).body.items, [], 'gone in the daemon');
  });

  await t.test(
    'environment values: a failure that names one leads to its form; set, the run retried completes',
    async (t) => {
      const partner = createServer((req, res) =>
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ path: req.url })),
      );
      partner.listen(0, '127.0.0.1');
      await once(partner, 'listening');
      t.teardown(() => partner.close());
      const base = `http://127.0.0.1:${(partner.address() as AddressInfo).port}`;
      const reserve = randomUUID();
      const published = await api('POST', '/admin/flows', {
        source: `processId: ${reserve}\nname: Reserve\nnodes:\n  start: { type: startEvent, next: call }\n  call: { type: serviceTask, method: POST, url: "{env.BASE_URL}/reserve", next: done }\n  done: { type: endEvent }\n`,
      });
      t.equal(published.status, 200);
      const run = (await api('POST', '/process/start?wait=10', { processId: reserve })).body;
      t.match(run, { status: 'failed' }, 'the run fails: BASE_URL has no value');
      const id = run.processInstanceId as string;
      await page.goto(`${url}/executions/${id}`);
      const facts = page.locator('dl.facts');
      await facts.getByText(/ENV_NOT_SET: \{env\.BASE_URL\} has no value in PRODUCTION/).waitFor();
      await facts.getByRole('link', { name: 'Set BASE_URL in production' }).click();
      await page.waitForURL(`${url}/manage/environment?name=BASE_URL&environment=PRODUCTION`);
      const form = page.getByRole('form', { name: 'Set a value' });
      t.equal(await form.getByLabel('Name').inputValue(), 'BASE_URL', 'the form names it');
      t.equal(await form.getByLabel('Environment').inputValue(), 'PRODUCTION');
      await form.getByLabel('Value').fill(base);
      await form.getByRole('button', { name: 'Set value' }).click();
      await page.getByText('BASE_URL set in PRODUCTION.').waitFor();
      const row = page.getByRole('row', { name: /BASE_URL/ });
      t.match(await row.textContent(), new RegExp(`BASE_URL\\s*production\\s*${base}`), 'listed with its value');
      t.same(await axeCheck(page), [], 'environment values: no serious accessibility violation');
      await screenshot(page, 'admin-environment');
      t.match((await api('GET', '/admin/environments/PRODUCTION/variables')).body.variables, { BASE_URL: base });

      await page.goto(`${url}/executions/${id}`);
      await page.getByRole('button', { name: 'Retry execution' }).click();
      const goAhead = page.getByRole('dialog').getByRole('button', { name: 'Retry execution' });
      t.equal(await goAhead.getAttribute('class'), 'primary', 'a retry repairs: not styled as destructive');
      await goAhead.click();
      await page.locator('.page-head .state-completed').first().waitFor();
      t.match((await api('GET', `/process/instance/${id}`)).body, { state: 'COMPLETED' }, 'the retry completed');
      await page.goto(`${url}/manage/environment`); // back in the admin section, where the next screens are reached
      await page.getByRole('navigation', { name: 'Admin' }).waitFor();
    },
  );

  await t.test('an API key made in the browser: its secret once, used, suspended, revoked', async (t) => {
    await page.getByRole('navigation', { name: 'Admin' }).getByRole('link', { name: 'API keys' }).click();
    // The secrets page before it has a Name field too: fill the keys page's, once it is shown.
    await page.getByRole('heading', { name: 'Create a key' }).waitFor();
    await page.getByLabel('Name', { exact: true }).fill('ci-bot');
    await page.getByLabel('Role', { exact: true }).selectOption('operator');
    await page.getByLabel('Organization', { exact: true }).fill('default');
    await page.getByLabel('Requests per minute').fill('600');
    t.same(await axeCheck(page), [], 'the keys page: no serious accessibility violation');
    await page.getByRole('button', { name: 'Create key' }).click();
    const secretField = page.getByLabel('Secret of the new key');
    await secretField.waitFor();
    const secret = await secretField.inputValue();
    t.match(secret, /^apk_[0-9a-f]+_/, 'the secret is shown');
    await page.getByText('you will not see it again').waitFor();
    t.equal(await page.evaluate('document.activeElement?.id'), 'secret-title', 'the focus on the new key');
    await screenshot(page, 'admin-key-created');
    t.same(await axeCheck(page), [], 'the secret shown: no serious accessibility violation');

    const me = await callDaemon(url, secret, 'GET', '/auth/whoami');
    t.equal(me.status, 200, 'the new key works over HTTP');
    t.same(me.body.organization, 'default');
    t.equal((await callDaemon(url, secret, 'GET', '/process/instances')).status, 200);
    const row = page.locator('tr', { hasText: 'ci-bot' });
    await row.getByText('active').waitFor();
    t.match(await row.textContent(), /operator.*default.*600\/min/);

    t.match(
      await page.locator('tr', { hasText: 'bootstrap' }).textContent(),
      /this session's key/,
      "the session's own key is marked",
    );
    await page.getByRole('button', { name: 'Done, I have copied it' }).click();
    await secretField.waitFor({ state: 'detached' });
    t.notOk((await page.content()).includes(parseApiKey(secret)!.secret), 'the secret is gone from the page');
    const listed = await api('GET', '/admin/api-keys');
    t.notOk(JSON.stringify(listed.body).includes(parseApiKey(secret)!.secret), 'and no list gives it');

    await page.getByRole('button', { name: 'Suspend ci-bot' }).click();
    await row.getByText('suspended').waitFor();
    t.equal((await callDaemon(url, secret, 'GET', '/auth/whoami')).status, 401, 'a suspended key is refused');
    await page.getByRole('button', { name: 'Resume ci-bot' }).click();
    await row.getByText('active').waitFor();
    t.equal((await callDaemon(url, secret, 'GET', '/auth/whoami')).status, 200, 'resumed');

    await page.getByRole('button', { name: 'Revoke ci-bot' }).click();
    const dialog = page.getByRole('dialog');
    t.same(await axeCheck(page), [], 'the revoke question: no serious accessibility violation');
    await dialog.getByRole('button', { name: 'Revoke key' }).click();
    await row.getByText('revoked').waitFor();
    const refused = await callDaemon(url, secret, 'GET', '/auth/whoami');
    t.equal(refused.status, 401, 'a revoked key is refused');
    t.equal(refused.body.error, 'UNAUTHORIZED');
    t.equal(await row.getByRole('button').count(), 0, 'nothing more to do with a revoked key');
  });

  await t.test('who the session is is read once per page load, however many pages open in it', async (t) => {
    let whoami = 0;
    const count = (r: Request) => {
      if (new URL(r.url()).pathname === '/auth/whoami') whoami++;
    };
    page.on('request', count);
    await page.goto(`${url}/executions`);
    const main = page.getByRole('navigation', { name: 'Main' });
    const admin = page.getByRole('navigation', { name: 'Admin' });
    const pages: [typeof main, string, string][] = [
      [main, 'Flows', 'Flows'],
      [main, 'Failures', 'Failures'],
      [main, 'Tasks', 'Tasks'],
      [main, 'Triggers', 'Triggers'],
      [main, 'Admin', 'Workers and jobs'],
      [admin, 'Console sessions', 'Console sessions'],
      // Last an admin page: the next test goes on from its navigation.
      [admin, 'API keys', 'API keys'],
    ];
    for (const [nav, link, heading] of pages) {
      await nav.getByRole('link', { name: link }).click();
      await page.getByRole('heading', { level: 1, name: heading }).waitFor();
    }
    page.off('request', count);
    t.equal(whoami, 1, 'one GET /auth/whoami for the load and the seven pages opened after it');
  });

  await t.test('a viewer sees no admin section, and the daemon refuses the admin API', async (t) => {
    const viewerContext = await browser.newContext();
    const viewer = await viewerContext.newPage();
    const viewerProblems = collectConsoleErrors(viewer);
    await viewer.goto(`${url}/sign-in`);
    await viewer.getByLabel('API key').fill(viewerKey);
    await viewer.getByRole('button', { name: 'Sign in with the key' }).click();
    await viewer.waitForURL(`${url}/executions`);
    const nav = viewer.getByRole('navigation', { name: 'Main' });
    await nav.getByRole('link', { name: 'Executions' }).waitFor();
    await viewer.locator('.who').waitFor();
    t.equal(await nav.getByRole('link', { name: 'Admin' }).count(), 0, 'no Admin entry');
    for (const p of ['keys', 'providers', 'memory', 'secrets', 'sessions']) {
      await viewer.goto(`${url}/manage/${p}`);
      await viewer.getByRole('heading', { name: 'Not allowed', level: 1 }).waitFor();
      t.equal(await viewer.getByRole('navigation', { name: 'Admin' }).count(), 0, `${p}: no admin navigation`);
    }
    await screenshot(viewer, 'admin-not-allowed');
    t.same(await axeCheck(viewer), [], 'not allowed: no serious accessibility violation');
    for (const [path, method] of [
      ['/admin/api-keys', 'GET'],
      ['/admin/api-keys', 'POST'],
      ['/admin/ai-providers', 'GET'],
      ['/admin/memory/namespaces', 'GET'],
      ['/admin/memory', 'GET'],
      ['/admin/sessions', 'GET'],
      ['/admin/secrets/values', 'GET'],
    ] as const)
      t.same(await fetchFromPage(viewer, path, method), { status: 403, error: 'FORBIDDEN' }, `${method} ${path}: 403`);
    await viewer.goto(`${url}/manage/workers`);
    await viewer.locator('tr[data-domain="billing"]').waitFor();
    t.pass('workers and jobs need only WORKFLOW_READ: a viewer reads them, as over the API');

    await t.test("an administrator ends the viewer's console session", async (t) => {
      await page.getByRole('navigation', { name: 'Admin' }).getByRole('link', { name: 'Console sessions' }).click();
      const row = page.locator('tr[data-session]', { hasText: 'API key' });
      await row.waitFor();
      await screenshot(page, 'admin-sessions');
      t.same(await axeCheck(page), [], 'sessions: no serious accessibility violation');
      const id = (await row.getAttribute('data-session'))!;
      await row.getByRole('button', { name: `Revoke session ${id}` }).click();
      await page.getByRole('dialog').getByRole('button', { name: 'End session' }).click();
      await page.getByText(`Session ${id} ended.`).waitFor();
      t.equal((await fetchFromPage(viewer, '/auth/whoami')).status, 401, "the viewer's session is over");
      t.equal(await page.locator(`tr[data-session="${id}"]`).count(), 0, 'no longer listed');
    });
    t.same(unexpected(viewerProblems), [], 'no unexpected console error on the viewer page');
    await viewerContext.close();
  });

  t.same(unexpected(problems), [], 'no unexpected console error on the admin page');
});
