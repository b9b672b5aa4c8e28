import '../../setup/fixtures.js'; // fixtures under the OS temp dir (see there)
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import t from 'tap';
import type { Page } from 'playwright-core';
import {
  axeCheck,
  CHROMIUM_SKIP,
  collectConsoleErrors,
  launchBrowser,
  screenshot,
  type PageProblem,
} from '../../helpers/browser.js';
import { callDaemon, startDaemon } from '../../helpers/cli.js';
import { signInWithKey, signInWithLink } from '../../helpers/console-session.js';

/*
 * Starting runs and bulk actions in the console, end to end (a real daemon, Debian's Chromium):
 * a run started from a form generated from a flow's `inputs:`, a field refused in the page and
 * one refused by the daemon shown at their fields; an on-demand flow run in a chosen version
 * with a correlation key; a node replayed reaching "Replay from here" by keyboard; a bulk cancel
 * previewed and applied, followed to its end; what a viewer is not offered.
 */

const ORDER = '7c1e2f3a-4b5c-4d6e-8f70-8192a3b4c5d6';
const ORDER_FLOW = `processId: ${ORDER}
name: Order intake
inputs:
  type: object
  required: [orderId, quantity]
  properties:
    orderId: { type: string, maxLength: 8, description: "The order id, such as A-1001" }
    quantity: { type: integer, minimum: 1 }
    priority: { enum: [low, high], default: low }
    rush: { type: boolean }
    customer:
      type: object
      required: [id]
      properties: { id: { type: integer } }
nodes:
  start: { type: startEvent, next: done }
  done: { type: endEvent }
`;

const MONTH_END = '8c1e2f3a-4b5c-4d6e-8f70-8192a3b4c5d6';
const monthEnd = (step: string) => `processId: ${MONTH_END}
name: Month end
triggers:
  - { type: on-demand, description: run by hand at month end }
nodes:
  start: { type: startEvent, next: mark }
  mark: { type: setVariable, name: Mark, variables: { step: ${step} }, next: done }
  done: { type: endEvent }
`;

const NIGHTLY = '9c1e2f3a-4b5c-4d6e-8f70-8192a3b4c5d6';
const NIGHTLY_FLOW = `processId: ${NIGHTLY}
name: Nightly
triggers:
  - { type: schedule, cron: "0 3 1 1 *" }
nodes:
  start: { type: startEvent, next: done }
  done: { type: endEvent }
`;

const WAITING = 'ac1e2f3a-4b5c-4d6e-8f70-8192a3b4c5d6';
const WAITING_FLOW = `processId: ${WAITING}
name: Waits for a go
nodes:
  start: { type: startEvent, next: hold }
  hold: { type: intermediateCatchEvent, name: Wait for go, eventType: message, messageRef: go, next: done }
  done: { type: endEvent }
`;

const SPAWNER = 'bc1e2f3a-4b5c-4d6e-8f70-8192a3b4c5d6';
const SPAWNER_FLOW = `processId: ${SPAWNER}
name: Spawner
nodes:
  start: { type: startEvent, next: a }
  a: { type: callProcess, processId: ${WAITING}, next: b }
  b: { type: callProcess, processId: ${WAITING}, next: done }
  done: { type: endEvent }
`;

const ORDERS_BY_ID = 'cc1e2f3a-4b5c-4d6e-8f70-8192a3b4c5d6';
/** Ends at once; its runs are found by their order id. */
const ORDERS_BY_ID_FLOW = `processId: ${ORDERS_BY_ID}
name: Orders by id
search: { orderId: "{orderId}", customer: "{customer}" }
nodes:
  start: { type: startEvent, next: done }
  done: { type: endEvent }
`;

/** The problems a test allows: the refusals it asked for (the daemon's 400 for a start it refused). */
function unexpected(problems: readonly PageProblem[]): PageProblem[] {
  return problems.filter((p) => !(p.kind === 'console' && /status of 400/.test(p.text)));
}

