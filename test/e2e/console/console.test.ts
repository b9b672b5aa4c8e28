import '../../setup/fixtures.js'; // fixtures under the OS temp dir (see there)
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import t from 'tap';
import type { Locator, Page } from 'playwright-core';
import {
  axeCheck,
  CHROMIUM_SKIP,
  collectConsoleErrors,
  launchBrowser,
  screenshot,
  type PageProblem,
} from '../../helpers/browser.js';
import { callDaemon, startDaemon, wfxIn } from '../../helpers/cli.js';

/*
 * The console end to end: a real daemon, Debian's Chromium, the console's own pages. An
 * execution runs through a loop and a gateway, moved on by events the test sends, while its page
 * and the list show each step live; sign-in by one-time link and by API key, sign-out, another
 * organization's execution refused, cancel from the page, and an accessibility check of every
 * view. Screenshots go to the test's temp dir (and WFX_SCREENSHOTS_DIR when set).
 */

const LIVE = '4b1e2f3a-4b5c-4d6e-8f70-8192a3b4c5d6';
const OTHER = '5b1e2f3a-4b5c-4d6e-8f70-8192a3b4c5d6';

/** A loop of two iterations, each waiting for a `tick`, then a gateway, then a wait for `finish`. */
const LIVE_FLOW = `processId: ${LIVE}
name: Live run
nodes:
  start: { type: startEvent, next: items }
  items: { type: setVariable, name: Set items, variables: { items: [1, 2] }, next: each }
  each:
    type: loopNode
    name: For each item
    collection: "{items}"
    nodes:
      s: { type: startEvent, next: tick }
      tick: { type: intermediateCatchEvent, name: Wait for tick, eventType: message, messageRef: tick, next: e }
      e: { type: endEvent }
    next: route
  route:
    type: exclusiveGateway
    name: Size?
    branches:
      - { condition: "\${size == 'big'}", next: big }
    default: small
  big: { type: task, name: Big order, next: hold }
  small: { type: task, name: Small order, next: hold }
  hold: { type: intermediateCatchEvent, name: Wait for finish, eventType: message, messageRef: finish, next: done }
  done: { type: endEvent }
`;

const FAILING = '6b1e2f3a-4b5c-4d6e-8f70-8192a3b4c5d6';
/** Fails at `check` until `ok` is set. */
const FAILING_FLOW = `processId: ${FAILING}
name: Failing check
nodes:
  start: { type: startEvent, next: prep }
  prep: { type: setVariable, name: Prepare, variables: { prepared: true }, next: check }
  check: { type: scriptTask, name: Check, script: "if (!vars.ok) throw new Error('not ok'); return {}", next: done }
  done: { type: endEvent }
`;

const OTHER_FLOW = `processId: ${OTHER}
name: Globex only
nodes:
  s: { type: startEvent, next: w }
  w: { type: intermediateCatchEvent, eventType: message, messageRef: never, next: e }
  e: { type: endEvent }
`;

/** The problems a test allows: the refusals it asked for (a 401 before sign-in, a 403 it tried, a 404 it opened). */
function unexpected(problems: readonly PageProblem[]): PageProblem[] {
  return problems.filter((p) => !(p.kind === 'console' && /status of (401|403|404)/.test(p.text)));
}

/** The diagram node `path` of the page (`each`, or `each/tick` inside the loop's body). */
const node = (page: Page, path: string): Locator => page.locator(`[data-node-path="${path}"]`).first();

/** Waits until `locator`'s class names include `state-<state>`. */
async function inState(locator: Locator, state: string): Promise<void> {
  await locator.and(locator.page().locator(`.state-${state}`)).waitFor();
}

