import '../../setup/fixtures.js'; // fixtures under the OS temp dir (see there)
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import t from 'tap';
import { axeCheck, CHROMIUM_SKIP, collectConsoleErrors, launchBrowser, screenshot } from '../../helpers/browser.js';
import { callDaemon, startDaemon, wfxIn } from '../../helpers/cli.js';
import { signInWithKey } from '../../helpers/console-session.js';

/*
 * The console's flow page, end to end, on a real daemon in Debian's Chromium. A version's test
 * coverage: `wfx test --send-coverage` sends each flow's coverage, which the daemon keeps for the
 * version published with the definition the tests ran (and refuses the rest: another definition,
 * another organization's flow, a viewer); the page draws it on the diagram (nodes not reached,
 * branches not taken, a loop's body) and lists what no case took. Promotion: a developer
 * promotes development's version to production from the page; a viewer is offered none.
 */

const REFUNDS = '2b7d6c1e-5f4a-4e3b-9c2d-1a0b9c8d7e6f';
const PROMOTED = '3c8e7d2f-6a5b-4f4c-8d3e-2b1c0d9e8f7a';

/** A gateway (a branch and a default), then a loop whose body has an ifElse. */
const REFUNDS_FLOW = `processId: ${REFUNDS}
name: Refunds
nodes:
  start: { type: startEvent, next: size }
  size:
    type: exclusiveGateway
    name: How big?
    branches:
      - { condition: "\${amount > 100}", next: review }
    default: auto
  review: { type: setVariable, name: Manual review, variables: { route: manual }, next: lines }
  auto: { type: setVariable, name: Refund at once, variables: { route: auto }, next: lines }
  lines:
    type: loopNode
    name: Each line
    collection: "{items}"
    nodes:
      s: { type: startEvent, next: check }
      check: { type: ifElse, name: Damaged?, condition: "\${item.damaged}", then: keep, else: back }
      keep: { type: setVariable, name: Keep it, variables: { kept: true }, next: e }
      back: { type: setVariable, name: Send it back, variables: { kept: false }, next: e }
      e: { type: endEvent }
    next: done
  done: { type: endEvent, name: Done }
`;

/** Small refunds only, with a damaged line: the big branch, the loop skipped and the body's else are left. */
const REFUNDS_TESTS = `flow: refunds.yaml
cases:
  - name: a small refund with a damaged line
    start: { data: { amount: 20, items: [{ damaged: true }] } }
    expect: { state: COMPLETED, variables: { route: auto, kept: true } }
`;

