import '../../setup/fixtures.js'; // fixtures under the OS temp dir (see there)
import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { join } from 'node:path';
import t from 'tap';
import type { TriggerHealth } from '../../../src/shared/api/triggers.js';
import { axeCheck, CHROMIUM_SKIP, collectConsoleErrors, launchBrowser, screenshot } from '../../helpers/browser.js';
import { callDaemon, startDaemon, wfxIn } from '../../helpers/cli.js';
import { signInWithKey, signInWithLink } from '../../helpers/console-session.js';
import { eventually } from '../../helpers/eventually.js';

/*
 * The console's triggers pages end to end: a real daemon, Debian's Chromium. Trigger health with
 * a schedule's next fire times and the reasons of triggers that do not fire (a webhook trigger
 * whose registration is gone, an email connection that cannot log in); a webhook delivery that
 * started nothing, read in the delivery log with its headers and body; the flow published, then
 * the delivery redelivered from the page, starting a run linked from it. A viewer sees the health,
 * not the registrations. Every screen passes the accessibility check.
 */

const flow = (name: string, triggers: string) => `processId: ${randomUUID()}
name: ${name}
triggers:
${triggers}
nodes:
  start: { type: startEvent, next: done }
  done: { type: endEvent }
`;

const BREAKS = randomUUID();
/** A flow that fails at its gateway (no branch matches), and one its failures start. */
const BREAKS_FLOW = `processId: ${BREAKS}
name: Breaks
nodes:
  start: { type: startEvent, next: route }
  route: { type: exclusiveGateway, branches: [{ condition: "\${false}", next: done }] }
  done: { type: endEvent }
`;
const ON_BREAK_FLOW = flow('On break', `  - { type: execution, processId: ${BREAKS}, states: [FAILED] }`);

