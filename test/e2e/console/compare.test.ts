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
import { signInWithKey } from '../../helpers/console-session.js';
import { eventually } from '../../helpers/eventually.js';

/*
 * Comparing two runs end to end: a real daemon, Debian's Chromium, a viewer's session (reading
 * is all a comparison needs). Two runs of one flow take different branches of an exclusive
 * gateway; the comparison, reached from one run's page through the picker, shows where they
 * parted, the nodes only one reached, a variable that differs at a node, each node's time; a run
 * of another version compares by node id; another organization's run is refused by the daemon.
 */

const ORDERS = '7c1e2f3a-4b5c-4d6e-8f70-8192a3b4c5d6';
const OTHER = '8c1e2f3a-4b5c-4d6e-8f70-8192a3b4c5d6';

/** Prepare, a gateway on the total, a big or small branch setting `size`, a check, done. */
const ORDERS_FLOW = `processId: ${ORDERS}
name: Orders
nodes:
  start: { type: startEvent, next: prep }
  prep: { type: setVariable, name: Prepare, variables: { prepared: true }, next: route }
  route:
    type: exclusiveGateway
    name: Big order?
    branches:
      - { condition: "\${total > 100}", next: big }
    default: small
  big: { type: setVariable, name: Big order, variables: { size: big, discount: 10 }, next: check }
  small: { type: setVariable, name: Small order, variables: { size: small }, next: check }
  check: { type: scriptTask, name: Check, script: "return { checked: vars.size }", next: done }
  done: { type: endEvent, name: Done }
`;

/** Version 2: an audit after the big branch. */
const ORDERS_V2 = ORDERS_FLOW.replace(
  'variables: { size: big, discount: 10 }, next: check }',
  'variables: { size: big, discount: 10 }, next: audit }\n  audit: { type: setVariable, name: Audit, variables: { audited: true }, next: check }',
);

const OTHER_FLOW = `processId: ${OTHER}
name: Globex only
nodes:
  s: { type: startEvent, next: e }
  e: { type: endEvent }
`;

/** The problems a test allows: the refusal it asked for (another organization's execution, 404). */
function unexpected(problems: readonly PageProblem[]): PageProblem[] {
  return problems.filter((p) => !(p.kind === 'console' && /status of 404/.test(p.text)));
}

/** The diagram node `id` of the page. */
const node = (page: Page, id: string) => page.locator(`[data-node-path="${id}"]`).first();