t.test('wfx test --send-coverage: kept by the daemon for the version the tests ran', async (t) => {
  const cwd = t.testdir({ 'refunds.yaml': REFUNDS_FLOW, 'refunds.test.yaml': REFUNDS_TESTS });
  const { url } = await startDaemon(t, { cwd });
  const admin = (await readFile(join(cwd, '.wfx', 'bootstrap.key'), 'utf8')).trim();
  const api = (method: string, path: string, body?: object, key = admin) => callDaemon(url, key, method, path, body);
  const coverageOf = `/admin/flows/${REFUNDS}/coverage`;

  // Not published yet: nothing to draw it on.
  const early = await wfxIn(['test', '--send-coverage'], { cwd });
  t.equal(early.code, 1, 'every case passed, but the coverage was not kept');
  t.match(early.stderr, `coverage of refunds.yaml not sent: PROCESS_NOT_FOUND: no flow ${REFUNDS}`);

  t.equal((await api('POST', '/admin/flows', { source: REFUNDS_FLOW, organization: 'acme' })).status, 200);
  const sent = await wfxIn(['test', '--send-coverage'], { cwd });
  t.equal(sent.code, 0, sent.stderr);
  t.match(sent.stdout, /refunds\.yaml: 70\.6% \(nodes 9\/11, branches 3\/6\)/, 'the coverage printed, as --coverage');
  t.match(sent.stderr, `coverage of refunds.yaml sent: drawn on version 1 of ${REFUNDS} in the console`);
  const kept = await api('GET', coverageOf);
  t.equal(kept.status, 200);
  const [view, ...older] = kept.body.items as Array<Record<string, unknown>>;
  t.same(older, []);
  t.match(view, { processId: REFUNDS, version: '1', file: 'refunds.yaml', cases: { passed: 1, failed: 0 } });
  t.same(
    (view!.covered as Array<{ node: string; part: string }>).map((c) => `${c.node} ${c.part}`),
    [
      'start node',
      'size node',
      'size default',
      'auto node',
      'lines node',
      'lines loop entered',
      'lines/s node',
      'lines/check node',
      'lines/check then',
      'lines/keep node',
      'lines/e node',
      'done node',
    ],
  );

  const json = JSON.parse((await wfxIn(['test', '--coverage', '--reporter', 'json'], { cwd })).stdout) as {
    coverage: Array<{ hash: string }>;
  };
  const hash = json.coverage[0]!.hash;

  // The flow file changes and is not published again: its tests ran a definition no version has.
  await writeFile(join(cwd, 'refunds.yaml'), REFUNDS_FLOW.replace('name: Refunds', 'name: Refunds, changed'));
  const changed = await wfxIn(['test', '--send-coverage'], { cwd });
  t.equal(changed.code, 1);
  t.match(
    changed.stderr,
    /coverage of refunds\.yaml not sent: VERSION_NOT_FOUND: no version of flow .* publish it first/,
  );
  t.equal(((await api('GET', coverageOf)).body.items as unknown[]).length, 1, 'the kept coverage stays');

  // No daemon to send to: exit 5, as any command that cannot reach one.
  const nowhere = await wfxIn(['test', '--send-coverage', '--url', 'http://127.0.0.1:9'], { cwd });
  t.equal(nowhere.code, 5, nowhere.stderr);
  t.match(nowhere.stderr, /coverage of refunds\.yaml not sent: DAEMON_UNREACHABLE/);

  await t.test('the API refuses what it cannot draw, and whom it must', async (t) => {
    const body = { hash, file: 'refunds.yaml', cases: { passed: 1, failed: 0 }, covered: [] };
    const other = await api('POST', coverageOf, { ...body, hash: 'a'.repeat(64) });
    t.equal(other.status, 404);
    t.equal(other.body.error, 'VERSION_NOT_FOUND');
    const malformed = await api('POST', coverageOf, { ...body, hash: 'not a hash' });
    t.equal(malformed.status, 400);
    t.equal(malformed.body.error, 'VALIDATION_ERROR');
    const unknown = await api('POST', coverageOf, { ...body, covered: [{ node: 'lines/nowhere', part: 'node' }] });
    t.equal(unknown.status, 400, 'a part the version does not have');
    t.equal(unknown.body.error, 'VALIDATION_ERROR');
    t.match(unknown.body.message, 'version 1 of flow');
    t.equal(((await api('GET', coverageOf)).body.items as unknown[]).length, 1, 'nothing refused was kept');

    const globex = (await api('POST', '/admin/api-keys', { name: 'globex dev', organization: 'globex', role: 'admin' }))
      .body.apiKey as string;
    const hidden = await api('GET', coverageOf, undefined, globex);
    t.equal(hidden.status, 404, "another organization's flow is not there");
    t.equal(hidden.body.error, 'PROCESS_NOT_FOUND');
    t.equal((await api('POST', coverageOf, body, globex)).body.error, 'PROCESS_NOT_FOUND');

    const viewer = (await api('POST', '/admin/api-keys', { name: 'acme viewer', organization: 'acme', role: 'viewer' }))
      .body.apiKey as string;
    t.equal((await api('GET', coverageOf, undefined, viewer)).status, 200, 'a viewer reads it');
    const refused = await api('POST', coverageOf, body, viewer);
    t.equal(refused.status, 403, 'a viewer sends none');
    t.equal(refused.body.error, 'FORBIDDEN');
    t.same((await api('GET', `${coverageOf}?version=2`)).body.items, [], 'none for a version not measured');
  });
});