/** The id of the execution whose page is shown. */
const shownExecution = (page: Page) => decodeURIComponent(new URL(page.url()).pathname.split('/').at(-1)!);

const ONE_AT_A_TIME = '0b1c2d3e-4f5a-4b6c-9d7e-8f9a0b1c2d3e';
/** One run at a time; each waits at an input node until cancelled. */
const LIMITED_FLOW = `processId: ${ONE_AT_A_TIME}
name: One at a time
concurrency: { limit: 1 }
nodes:
  start: { type: startEvent, next: ask }
  ask: { type: inputNode, inputType: textbox, next: done }
  done: { type: endEvent }
`;

t.test('starting runs and bulk actions in the console', { skip: CHROMIUM_SKIP }, async (t) => {
  const cwd = t.testdir({});
  // The browser starts while the daemon does. Slow bulk operations (one execution a second): one
  // can be cancelled from its page while it runs.
  const [{ url }, browser] = await Promise.all([startDaemon(t, { cwd, args: ['--bulk-rate', '1'] }), launchBrowser(t)]);
  const admin = (await readFile(join(cwd, '.wfx', 'bootstrap.key'), 'utf8')).trim();
  const api = (method: string, path: string, body?: object) => callDaemon(url, admin, method, path, body);
  // Published side by side, each chain in its order: Month end's versions 1 and 2, and the flow
  // Spawner calls before Spawner.
  const chains = [
    [ORDER_FLOW],
    [monthEnd('one'), monthEnd('two')],
    [NIGHTLY_FLOW],
    [WAITING_FLOW, SPAWNER_FLOW],
    [LIMITED_FLOW],
    [ORDERS_BY_ID_FLOW],
  ];
  await Promise.all(
    chains.map(async (chain) => {
      for (const source of chain) t.equal((await api('POST', '/admin/flows', { source })).status, 200);
    }),
  );
  const executionsOf = async (processId: string) =>
    (await api('GET', `/process/instances?processId=${processId}`)).body.items as {
      processInstanceId: string;
      state: string;
    }[];

  const context = await browser.newContext();
  const page = await context.newPage();
  const problems = collectConsoleErrors(page);
  await signInWithLink(page, url, cwd);

  await t.test('a run from the inputs form: refused in the page, refused by the daemon, started', async (t) => {
    await page.goto(`${url}/flows/${ORDER}/run`);
    const form = page.locator('form.run-form');
    await form.waitFor();
    t.equal(await page.getByLabel('priority').inputValue(), '"low"', 'the default is filled in');
    await page.getByText('The order id, such as A-1001').waitFor();
    t.equal(await page.getByLabel(/^orderId/).getAttribute('aria-required'), 'true', 'required, said in words too');
    t.same(await axeCheck(page), [], 'the run form: no serious accessibility violation');

    // Refused in the page: nothing is sent.
    await page.getByLabel(/^orderId/).fill('A-1001');
    await page.getByLabel(/^quantity/).fill('0');
    await page.getByRole('button', { name: 'Start execution' }).click();
    await page.locator('#input-quantity-problem').waitFor();
    t.equal(await page.getByLabel(/^quantity/).getAttribute('aria-invalid'), 'true', 'quantity is marked');
    t.equal(
      await page.evaluate('document.activeElement && document.activeElement.id'),
      'input-quantity',
      'the focus is on the field to fix',
    );
    t.same(await executionsOf(ORDER), [], 'the page sent nothing');

    // Refused by the daemon (the customer's id, which only the daemon checks), shown at its field.
    await page.getByLabel(/^quantity/).fill('3');
    await page.getByLabel(/^customer/).fill('{"name": "Ada"}');
    await page.getByRole('button', { name: 'Start execution' }).click();
    await page.locator('#input-customer-problem').waitFor();
    t.equal(
      await page.getByLabel(/^customer/).getAttribute('aria-invalid'),
      'true',
      "the daemon's refusal, at its field",
    );
    t.equal(await page.locator('[aria-invalid="true"]').count(), 1, 'that field only');
    t.match(await page.locator('#input-customer-problem').textContent(), /^\W*customer\.id /, 'naming the path in it');
    t.same(await executionsOf(ORDER), [], 'the daemon started nothing');
    await screenshot(page, 'console-run-form-refused');
    t.same(await axeCheck(page), [], 'the run form with errors: no serious accessibility violation');

    await page.getByLabel(/^customer/).fill('{"id": 7}');
    await page.getByLabel(/^priority/).selectOption({ label: 'high' });
    await page.getByLabel(/^rush/).selectOption('true');
    await page.getByRole('button', { name: 'Start execution' }).click();
    await page.waitForURL((u) => u.pathname.startsWith('/executions/'));
    await page.locator('.diagram-pane svg').first().waitFor();
    const id = shownExecution(page);
    t.match(
      (await api('GET', `/process/instance/${id}`)).body,
      { processId: ORDER, data: { orderId: 'A-1001', quantity: 3, priority: 'high', rush: true, customer: { id: 7 } } },
      'the new execution holds the typed values, typed',
    );
  });

  await t.test('an on-demand flow run in a chosen version with a correlation key', async (t) => {
    await page.goto(`${url}/flows`);
    const row = (id: string) => page.locator('table.flows tbody tr', { hasText: id });
    await row(MONTH_END).waitFor();
    t.equal(await row(NIGHTLY).getByRole('link', { name: /^Run/ }).count(), 0, 'a scheduled flow has no Run');
    t.same(await axeCheck(page), [], 'flows with Run: no serious accessibility violation');
    await row(MONTH_END).getByRole('link', { name: 'Run Month end' }).click();
    await page.waitForURL((u) => u.pathname === `/flows/${MONTH_END}/run`);
    await page.getByLabel('Version', { exact: true }).selectOption('1');
    await page.getByLabel('Environment', { exact: true }).selectOption('PRODUCTION');
    await page.getByLabel('Correlation key').fill('month-end-2026-11');
    await page.getByRole('button', { name: 'Start execution' }).click();
    await page.waitForURL((u) => u.pathname.startsWith('/executions/'));
    await page.locator('.page-head .state-completed').first().waitFor();
    const id = shownExecution(page);
    t.match(
      (await api('GET', `/process/instance/${id}`)).body,
      { processId: MONTH_END, processVersion: '1', correlationKey: 'month-end-2026-11', data: { step: 'one' } },
      'version 1 (not the active 2), with the key',
    );

    // "Replay from here" is reached from the diagram by keyboard alone.
    await page.locator('[data-node-path="mark"]').first().focus();
    await page.keyboard.press('Enter');
    await page.locator('.node-panel').waitFor();
    let reached = false;
    for (let i = 0; i < 40 && !reached; i++) {
      await page.keyboard.press('Tab');
      reached =
        (await page.evaluate(
          "document.activeElement && document.activeElement.textContent.trim() === 'Replay from here'",
        )) === true;
    }
    t.ok(reached, 'Tab from the opened node reaches Replay from here');
    await page.keyboard.press('Enter');
    await page.waitForURL((u) => u.pathname.startsWith('/executions/') && shownExecution(page) !== id);
    t.match((await api('GET', `/process/instance/${shownExecution(page)}`)).body, {
      replayOf: { processInstanceId: id, nodeId: 'mark' },
    });
  });

  await t.test('a bulk cancel previewed, applied and followed to its end', async (t) => {
    const ids: string[] = [];
    for (let i = 0; i < 3; i++)
      ids.push(
        (await api('POST', '/process/start', { processId: WAITING, data: {} })).body.processInstanceId as string,
      );
    // One in development, which the filters leave out.
    t.equal((await api('POST', '/admin/flows', { source: WAITING_FLOW, environment: 'DEVELOPMENT' })).status, 200);
    const other = (await api('POST', '/process/start?environment=DEVELOPMENT', { processId: WAITING, data: {} })).body
      .processInstanceId as string;
    await page.goto(`${url}/executions?processId=${WAITING}&environment=PRODUCTION&state=RUNNING`);
    await page.locator('tr[data-row]').first().waitFor();
    await page.getByRole('button', { name: 'Bulk action…' }).click();
    const dialog = page.getByRole('dialog');
    await dialog.getByLabel('Action').selectOption('cancel');
    await dialog.getByRole('button', { name: 'Preview' }).click();
    await dialog.getByRole('heading', { name: 'Cancel 3 executions?' }).waitFor();
    const sample = await dialog.locator('table.bulk-sample tbody tr').allTextContents();
    t.equal(sample.length, 3, 'the sample lists them');
    t.ok(
      ids.every((id) => sample.some((r) => r.includes(id))),
      'each selected execution is in the sample',
    );
    t.same((await executionsOf(WAITING)).filter((e) => e.state === 'RUNNING').length, 4, 'the preview changed nothing');
    await screenshot(page, 'console-bulk-preview');
    t.same(await axeCheck(page), [], 'the bulk dialog: no serious accessibility violation');
    await dialog.getByRole('button', { name: 'Cancel 3 executions' }).click();
    await page.waitForURL((u) => u.pathname.startsWith('/bulk/'));
    const bulkId = decodeURIComponent(new URL(page.url()).pathname.split('/').at(-1)!);
    await page.getByRole('status').filter({ hasText: 'The operation completed.' }).waitFor();
    t.equal(await page.getByRole('progressbar').getAttribute('value'), '3');
    t.match(await page.locator('#bulk-progress-words').textContent(), /^3 of 3 executions \(100%\)/);
    await page.locator('table.bulk-results tbody tr').nth(2).waitFor();
    t.equal(await page.locator('table.bulk-results tbody tr', { hasText: 'done' }).count(), 3, 'a result each');
    t.match((await api('GET', `/process/bulk/${bulkId}`)).body, { state: 'COMPLETED', done: 3, skipped: 0 });
    for (const id of ids)
      t.equal((await api('GET', `/process/instance/${id}`)).body.state, 'CANCELLED', `${id} cancelled`);
    t.equal((await api('GET', `/process/instance/${other}`)).body.state, 'RUNNING', 'the one not selected runs on');
    await screenshot(page, 'console-bulk');
    t.same(await axeCheck(page), [], 'a bulk operation: no serious accessibility violation');

    await page.goto(`${url}/bulk/${bulkId}`);
    await page.locator('#bulk-progress-words').waitFor();
    t.match(await page.locator('#bulk-progress-words').textContent(), /^3 of 3/, 'its page is a link');
    await page.getByRole('navigation').getByRole('link', { name: 'Bulk operations' }).click();
    await page.waitForURL(`${url}/bulk`);
    await page.locator('table.bulk-list tbody tr', { hasText: bulkId }).waitFor();
    t.same(await axeCheck(page), [], 'the bulk operations: no serious accessibility violation');
  });

  await t.test('Cancel operation stops a running bulk operation before its next chunk', async (t) => {
    const ids: string[] = [];
    for (let i = 0; i < 30; i++)
      ids.push(
        (await api('POST', '/process/start', { processId: WAITING, data: {} })).body.processInstanceId as string,
      );
    await page.goto(`${url}/executions?processId=${WAITING}&environment=PRODUCTION&state=RUNNING`);
    await page.locator('tr[data-row]').first().waitFor();
    await page.getByRole('button', { name: 'Bulk action…' }).click();
    const dialog = page.getByRole('dialog');
    await dialog.getByRole('button', { name: 'Preview' }).click();
    await dialog.getByRole('button', { name: 'Cancel 30 executions' }).click();
    await page.waitForURL((u) => u.pathname.startsWith('/bulk/'));
    const bulkId = decodeURIComponent(new URL(page.url()).pathname.split('/').at(-1)!);
    await page.getByRole('button', { name: 'Cancel operation' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Cancel operation' }).click();
    await page.getByRole('status').filter({ hasText: 'The operation cancelled.' }).waitFor();
    const op = (await api('GET', `/process/bulk/${bulkId}`)).body as { done: number; pending: number };
    t.match(op, { state: 'CANCELLED', cancelledBy: /^key:/ });
    t.ok(op.pending > 0, 'stopped before the end');
    t.match(await page.locator('#bulk-progress-words').textContent(), new RegExp(`${op.pending} not reached`));
    const states = await Promise.all(ids.map(async (id) => (await api('GET', `/process/instance/${id}`)).body.state));
    t.equal(states.filter((s) => s === 'CANCELLED').length, op.done, 'exactly those done are cancelled');
  });

  await t.test('starts held back by a concurrency limit show their place in the queue', async (t) => {
    const ids: string[] = [];
    for (let i = 0; i < 3; i++)
      ids.push(
        (await api('POST', '/process/start', { processId: ONE_AT_A_TIME, data: {} })).body.processInstanceId as string,
      );
    await page.goto(`${url}/executions?processId=${ONE_AT_A_TIME}`);
    const rowOf = (id: string) => page.locator('tr[data-row]', { hasText: id });
    await rowOf(ids[2]!).getByText('queued #2').waitFor();
    t.match(await rowOf(ids[1]!).textContent(), /queued #1/, 'the next to start is first in the queue');
    t.notMatch(await rowOf(ids[0]!).textContent(), /queued/, 'the one holding the slot is not queued');
    t.same(await axeCheck(page), [], 'the list with queued starts: no serious accessibility violation');
    await page.goto(`${url}/executions/${ids[2]!}`);
    await page.getByText("queued #2: waits for a slot of the flow's concurrency limit").waitFor();
    t.pass('the execution page says where it waits');
    for (const id of ids) await api('POST', `/process/instance/${id}/cancel`);
  });

  await t.test('the whole tree of an ended execution cancelled from its page, with the count', async (t) => {
    const root = (await api('POST', '/process/start', { processId: SPAWNER, data: {} })).body
      .processInstanceId as string;
    const tree = (await api('GET', `/process/instances?rootId=${root}&state=RUNNING`)).body.items as {
      processInstanceId: string;
    }[];
    t.equal(tree.length, 2, 'the two executions it called wait');
    await page.goto(`${url}/executions/${root}`);
    await page.locator('.page-head .badge').waitFor();
    await page.getByRole('button', { name: 'Cancel the whole tree (2 running)' }).click();
    const dialog = page.getByRole('dialog', { name: 'Cancel the whole tree?' });
    t.match(
      await dialog.textContent(),
      /The 2 running executions of the tree of Spawner/,
      'the question says how many',
    );
    t.same(await axeCheck(page), [], 'the question: no serious accessibility violation');
    await dialog.getByRole('button', { name: 'Cancel the whole tree' }).click();
    await page.waitForURL((u) => u.pathname.startsWith('/bulk/'));
    await page.getByRole('status').filter({ hasText: 'The operation completed.' }).waitFor();
    for (const { processInstanceId } of tree)
      t.equal((await api('GET', `/process/instance/${processInstanceId}`)).body.state, 'CANCELLED');
    const running = (await api('GET', `/process/instances?rootId=${root}&state=RUNNING`)).body.items as unknown[];
    t.equal(running.length, 0, 'nothing of the tree runs');
  });

  await t.test('a search attribute finds one run among 10,000', async (t) => {
    // Issue #88's scale: far more runs than a page of the list (50) and than the first reads of a
    // history listing (64, then 256 ids), so the run found, an old one, is neither on the first
    // page nor in those reads: only the daemon's search by the attribute can show it.
    const RUNS = 10_000;
    /** The run searched for: an old one, of customer c0 (4711 = 7 * 673). */
    const WANTED = 4711;
    const orderId = (i: number) => `A-${String(i).padStart(5, '0')}`;
    const ids: string[] = new Array<string>(RUNS);
    // 32 starts in flight at a time: well within the daemon's connection limits.
    for (let next = 0; next < RUNS;) {
      const batch = Array.from({ length: Math.min(32, RUNS - next) }, (_, k) => next + k);
      next += batch.length;
      await Promise.all(
        batch.map(async (i) => {
          const data = { orderId: orderId(i), customer: `c${i % 7}` };
          const res = await api('POST', '/process/start', { processId: ORDERS_BY_ID, data });
          if (res.status !== 200) throw new Error(`start ${i}: ${res.status} ${JSON.stringify(res.body)}`);
          ids[i] = res.body.processInstanceId as string;
        }),
      );
    }
    await page.goto(`${url}/executions?processId=${ORDERS_BY_ID}`);
    await page.locator('tr[data-row]').first().waitFor();
    t.equal(
      await page.locator('tr[data-row]', { hasText: ids[WANTED]! }).count(),
      0,
      'unsearched, the run is not on the first page',
    );
    await page.getByLabel('Search', { exact: true }).fill(`orderId=${orderId(WANTED)}`);
    await page.getByLabel('Search', { exact: true }).press('Enter');
    await page.waitForURL((u) => u.searchParams.get('where') === `orderId=${orderId(WANTED)}`);
    const row = page.locator('tr[data-row]', { hasText: ids[WANTED]! });
    await row.waitFor();
    t.equal(await page.locator('tr[data-row]').count(), 1, 'one run among 10,000');
    t.match(await row.textContent(), `orderId=${orderId(WANTED)}`, 'the row shows its search attributes');
    t.same(await axeCheck(page), [], 'a list found by a search attribute: no serious accessibility violation');
    // A run's search attribute is a link to the runs that share it.
    await row.getByRole('link', { name: 'customer=c0' }).click();
    await page.waitForURL((u) => u.searchParams.get('where') === 'customer=c0');
    // The newest run of customer c0 heads the list.
    await page
      .locator('tr[data-row]', { hasText: ids[Math.floor((RUNS - 1) / 7) * 7]! })
      .first()
      .waitFor();
    const shown = await page.locator('tr[data-row]').count();
    t.ok(shown > 1, 'its customer has more runs');
    t.equal(
      await page.locator('tr[data-row]').filter({ hasNotText: 'customer=c0' }).count(),
      0,
      'and only theirs are listed',
    );
  });

  await t.test('a viewer is offered neither Run nor bulk actions', async (t) => {
    const viewerKey = (
      await api('POST', '/admin/api-keys', { name: 'viewer', organization: 'default', role: 'viewer' })
    ).body.apiKey as string;
    const viewer = await browser.newContext();
    const vpage = await viewer.newPage();
    const vproblems = collectConsoleErrors(vpage);
    await vpage.goto(`${url}/sign-in`);
    await signInWithKey(vpage, viewerKey);
    await vpage.waitForURL(`${url}/executions`);
    await vpage.locator('tr[data-row]').first().waitFor();
    t.equal(await vpage.getByRole('button', { name: 'Bulk action…' }).count(), 0, 'no bulk action');
    t.equal(await vpage.getByRole('link', { name: 'Bulk operations' }).count(), 0, 'no bulk page in the menu');
    await vpage.goto(`${url}/flows`);
    await vpage.locator('table.flows tbody tr', { hasText: MONTH_END }).waitFor();
    t.equal(await vpage.getByRole('link', { name: /^Run/ }).count(), 0, 'no Run');
    const refused = await vpage.evaluate(
      `fetch('/process/exec', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"processId":"${MONTH_END}"}' }).then((r) => r.json())`,
    );
    t.match(refused, { error: 'FORBIDDEN' }, 'and the daemon refuses a start');
    t.same(
      vproblems.filter((p) => !(p.kind === 'console' && /status of 403/.test(p.text))),
      [],
      'no page error',
    );
    await viewer.close();
  });

  t.same(unexpected(problems), [], 'no page error, CSP violation or stray request');
  await context.close();
});