t.test('the console, end to end', { skip: CHROMIUM_SKIP }, async (t) => {
  const cwd = t.testdir({});
  const { url } = await startDaemon(t, { cwd });
  const admin = (await readFile(join(cwd, '.wfx', 'bootstrap.key'), 'utf8')).trim();
  const api = (method: string, path: string, body?: object) => callDaemon(url, admin, method, path, body);
  t.equal((await api('POST', '/admin/flows', { source: LIVE_FLOW, organization: 'acme' })).status, 200);
  t.equal((await api('POST', '/admin/flows', { source: OTHER_FLOW, organization: 'globex' })).status, 200);
  t.equal((await api('POST', '/admin/flows', { source: FAILING_FLOW, organization: 'acme' })).status, 200);
  const acmeKey = (await api('POST', '/admin/api-keys', { name: 'acme viewer', organization: 'acme', role: 'viewer' }))
    .body.apiKey as string;
  const started = await api('POST', '/process/start', {
    processId: LIVE,
    correlationKey: 'order-7',
    data: { size: 'big' },
  });
  const runId = started.body.processInstanceId as string;
  const globexRun = (await api('POST', '/process/start', { processId: OTHER })).body.processInstanceId as string;
  const send = async (messageRef: string) =>
    t.equal(
      (await api('POST', '/process/event', { eventType: messageRef, correlationKey: 'order-7', organization: 'acme' }))
        .status,
      200,
      `sent ${messageRef}`,
    );

  const browser = await launchBrowser(t);

  await t.test('a one-time link signs in; the list and the execution update live', async (t) => {
    const context = await browser.newContext();
    const list = await context.newPage();
    const problems = collectConsoleErrors(list);
    const link = await wfxIn(['console', '--no-open'], { cwd });
    t.equal(link.code, 0);
    await list.goto(link.stdout.trim());
    await list.waitForURL(`${url}/executions`);
    t.notMatch(list.url(), /token/, 'the link left the address bar');
    const row = list.locator(`tr[data-row][aria-label*="${runId}"]`);
    await row.waitFor();
    await t.resolves(row.locator('.state-running').first().waitFor(), 'the run is listed, running');
    await screenshot(list, 'console-executions');
    t.same(await axeCheck(list), [], 'the list: no serious accessibility violation');

    const page = await context.newPage();
    const pageProblems = collectConsoleErrors(page);
    await page.goto(`${url}/executions/${runId}`);
    await page.locator('.diagram-pane svg').first().waitFor();
    await inState(node(page, 'items'), 'completed');
    await inState(node(page, 'each'), 'waiting');
    t.match(
      await node(page, 'each').getAttribute('aria-label'),
      /1 of 2 iterations?|1 iteration/,
      'the first iteration',
    );
    t.match(await node(page, 'route').getAttribute('aria-label'), /not reached/);
    await screenshot(page, 'console-execution-loop-1');

    await send('tick');
    await page.locator('[data-node-path="each"][aria-label*="2 of 2 iterations"]').waitFor();
    t.pass('the loop moved on to its second iteration, live');

    await send('tick');
    await inState(node(page, 'hold'), 'waiting');
    await inState(node(page, 'route'), 'completed');
    await inState(node(page, 'big'), 'completed');
    t.match(
      await node(page, 'small').getAttribute('aria-label'),
      /not reached/,
      'the gateway took the big branch only',
    );
    t.match(await node(page, 'each').getAttribute('aria-label'), /completed/);
    await page.locator('.log-entry', { hasText: 'Wait for finish' }).first().waitFor();
    t.pass('the log shows the wait, as it came');
    await screenshot(page, 'console-execution-gateway');
    t.same(await axeCheck(page), [], 'the execution page: no serious accessibility violation');

    await node(page, 'route').click();
    await page
      .getByRole('heading', { name: /Size\?/ })
      .first()
      .waitFor();
    t.pass('a node opened shows its panel');
    await node(page, 'items').click();
    const panel = page.locator('.node-panel');
    await panel.getByRole('heading', { name: 'Variables it set' }).waitFor();
    t.match(await panel.getByLabel('Variables Set items set').textContent(), /"items"/, 'what the node set');
    await screenshot(page, 'console-node-panel');

    await send('finish');
    await page.locator('.page-head .state-completed').first().waitFor();
    await inState(node(page, 'done'), 'completed');
    await t.resolves(
      row.locator('.state-completed').first().waitFor(),
      'the list row turned completed without a reload',
    );
    await screenshot(page, 'console-execution-completed');
    await screenshot(list, 'console-executions-completed');

    // Cancel from the page.
    const cancelId = (await api('POST', '/process/start', { processId: LIVE, correlationKey: 'order-8', data: {} }))
      .body.processInstanceId as string;
    await page.goto(`${url}/executions/${cancelId}`);
    await page.locator('.page-head').getByRole('button', { name: 'Cancel execution' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Cancel execution' }).click();
    await page.locator('.page-head .state-cancelled').first().waitFor();
    t.equal((await api('GET', `/process/instance/${cancelId}`)).body.state, 'CANCELLED', 'cancelled in the daemon');

    // Move a running execution to a second version of its flow: checked first, then moved.
    const moveId = (await api('POST', '/process/start', { processId: LIVE, correlationKey: 'order-10', data: {} })).body
      .processInstanceId as string;
    const v2 = LIVE_FLOW.replace('name: Live run', 'name: Live run again');
    t.equal((await api('POST', '/admin/flows', { source: v2, organization: 'acme' })).status, 200);
    await page.goto(`${url}/executions/${moveId}`);
    const movePanel = page.locator('details', { hasText: 'Move to another version' });
    await movePanel.locator('summary').click();
    await movePanel.getByRole('button', { name: 'Check' }).click();
    await movePanel.getByRole('status').filter({ hasText: 'It can move to version 2.' }).waitFor();
    t.equal((await api('GET', `/process/instance/${moveId}`)).body.processVersion, '1', 'a check moves nothing');
    await movePanel.getByRole('button', { name: 'Move' }).click();
    // The page reads it again: its facts and diagram are version 2's.
    await page.locator('.facts').getByRole('link', { name: 'version 2' }).waitFor();
    t.equal((await api('GET', `/process/instance/${moveId}`)).body.processVersion, '2', 'moved in the daemon');

    // Retry a failed execution from its page, and replay it from a node.
    const failedId = (await api('POST', '/process/start', { processId: FAILING, data: {} })).body
      .processInstanceId as string;
    await page.goto(`${url}/executions/${failedId}`);
    await page.locator('.page-head .state-failed').first().waitFor();
    await page.locator('.page-head').getByRole('button', { name: 'Retry execution' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Retry execution' }).click();
    await page.locator('ol.retries li').first().waitFor();
    await page.locator('.page-head .state-failed').first().waitFor();
    t.match(
      (await api('GET', `/process/instance/${failedId}`)).body,
      { state: 'FAILED', retries: [{ by: /^key:/, error: { code: 'SCRIPT_ERROR', nodeId: 'check' } }] },
      'retried in the daemon, and failed again without a fix',
    );
    await screenshot(page, 'console-execution-retried');
    await node(page, 'check').click();
    await page.locator('.node-panel').getByRole('button', { name: 'Replay from here' }).click();
    await page.waitForURL((u) => u.pathname.startsWith('/executions/') && !u.pathname.endsWith(failedId));
    await page.getByText('Replay of').first().waitFor();
    const replayId = decodeURIComponent(new URL(page.url()).pathname.split('/').at(-1)!);
    t.match(
      (await api('GET', `/process/instance/${replayId}`)).body,
      { replayOf: { processInstanceId: failedId, nodeId: 'check' }, data: { prepared: true } },
      'the replay started at the node with the variables of that moment',
    );

    // The failures view groups them by code and node, and lists a group's executions.
    await page.goto(`${url}/failures`);
    const group = page.locator('table.failures tbody tr', { hasText: 'SCRIPT_ERROR' });
    await group.first().waitFor();
    t.match(await group.first().textContent(), /Check/, 'the node they failed at, by its name');
    t.same(await axeCheck(page), [], 'failures: no serious accessibility violation');
    await screenshot(page, 'console-failures');
    await group
      .first()
      .getByRole('link', { name: /^List them/ })
      .click();
    await page.waitForURL((u) => u.pathname === '/executions' && u.searchParams.get('failedNode') === 'check');
    await page.locator('tr[data-row]').first().waitFor();
    const listed = await Promise.all(
      (await page.locator('tr[data-row]').all()).map(async (r) => (await r.getAttribute('aria-label')) ?? ''),
    );
    t.ok(
      listed.some((r) => r.includes(failedId)),
      'the group lists the failed execution',
    );
    // Variables that are not a JSON object are refused in the page; the fix set with the retry completes it.
    await page.goto(`${url}/executions/${failedId}`);
    await page.locator('.page-head').getByRole('button', { name: 'Retry execution' }).click();
    await page
      .getByRole('dialog')
      .getByLabel(/Variables to set first/)
      .fill('[1]');
    await page.getByRole('dialog').getByRole('button', { name: 'Retry execution' }).click();
    await page
      .getByRole('alert')
      .filter({ hasText: /Retry failed: the variables must be a JSON object/ })
      .waitFor();
    await page.locator('.page-head').getByRole('button', { name: 'Retry execution' }).click();
    t.same(await axeCheck(page), [], 'the retry dialog: no serious accessibility violation');
    await page
      .getByRole('dialog')
      .getByLabel(/Variables to set first/)
      .fill('{"ok": true}');
    await page.getByRole('dialog').getByRole('button', { name: 'Retry execution' }).click();
    await page.locator('.page-head .state-completed').first().waitFor();
    t.match(
      (await api('GET', `/process/instance/${failedId}`)).body,
      { state: 'COMPLETED', data: { ok: true }, retries: [{}, { set: ['ok'] }] },
      'the second retry set the fix first, and the execution completed',
    );

    await list.goto(`${url}/flows`);
    await list.getByRole('heading', { name: 'Flows' }).waitFor();
    t.same(await axeCheck(list), [], 'flows: no serious accessibility violation');
    await list.goto(`${url}/flows/${LIVE}`);
    await list.locator('.diagram-pane svg').first().waitFor();
    await screenshot(list, 'console-flow');
    t.same(await axeCheck(list), [], 'a flow: no serious accessibility violation');
    t.same(unexpected([...problems, ...pageProblems]), [], 'no page error, CSP violation or stray request');
    await context.close();
  });

  await t.test("an API key's session sees its organization only; sign-out ends it", async (t) => {
    const context = await browser.newContext();
    const page = await context.newPage();
    const problems = collectConsoleErrors(page);
    await page.goto(`${url}/executions`);
    await page.waitForURL((u) => u.pathname === '/sign-in');
    t.same(await axeCheck(page), [], 'sign-in: no serious accessibility violation');
    await page.getByLabel('API key').fill(acmeKey);
    await screenshot(page, 'console-sign-in');
    await page
      .getByRole('button', { name: /sign in/i })
      .first()
      .click();
    await page.waitForURL(`${url}/executions`);
    await page.locator('tr[data-row]').first().waitFor();
    const rows = page.locator('tr[data-row]');
    const listed = await Promise.all((await rows.all()).map(async (r) => (await r.getAttribute('aria-label')) ?? ''));
    t.ok(
      listed.some((r) => r.includes(runId)),
      "acme's executions are listed",
    );
    t.notOk(
      listed.some((r) => r.includes(globexRun)),
      "globex's are not",
    );
    t.same(await page.evaluate('[localStorage.length, sessionStorage.length, document.cookie]'), [0, 0, '']);

    await page.goto(`${url}/executions/${globexRun}`);
    await page.getByRole('alert').first().waitFor();
    t.match(
      await page.getByRole('alert').first().textContent(),
      /no execution|not found/i,
      "another organization's is not found",
    );
    await screenshot(page, 'console-other-organization');
    // A viewer may read, not cancel: the page offers no Cancel, and the daemon refuses one.
    const cancellable = (await api('POST', '/process/start', { processId: LIVE, correlationKey: 'order-9', data: {} }))
      .body.processInstanceId as string;
    await page.goto(`${url}/executions/${cancellable}`);
    await page.locator('.diagram-pane svg').first().waitFor();
    await page.locator('.page-head .state-running').first().waitFor();
    t.equal(await page.getByRole('button', { name: 'Cancel execution' }).count(), 0, 'no Cancel for a viewer');
    t.equal(await page.getByText('Move to another version').count(), 0, 'no Move for a viewer');
    const failedForViewer = (await api('POST', '/process/start', { processId: FAILING, data: {} })).body
      .processInstanceId as string;
    await page.goto(`${url}/executions/${failedForViewer}`);
    await page.locator('.page-head .state-failed').first().waitFor();
    t.equal(await page.getByRole('button', { name: 'Retry execution' }).count(), 0, 'no Retry for a viewer');
    const retryRefused = await page.evaluate(
      `fetch('/process/instance/${failedForViewer}/retry', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' }).then((r) => r.json())`,
    );
    t.match(retryRefused, { error: 'FORBIDDEN' });
    const refused = await page.evaluate(
      `fetch('/process/instance/${cancellable}/cancel', { method: 'POST' }).then((r) => r.json())`,
    );
    t.match(refused, { error: 'FORBIDDEN' });

    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.waitForURL((u) => u.pathname === '/sign-in');
    t.equal(await page.evaluate(`fetch('/auth/whoami').then((r) => r.status)`), 401, 'signed out');
    t.same(unexpected(problems), [], 'no page error, CSP violation or stray request');
    await context.close();
  });
});