t.test('the flow page, in a browser', { skip: CHROMIUM_SKIP }, async (t) => {
  // One daemon and one browser for both tests, each on a flow of its own, each page in a
  // context of its own; the browser starts while the daemon does.
  const cwd = t.testdir({ 'refunds.yaml': REFUNDS_FLOW, 'refunds.test.yaml': REFUNDS_TESTS });
  const [{ url }, browser] = await Promise.all([startDaemon(t, { cwd }), launchBrowser(t)]);
  const admin = (await readFile(join(cwd, '.wfx', 'bootstrap.key'), 'utf8')).trim();
  const api = (method: string, path: string, body?: object) => callDaemon(url, admin, method, path, body);

  await t.test("the flow page draws the version's last test coverage", async (t) => {
    t.equal((await api('POST', '/admin/flows', { source: REFUNDS_FLOW, organization: 'acme' })).status, 200);
    const viewer = (await api('POST', '/admin/api-keys', { name: 'acme viewer', organization: 'acme', role: 'viewer' }))
      .body.apiKey as string;

    const page = await (await browser.newContext({ viewport: { width: 1440, height: 900 } })).newPage();
    const problems = collectConsoleErrors(page);
    await page.goto(`${url}/sign-in`);
    await signInWithKey(page, viewer);
    await page.waitForURL(`${url}/executions`);
    const node = (path: string) => page.locator(`[data-node-path="${path}"]`).first();

    await page.goto(`${url}/flows/${REFUNDS}`);
    const panel = page.getByRole('region', { name: 'Test coverage' });
    await panel.getByText('No test run of version 1 has been sent.').waitFor();
    t.equal(await page.locator('.dnode[class*="cov-"]').count(), 0, 'nothing drawn before a run is sent');

    t.equal((await wfxIn(['test', '--send-coverage'], { cwd })).code, 0);
    await page.reload();
    await panel.getByText('70.6%').waitFor();
    t.match(await panel.textContent(), 'of version 1: nodes 9/11 reached, branches 3/6 taken.');
    t.match(await panel.textContent(), '1 passed, 0 failed, from the tests of refunds.yaml');

    t.match(await node('review').getAttribute('class'), /\bcov-missed\b/);
    t.match(await node('review').getAttribute('aria-label'), /^Manual review, not reached, .*not reached by the tests/);
    t.match(await node('size').getAttribute('class'), /\bcov-partial\b/);
    t.match(await node('size').getAttribute('aria-label'), /1 of 2 branches.*not taken: branch 1/);
    t.match(await node('auto').getAttribute('class'), /\bcov-reached\b/);
    t.ok((await page.locator('.dedge.cov-edge-missed').count()) > 0, 'the branch not taken is drawn so');
    t.ok((await page.locator('.dedge.cov-edge-taken').count()) > 0, 'the path taken is drawn so');
    await page.getByText('Test coverage:').waitFor(); // the diagram's legend says what the marks mean

    await t.test("what no case took, listed: one inside the loop's body opens it", async (t) => {
      const missed = panel.getByRole('listitem');
      t.same(await missed.allTextContents(), [
        'How big?: branch 1 → Manual review not taken',
        'Manual review not reached',
        'Each line: loop skipped not taken',
        'Damaged?: else → Send it back not taken',
        'Send it back not reached',
      ]);
      await panel.getByRole('button', { name: 'Send it back not reached' }).click();
      await node('lines.back').waitFor();
      t.match(await node('lines.back').getAttribute('class'), /\bcov-missed\b/, "the body's nodes are drawn too");
      t.match(await node('lines.check').getAttribute('class'), /\bcov-partial\b/);
      t.equal(await node('lines.back').getAttribute('aria-pressed'), 'true', 'and the node is opened in the panel');
    });

    t.same(await axeCheck(page), [], 'no accessibility violation with the coverage drawn');
    await screenshot(page, 'flow-coverage');

    await t.test('it can be hidden, and a new run replaces it', async (t) => {
      await panel.getByLabel('Draw it on the diagram').uncheck();
      t.equal(await page.locator('.dnode[class*="cov-"]').count(), 0);
      await writeFile(
        join(cwd, 'refunds.test.yaml'),
        `${REFUNDS_TESTS}  - name: a big refund, nothing to check
    start: { data: { amount: 500, items: [] } }
    expect: { state: COMPLETED, variables: { route: manual } }
`,
      );
      t.equal((await wfxIn(['test', '--send-coverage'], { cwd })).code, 0);
      await page.reload();
      await panel.getByText('2 passed, 0 failed', { exact: false }).waitFor();
      t.match(await panel.textContent(), 'nodes 10/11 reached, branches 5/6 taken');
      t.match(await node('review').getAttribute('class'), /\bcov-reached\b/);
    });

    t.same(problems, [], 'no console error on the page');
    await page.context().close();
  });

  await t.test("the flow page promotes development's version to production", async (t) => {
    // A flow of its own: its versions and what the page shows of them are this test's alone.
    const flow = REFUNDS_FLOW.replace(REFUNDS, PROMOTED);
    const publish = (source: string, environment: string) =>
      api('POST', '/admin/flows', { source, organization: 'acme', environment });
    t.equal((await publish(flow, 'PRODUCTION')).status, 200);
    t.equal((await publish(flow.replace('name: Done', 'name: All done'), 'DEVELOPMENT')).status, 200);
    const key = async (role: string) =>
      (await api('POST', '/admin/api-keys', { name: role, organization: 'acme', role })).body.apiKey as string;
    const developer = await key('developer');
    const viewer = await key('viewer');

    const signedIn = async (apiKey: string) => {
      const page = await (await browser.newContext()).newPage();
      await page.goto(`${url}/sign-in`);
      await signInWithKey(page, apiKey);
      await page.waitForURL(`${url}/executions`);
      return page;
    };

    const page = await signedIn(developer);
    const problems = collectConsoleErrors(page);
    await page.goto(`${url}/flows/${PROMOTED}`);
    const versions = page.getByRole('region', { name: 'Versions' });
    await versions.getByRole('button', { name: 'Promote version 2 to production' }).click();
    const dialog = page.getByRole('dialog', { name: 'Promote version 2 to production?' });
    t.match(await dialog.textContent(), 'New executions in production will run version 2 instead of version 1');
    await dialog.getByRole('button', { name: 'Keep production as it is' }).click();
    t.same((await api('GET', `/admin/flows/${PROMOTED}`)).body.active, { PRODUCTION: '1', DEVELOPMENT: '2' }, 'no');

    await versions.getByRole('button', { name: 'Promote version 2 to production' }).click();
    await dialog.getByRole('button', { name: 'Promote' }).click();
    await versions.getByText('Production runs version 2 now.').waitFor();
    await versions.getByText('Production runs version 2, as development does.').waitFor();
    t.same((await api('GET', `/admin/flows/${PROMOTED}`)).body.active, { PRODUCTION: '2', DEVELOPMENT: '2' });
    t.equal(await versions.getByText('active in production').count(), 1, 'the list says where each runs');
    t.same(await axeCheck(page), [], 'no accessibility violation');
    t.same(problems, [], 'no console error on the page');

    const looking = await signedIn(viewer);
    await looking.goto(`${url}/flows/${PROMOTED}`);
    await looking.getByRole('region', { name: 'Versions' }).getByText('v2').waitFor();
    t.equal(await looking.getByRole('button', { name: /Promote/ }).count(), 0, 'a viewer is offered no promotion');
  });
});