t.test('comparing two runs, end to end', { skip: CHROMIUM_SKIP }, async (t) => {
  const cwd = t.testdir({});
  const { url } = await startDaemon(t, { cwd });
  const admin = (await readFile(join(cwd, '.wfx', 'bootstrap.key'), 'utf8')).trim();
  const api = (method: string, path: string, body?: object) => callDaemon(url, admin, method, path, body);
  t.equal((await api('POST', '/admin/flows', { source: ORDERS_FLOW, organization: 'acme' })).status, 200);
  t.equal((await api('POST', '/admin/flows', { source: OTHER_FLOW, organization: 'globex' })).status, 200);
  const viewer = (await api('POST', '/admin/api-keys', { name: 'acme viewer', organization: 'acme', role: 'viewer' }))
    .body.apiKey as string;
  /** Starts a run and waits until it completed. */
  const completed = async (processId: string, data: object, version?: string) => {
    const query = version ? `?versionNumber=${version}` : '';
    const started = await api('POST', `/process/start${query}`, { processId, data });
    t.equal(started.status, 200, 'started');
    const id = started.body.processInstanceId as string;
    await eventually(
      `${id} completed`,
      async () => (await api('GET', `/process/instance/${id}`)).body.state === 'COMPLETED',
    );
    return id;
  };
  const runA = await completed(ORDERS, { total: 500 });
  const runB = await completed(ORDERS, { total: 5 });
  const globexRun = await completed(OTHER, {});

  const browser = await launchBrowser(t);
  const context = await browser.newContext();
  const page = await context.newPage();
  const problems = collectConsoleErrors(page);
  await page.goto(`${url}/sign-in`);
  await signInWithKey(page, viewer);
  await page.waitForURL(`${url}/executions`);

  await t.test("the picker, from a run's page: recent runs of its flow, or an id pasted", async (t) => {
    await page.goto(`${url}/executions/${runA}`);
    await page.getByRole('link', { name: 'Compare with another run' }).click();
    await page.waitForURL((u) => u.pathname === '/compare' && u.searchParams.get('a') === runA);
    const pick = page.getByRole('link', { name: `Compare with ${runB}` });
    await pick.waitFor();
    t.equal(
      await page.getByRole('link', { name: `Compare with ${runA}` }).count(),
      0,
      'A is not offered against itself',
    );
    await screenshot(page, 'console-compare-picker');
    t.same(await axeCheck(page), [], 'the picker: no serious accessibility violation');
    // The same execution pasted is refused in the page.
    await page.getByLabel('Execution id').fill(runA);
    await page.getByRole('button', { name: 'Compare' }).click();
    await page.getByRole('alert').filter({ hasText: 'same execution' }).waitFor();
    t.equal(new URL(page.url()).searchParams.get('b'), null, 'nowhere to go');
    await page.getByLabel('Execution id').fill(runB);
    await page.getByRole('button', { name: 'Compare' }).click();
    await page.waitForURL((u) => u.searchParams.get('b') === runB);
    t.pass('an id pasted opens the comparison');
  });

  await t.test('the comparison: divergence at the gateway, each side, a variable that differs, times', async (t) => {
    await page.goto(`${url}/compare?a=${runA}&b=${runB}`);
    const divergence = page.locator('.divergence');
    await divergence.waitFor();
    const said = (await divergence.textContent()) ?? '';
    t.match(said, /Their paths part at Big order\? \(exclusiveGateway, route\)/, 'the gateway called out');
    t.match(said, /Run A took “total > 100” to Big order\./, "A's branch");
    t.match(said, /Run B took “default” to Small order\./, "B's branch");

    t.match(
      await node(page, 'route').getAttribute('aria-label'),
      /paths part here/,
      'the gateway marked on the diagram',
    );
    t.match(await node(page, 'big').getAttribute('aria-label'), /reached by only run A/);
    t.match(await node(page, 'small').getAttribute('aria-label'), /reached by only run B/);
    t.match(await node(page, 'check').getAttribute('aria-label'), /reached by both runs/);
    t.match(await node(page, 'big').textContent(), /only run A/, 'said in words on the node, not by colour alone');
    t.ok(await node(page, 'big').locator('.mark-badge').isVisible(), 'and by its letter');
    t.equal(await page.locator('.dedge.cmp-edge-a').count(), 2, "A's own edges: into and out of its branch");
    t.equal(await page.locator('.dedge.cmp-edge-b').count(), 2, "B's own edges");

    const row = (id: string) => page.locator(`#cmp-row-${id}`);
    t.match(await row('big').textContent(), /only run A/);
    t.match(await row('small').textContent(), /only run B/);
    t.match(await row('big').locator('td').nth(2).textContent(), /not reached/, 'B did not reach it');
    const times = await page.locator('table.compare-nodes tbody tr').count();
    t.equal(times, 7, 'every node either reached, one row each');
    for (const id of ['prep', 'check']) {
      const cells = row(id).locator('td');
      t.match(await cells.nth(1).textContent(), /^\d+(\.\d+)? (ms|s)$/, `${id}: time in A`);
      t.match(await cells.nth(2).textContent(), /^\d+(\.\d+)? (ms|s)$/, `${id}: time in B`);
      t.match(await cells.nth(3).textContent(), /^(same|[+−]\d)/, `${id}: the difference`);
    }

    const atCheck = page.locator('#cmp-vars-check');
    await atCheck.waitFor();
    const sizeOnEntry = atCheck.locator('tr', { hasText: 'on entry' }).filter({ hasText: 'size' });
    t.match(await sizeOnEntry.textContent(), /size\s*on entry\s*"big"\s*"small"\s*differs/, 'size differs at Check');
    const discount = atCheck.locator('tr', { hasText: 'on entry' }).filter({ hasText: 'discount' });
    t.match(await discount.textContent(), /10.*not set.*only in A/, 'a variable only A set');
    t.match(await row('check').locator('td').nth(4).textContent(), /size/, "the node's row names what differs");
    t.match(await page.locator('#cmp-vars-start').textContent(), /total\s*on entry\s*500\s*5\s*differs/, 'the input');
    t.equal(await atCheck.locator('tr', { hasText: 'total' }).count(), 0, 'said where it first differs, not again');
    const final = page.locator('.compare-vars').last();
    t.match(await final.locator('tr', { hasText: 'total' }).textContent(), /500.*5.*differs/, 'the final variables');
    await screenshot(page, 'console-compare');
    t.same(await axeCheck(page), [], 'the comparison: no serious accessibility violation');
    await page.getByLabel(/Every difference at every node/).check();
    await atCheck.locator('tr', { hasText: 'total' }).first().waitFor();
    t.pass('every difference at every node, when asked');

    // A node chosen on the diagram: its row takes the focus.
    await node(page, 'small').click();
    await page.waitForURL((u) => u.searchParams.get('node') === 'small');
    await page.locator('#cmp-row-small[aria-current="true"]').waitFor();
    t.equal(await page.evaluate('document.activeElement?.id'), 'cmp-row-small', 'the row is focused');
    await page.keyboard.press('Escape');
    await page.waitForURL((u) => u.searchParams.get('node') === null);

    await page.getByRole('link', { name: 'Swap A and B' }).click();
    await page.waitForURL((u) => u.searchParams.get('a') === runB);
    await page.locator('.divergence').waitFor();
    t.match(await page.locator('.divergence').textContent(), /Run A took “default” to Small order\./, 'swapped');
  });

  await t.test('a run of another version compares by node id', async (t) => {
    t.equal((await api('POST', '/admin/flows', { source: ORDERS_V2, organization: 'acme' })).status, 200);
    const runC = await completed(ORDERS, { total: 700 }, '2');
    await page.goto(`${url}/compare?a=${runA}&b=${runC}`);
    const notice = page.locator('.notice', { hasText: 'compared by node id' });
    await notice.waitFor();
    t.match(await notice.textContent(), /Run A runs version 1, run B version 2.*\(audit\)/);
    await page.locator('.divergence').waitFor();
    t.match(await page.locator('.divergence').textContent(), /part at Big order \(setVariable, big\)/);
    t.match(await node(page, 'audit').getAttribute('aria-label'), /reached by only run B/, "B's own node drawn");
    await screenshot(page, 'console-compare-versions');
  });

  await t.test("another organization's run: the daemon's refusal, shown plainly", async (t) => {
    await page.goto(`${url}/compare?a=${runA}&b=${globexRun}`);
    const alert = page.getByRole('alert').filter({ hasText: 'Execution B' });
    await alert.waitFor();
    t.match(await alert.textContent(), /cannot be read: .*\(INSTANCE_NOT_FOUND\)/);
    t.equal(await page.locator('.divergence').count(), 0, 'nothing compared');
  });

  t.same(unexpected(problems), [], 'no page error, CSP violation or stray request');
  await context.close();
});