/** A loopback port nothing listens on (its server closed at once). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

t.test('the triggers pages, end to end', { skip: CHROMIUM_SKIP }, async (t) => {
  const cwd = t.testdir({});
  const { url } = await startDaemon(t, { cwd });
  const admin = (await readFile(join(cwd, '.wfx', 'bootstrap.key'), 'utf8')).trim();
  const api = (method: string, path: string, body?: object) => callDaemon(url, admin, method, path, body);
  const ok = async (what: string, res: Promise<{ status: number; body: Record<string, unknown> }>) => {
    const r = await res;
    t.ok(r.status < 300, `${what}: ${r.status} ${JSON.stringify(r.body).slice(0, 200)}`);
    return r.body;
  };
  await ok('webhook gh', api('POST', '/admin/webhooks', { name: 'gh', provider: 'GITHUB', secret: 'gh-secret-1' }));
  await ok('webhook gone', api('POST', '/admin/webhooks', { name: 'gone', provider: 'CUSTOM', authType: 'NONE' }));
  await ok(
    'email connection',
    api('POST', '/admin/email-connections', {
      name: 'support',
      host: '127.0.0.1',
      port: await closedPort(),
      security: 'NONE',
      user: 'support',
      password: 'not-a-real-one',
    }),
  );
  await ok(
    'nightly',
    api('POST', '/admin/flows', { source: flow('Nightly', '  - { type: schedule, cron: "0 2 * * *" }') }),
  );
  await ok(
    'by hand',
    api('POST', '/admin/flows', { source: flow('By hand', '  - { type: on-demand, description: month end }') }),
  );
  await ok('orphan', api('POST', '/admin/flows', { source: flow('Orphan', '  - { type: webhook, webhook: gone }') }));
  await ok(
    'support',
    api('POST', '/admin/flows', { source: flow('Support', '  - { type: email, connection: support }') }),
  );
  await ok('delete gone', api('DELETE', '/admin/webhooks/gone'));
  await ok('breaks', api('POST', '/admin/flows', { source: BREAKS_FLOW }));
  const onBreak = await ok('on break', api('POST', '/admin/flows', { source: ON_BREAK_FLOW }));

  // A delivery before any flow takes it: verified, kept, started nothing.
  const payload = { ref: 'refs/heads/main', commits: 3 };
  const body = Buffer.from(JSON.stringify(payload));
  const signed = await ok(
    'sign',
    api('POST', '/admin/webhooks/gh/sign', { body: body.toString('base64'), eventType: 'push' }),
  );
  const send = await fetch(signed.url as string, {
    method: 'POST',
    headers: { ...(signed.headers as Record<string, string>), 'content-type': 'application/json' },
    body,
  });
  const deliveryId = ((await send.json()) as { deliveryId: string }).deliveryId;
  const first = await eventually('the delivery processed', async () => {
    const log = await api('GET', '/admin/webhooks/gh/deliveries');
    const d = (log.body.items as Array<Record<string, unknown>>).find((x) => x.deliveryId === deliveryId);
    return d && !d.pending && d;
  });
  t.match(first, { signatureOk: true, startedInstanceIds: [], reason: /no flow active/ }, 'it started nothing');
  await ok('on push', api('POST', '/admin/flows', { source: flow('On push', '  - { type: webhook, webhook: gh }') }));

  const health = await eventually('the email trigger failing with the server error', async () => {
    const items = (await api('GET', '/admin/triggers')).body.items as TriggerHealth[];
    const email = items.find((x) => x.type === 'email');
    return email?.state === 'failing' && email.lastError !== 'connecting' && items;
  });
  const nightly = health.find((x) => x.flowName === 'Nightly' && x.type === 'schedule') as Extract<
    TriggerHealth,
    { type: 'schedule' }
  >;
  const cron = await wfxIn(
    ['cron', 'next', '0 2 * * *', '--from', new Date(Date.parse(nightly.nextFire!) - 1).toISOString(), '--count', '5'],
    { cwd },
  );
  t.same(
    nightly.nextFires,
    cron.stdout.trim().split('\n'),
    "the next fire times are the scheduler's, as wfx cron next says",
  );

  const browser = await launchBrowser(t);
  const context = await browser.newContext();
  const page = await context.newPage();
  const problems = collectConsoleErrors(page);
  await signInWithLink(page, url, cwd);

  await t.test('trigger health: next fire times, and why a trigger does not fire', async (t) => {
    await page.getByRole('link', { name: 'Triggers' }).click();
    await page.waitForURL(`${url}/triggers`);
    const fires = page.getByRole('list', { name: 'Next fire times of Nightly' });
    await fires.waitFor();
    const times = await Promise.all((await fires.locator('time').all()).map((l) => l.getAttribute('datetime')));
    t.same(times, nightly.nextFires, 'a schedule shows its next five fire times');
    const orphan = page.getByRole('row', { name: /Orphan/ });
    t.match(
      await orphan.textContent(),
      /disabled.*no webhook registration named "gone"/,
      'a disabled trigger says why',
    );
    const support = page.getByRole('row', { name: /Support/ });
    t.match(await support.textContent(), /failing/, 'the email trigger is failing');
    t.match(await page.getByRole('row', { name: /By hand/ }).textContent(), /On demand: month end/);
    const mailbox = page.getByRole('row', { name: /^support/ });
    await mailbox.waitFor();
    t.match(await mailbox.textContent(), /not connected/, "the email connection's state");
    await screenshot(page, 'console-triggers');
    t.same(await axeCheck(page), [], 'the triggers page: no serious accessibility violation');

    const row = page.getByRole('row', { name: /Nightly/ });
    await row.getByRole('button', { name: 'Pause the schedules of Nightly in PRODUCTION' }).click();
    await page.getByText('The schedules of Nightly in PRODUCTION are paused.').waitFor();
    await row.getByRole('button', { name: 'Resume the schedules of Nightly in PRODUCTION' }).waitFor();
    t.match(await row.textContent(), /disabled.*Paused: wfx schedules resume/, 'a paused schedule says so');
    t.equal(await fires.count(), 0, 'and lists no fire times');
    const paused = (await api('GET', '/admin/triggers')).body.items as TriggerHealth[];
    t.match(
      paused.find((x) => x.flowName === 'Nightly'),
      { state: 'disabled', nextFire: null },
      'the daemon paused it',
    );
    await row.getByRole('button', { name: 'Resume the schedules of Nightly in PRODUCTION' }).click();
    await page.getByText('The schedules of Nightly in PRODUCTION fire again.').waitFor();
    await fires.waitFor();
    t.match(await row.textContent(), /active/, 'resumed, it fires again');
  });

  await t.test('the delivery log: headers and body, then Redeliver starts a run', async (t) => {
    await page.getByRole('link', { name: 'gh', exact: true }).click();
    await page.waitForURL(`${url}/triggers/webhooks/gh`);
    await page.getByRole('button', { name: new RegExp(`Show delivery ${deliveryId}`) }).click();
    const panel = page.locator('.delivery-panel');
    await panel.getByRole('heading', { name: 'Headers' }).waitFor();
    t.match(await panel.locator('.headers').textContent(), /x-github-event\s*push/, 'its headers');
    t.notMatch(await panel.locator('.headers').textContent(), /x-hub-signature/, 'never the signature');
    t.same(JSON.parse((await panel.getByLabel('Body of the delivery').textContent()) ?? ''), payload, 'its body');
    t.match(await panel.textContent(), /no flow active/, 'why it started nothing');
    await screenshot(page, 'console-webhook-delivery');
    t.same(await axeCheck(page), [], 'the delivery log: no serious accessibility violation');

    await panel.getByRole('button', { name: 'Redeliver' }).click();
    const dialog = page.getByRole('dialog', { name: 'Redeliver this delivery?' });
    await dialog.waitFor();
    t.same(await axeCheck(page), [], 'the redelivery question: no serious accessibility violation');
    await dialog.getByRole('button', { name: 'Redeliver' }).click();
    const status = panel.getByRole('status');
    await status.getByText(/Redelivered as .*: started/).waitFor();
    const runLink = status.getByRole('link').first();
    const runId = (await runLink.textContent()) ?? '';
    t.match(runId, /^[0-9a-f-]{36}$/, 'the new execution is linked');
    await page.locator('table.deliveries tr', { hasText: runId }).first().waitFor();
    t.pass('the log shows the redelivery and what it started');
    await screenshot(page, 'console-webhook-redelivered');
    await runLink.click();
    await page.waitForURL(`${url}/executions/${runId}`);
    await page.locator('.page-head .state-completed').first().waitFor();
    t.pass('the redelivered webhook started a run, and it completed');
    const run = await api('GET', `/process/instance/${runId}`);
    t.match(run.body.data, { webhookPayload: payload, webhookEventType: 'push' }, 'with the payload kept');
  });

  await t.test("an execution a failure started links to the failed execution's page", async (t) => {
    const broken = (await ok('start breaks', api('POST', '/process/start', { processId: BREAKS }))) as {
      processInstanceId: string;
    };
    const started = await eventually('the failure starts On break', async () => {
      const list = await api('GET', `/process/instances?processId=${onBreak.processId as string}`);
      return (list.body.items as Array<{ processInstanceId: string }>)[0];
    });
    await page.goto(`${url}/executions/${started.processInstanceId}`);
    const link = page.getByRole('link', { name: /\(Breaks, FAILED\)$/ });
    await link.waitFor();
    t.equal(
      await link.textContent(),
      `…${broken.processInstanceId.slice(-12)} (Breaks, FAILED)`,
      "the failed execution's id, flow and end state",
    );
    t.match(await page.locator('dl.facts').textContent(), /Triggered by…/, 'under "Triggered by"');
    await screenshot(page, 'console-execution-triggered-by');
    t.same(await axeCheck(page), [], 'a triggered execution: no serious accessibility violation');
    await link.click();
    await page.waitForURL(`${url}/executions/${broken.processInstanceId}`);
    await page.locator('.page-head .state-failed').first().waitFor();
    t.pass('the link leads to the failed execution');
  });

  await t.test('a viewer sees trigger health, not the registrations', async (t) => {
    const key = await ok(
      'viewer key',
      api('POST', '/admin/api-keys', { name: 'v', organization: 'default', role: 'viewer' }),
    );
    const viewer = await (await browser.newContext()).newPage();
    const viewerProblems = collectConsoleErrors(viewer);
    await viewer.goto(`${url}/triggers`);
    await viewer.waitForURL((u) => u.pathname === '/sign-in');
    await signInWithKey(viewer, key.apiKey as string);
    await viewer.waitForURL(`${url}/triggers`);
    await viewer.getByRole('list', { name: 'Next fire times of Nightly' }).waitFor();
    t.equal(await viewer.getByRole('heading', { name: 'Webhook registrations' }).count(), 0, 'no registrations');
    t.equal(await viewer.getByRole('heading', { name: 'Email connections' }).count(), 0, 'no mailboxes');
    const refused = await callDaemon(
      url,
      key.apiKey as string,
      'POST',
      `/admin/webhooks/gh/deliveries/${deliveryId}/redeliver`,
    );
    t.equal(refused.status, 403, 'the daemon refuses a redelivery anyway');
    t.same(await axeCheck(viewer), [], "a viewer's triggers page: no serious accessibility violation");
    t.same(
      viewerProblems.filter((p) => !/status of 401/.test(p.text)),
      [],
      'no console errors',
    );
  });

  t.same(problems, [], 'no console errors or failed requests on the admin page');
});
