import '../../setup/fixtures.js'; // fixtures under the OS temp dir (see there)
import { createHash } from 'node:crypto';
import { once } from 'node:events';
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
import { callDaemon, spawnWfx, startDaemon } from '../../helpers/cli.js';
import { signInWithKey, signInWithLink } from '../../helpers/console-session.js';
import { eventually } from '../../helpers/eventually.js';

/*
 * Tasks in the console end to end: a real daemon, Debian's Chromium. Each of the nine input
 * types answered through its form and read by the flow after it (a file uploaded and its name
 * and size read back), a field error from the daemon's own answer, CANCEL taking the cancel
 * path, an answer given in the browser while `wfx logs --follow` watches, a lost race, the deep
 * link, the inbox live and filtered, a user task answered from its execution's page, a viewer
 * offered no buttons, and an accessibility check of the inbox and of a form.
 */

/** A flow that asks with `inputType` (and `extra` lines of the node), then keeps what it got in `got`. */
function inputFlow(id: string, inputType: string, extra = '', keep = 'return { got: vars.inputValue };'): string {
  return `processId: ${id}
name: Ask ${inputType}
nodes:
  start: { type: startEvent, next: ask }
  ask:
    type: inputNode
    name: Ask for ${inputType}
    formTitle: "${inputType} for order {order}"
    inputType: ${inputType}
${extra}    next: keep
    errorFlow: cancelled
  keep: { type: scriptTask, name: Keep it, script: ${JSON.stringify(keep)}, next: done }
  cancelled: { type: setVariable, name: Cancelled, variables: { cancelled: true }, next: done }
  done: { type: endEvent }
`;
}

const id = (n: number) => `7c1e2f3a-4b5c-4d6e-8f70-${String(n).padStart(12, '0')}`;

/** The nine input types: their flow, how the page answers, what the flow must have got. */
const CASES: ReadonlyArray<{
  readonly type: string;
  readonly extra?: string;
  readonly keep?: string;
  readonly answer: (page: Page) => Promise<void>;
  readonly got: unknown;
}> = [
  { type: 'textbox', answer: (p) => p.getByLabel('Answer').fill('hello there'), got: 'hello there' },
  { type: 'textarea', answer: (p) => p.getByLabel('Answer').fill('line one\nline two'), got: 'line one\nline two' },
  { type: 'number', answer: (p) => p.getByLabel('Answer').fill('42.5'), got: 42.5 },
  { type: 'date', answer: (p) => p.getByLabel('Answer').fill('2026-11-21'), got: '2026-11-21' },
  {
    type: 'select',
    extra: '    options: [{ value: 1, label: One }, { value: 2, label: Two }]\n',
    answer: async (p) => void (await p.getByLabel('Answer').selectOption({ label: 'Two' })),
    got: 2,
  },
  {
    type: 'checkbox',
    extra: '    options: [red, green, blue]\n',
    answer: async (p) => {
      await p.getByLabel('red').check();
      await p.getByLabel('blue').check();
    },
    got: ['red', 'blue'],
  },
  {
    type: 'radio',
    extra: '    options: [small, large]\n',
    answer: (p) => p.getByLabel('large').check(),
    got: 'large',
  },
  {
    type: 'file',
    // The flow reads the file it was given: its name and size.
    keep: 'return { got: vars.inputValue.name + ":" + vars.inputValue.bytes, sha: vars.inputValue.sha256 };',
    answer: async (p) => {
      await p.getByLabel('Answer').setInputFiles({ name: 'invoice.txt', mimeType: 'text/plain', buffer: FILE });
      await p.getByText('✓ uploaded invoice.txt').waitFor();
    },
    got: `invoice.txt:${'x'.repeat(3000).length + 6}`,
  },
  {
    type: 'form',
    extra: `    fields:
      - { name: approve, type: boolean, required: true, label: Approve it }
      - { name: size, type: select, options: [S, M, L] }
      - { name: count, type: number }
      - { name: when, type: date }
      - { name: tags, type: array }
      - { name: note, type: text, default: "for {order}" }
`,
    keep: 'return { got: vars.formData };',
    answer: async (p) => {
      await p
        .getByRole('group', { name: /Approve it/ })
        .getByLabel('Yes')
        .check();
      await p.getByLabel('size').selectOption('M');
      await p.getByLabel('count').fill('3');
      await p.getByLabel('when').fill('2026-12-24');
      await p.getByLabel('tags').fill('urgent\nbig');
    },
    // note: its default, resolved when the node was reached, sent as the form started with it.
    got: { approve: true, size: 'M', count: 3, when: '2026-12-24', tags: ['urgent', 'big'], note: 'for order-form' },
  },
];
const FILE = Buffer.from(`hello ${'x'.repeat(3000)}`);

const REVIEW = '7d1e2f3a-4b5c-4d6e-8f70-8192a3b4c5d6';
const REVIEW_FLOW = `processId: ${REVIEW}
name: Review
nodes:
  start: { type: startEvent, next: review }
  review:
    type: userTask
    name: Review the contract
    assignee: ann
    fields: [{ name: ok, type: boolean, required: true }]
    next: done
  remind: { type: boundaryEvent, attachedTo: review, event: timer, duration: 1h, cancelActivity: false, next: noted }
  noted: { type: endEvent }
  done: { type: endEvent }
`;

/** The problems a test allows: the refusals it asked for (a 401 before sign-in, a 409 it lost, a 422 it provoked). */
function unexpected(problems: readonly PageProblem[]): PageProblem[] {
  return problems.filter((p) => !(p.kind === 'console' && /status of (401|409|422)/.test(p.text)));
}

t.test('tasks in the console, end to end', { skip: CHROMIUM_SKIP }, async (t) => {
  const cwd = t.testdir({});
  // The browser starts while the daemon does.
  const [{ url }, browser] = await Promise.all([startDaemon(t, { cwd }), launchBrowser(t)]);
  const admin = (await readFile(join(cwd, '.wfx', 'bootstrap.key'), 'utf8')).trim();
  const api = (method: string, path: string, body?: object) => callDaemon(url, admin, method, path, body);
  // Flows of their own, published five side by side: fewer than the flows of an organization
  // the daemon checks at once (8; more are refused until those are done).
  const sources = [...CASES.map((c, i) => inputFlow(id(i), c.type, c.extra, c.keep)), REVIEW_FLOW];
  for (let i = 0; i < sources.length; i += 5)
    for (const { status } of await Promise.all(
      sources.slice(i, i + 5).map((source) => api('POST', '/admin/flows', { source })),
    ))
      t.equal(status, 200);
  const start = async (processId: string, order: string) =>
    (await api('POST', '/process/start', { processId, correlationKey: order, data: { order } })).body
      .processInstanceId as string;
  const ended = (runId: string) =>
    eventually(`execution ${runId} ends`, async () => {
      const r = await api('GET', `/process/instance/${runId}`);
      return r.body.state !== 'RUNNING' && r.body;
    });

  const context = await browser.newContext();
  const page = await context.newPage();
  const problems = collectConsoleErrors(page);
  await signInWithLink(page, url, cwd);

  await t.test('the inbox lists the waiting tasks live, filters them, and counts down', async (t) => {
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Tasks' }).click();
    await page.waitForURL(`${url}/tasks`);
    await page.getByText('No task waits for anyone').waitFor();
    const review = await start(REVIEW, 'contract-1');
    const row = page.locator('table.tasks tbody tr', { hasText: 'Review the contract' });
    await row.waitFor();
    t.pass('a task that began waiting appeared without a reload');
    t.match(await row.textContent(), /ann/, 'its assignee');
    t.match(
      await row.locator('.countdown').textContent(),
      /^in (59 min|1 h 0 min)/,
      'due when the boundary timer fires',
    );
    const text = await start(id(0), 'order-1');
    await page.locator('table.tasks tbody tr', { hasText: 'textbox for order order-1' }).waitFor();
    await screenshot(page, 'console-tasks');
    t.same(await axeCheck(page), [], 'the inbox: no serious accessibility violation');

    await page.getByLabel('Title').fill('ORDER-1');
    await page.getByRole('button', { name: 'Apply' }).click();
    await page.waitForURL(`${url}/tasks?q=ORDER-1`);
    await page.locator('table.tasks tbody tr').first().waitFor();
    t.equal(await page.locator('table.tasks tbody tr').count(), 1, 'the title filter keeps one');
    await page.getByRole('button', { name: 'Clear' }).click();
    await page.getByLabel('Flow').selectOption({ label: 'Review' });
    await page.waitForURL(`${url}/tasks?processId=${REVIEW}`);
    await page.locator('table.tasks tbody tr', { hasText: 'textbox' }).waitFor({ state: 'detached' });
    await page.locator('table.tasks tbody tr', { hasText: 'Review the contract' }).waitFor();
    t.equal(await page.locator('table.tasks tbody tr').count(), 1, 'the flow filter keeps its one');
    await page.getByLabel('Waiting').selectOption('1h');
    await page.getByText('No task waits for anyone among these').waitFor();
    t.pass('none has waited an hour');
    await page.getByRole('button', { name: 'Clear' }).click();

    // A task answered elsewhere leaves the inbox, live.
    t.equal(
      (await api('POST', '/process/task', { processInstanceId: text, nodeId: 'ask', action: 'CANCEL' })).status,
      200,
    );
    await page.locator('table.tasks tbody tr', { hasText: 'order-1' }).waitFor({ state: 'detached' });
    t.pass('an answered task left the list without a reload');
    t.equal(
      (await api('POST', '/process/task', { processInstanceId: review, nodeId: 'review', action: 'CANCEL' })).status,
      200,
    );
  });

  await t.test('each of the nine input types answered through its form', async (t) => {
    for (const [i, c] of CASES.entries()) {
      const runId = await start(id(i), `order-${c.type}`);
      // From the inbox: its row's link opens the form beside the list.
      await page.goto(`${url}/tasks`);
      await page.getByRole('link', { name: `${c.type} for order order-${c.type}` }).click();
      await page.waitForURL(`${url}/tasks/${runId}/ask`);
      const form = page.locator('form.task-form');
      await form.getByRole('heading', { name: `${c.type} for order order-${c.type}` }).waitFor();
      if (c.type === 'form') {
        await form.getByRole('button', { name: 'Complete' }).click();
        await page.locator('#task-approve-error').waitFor();
        t.match(await page.locator('#task-approve-error').textContent(), /required/, 'checked in the page first');
        await screenshot(page, 'console-task-form-required');
        t.same(await axeCheck(page), [], 'a form with its problems: no serious accessibility violation');
      }
      await c.answer(page);
      await form.getByRole('button', { name: 'Complete' }).click();
      await page.getByText('✓ Answered').waitFor();
      const done = (await ended(runId)) as { state: string; data: Record<string, unknown> };
      t.equal(done.state, 'COMPLETED', `${c.type}: the execution went on`);
      t.same(done.data.got, c.got, `${c.type}: the flow got the value`);
      if (c.type === 'file') {
        t.equal(
          done.data.sha,
          createHash('sha256').update(FILE).digest('hex'),
          'the bytes uploaded are the bytes stored',
        );
      }
    }
  });

  await t.test("the daemon's refusal is shown next to its field", async (t) => {
    const runId = await start(id(8), 'order-refused');
    await page.goto(`${url}/tasks/${runId}/ask`);
    await page.locator('form.task-form').waitFor();
    // The page's own check passes; the request is changed on its way, so only the daemon can say no.
    await page.route('**/process/task', async (route) => {
      const body = JSON.parse(route.request().postData() ?? '{}') as { data: Record<string, unknown> };
      await route.continue({ postData: JSON.stringify({ ...body, data: { ...body.data, count: 'many' } }) });
    });
    await CASES[8]!.answer(page);
    await page.getByRole('button', { name: 'Complete' }).click();
    const error = page.locator('#task-count-error');
    await error.waitFor();
    t.match(await error.textContent(), /must be a number/, "the daemon's problem, by its field");
    t.equal(await page.getByLabel('count').getAttribute('aria-invalid'), 'true');
    await page.unroute('**/process/task');
    t.equal((await api('GET', `/process/instance/${runId}`)).body.state, 'RUNNING', 'it still waits');
    await page.getByLabel('count').fill('4');
    await page.getByRole('button', { name: 'Complete' }).click();
    await page.getByText('✓ Answered').waitFor();
    t.match(((await ended(runId)) as { data: { got: object } }).data.got, { count: 4 });
  });

  await t.test('CANCEL asks first, then takes the cancel path', async (t) => {
    const runId = await start(id(0), 'order-cancel');
    await page.goto(`${url}/tasks/${runId}/ask`);
    const cancel = page.locator('.task-buttons').getByRole('button', { name: 'Cancel task' });
    await cancel.click();
    const dialog = page.getByRole('dialog');
    await dialog.getByRole('button', { name: 'Keep it waiting' }).click();
    await dialog.waitFor({ state: 'hidden' });
    t.equal((await api('GET', `/process/instance/${runId}`)).body.state, 'RUNNING', 'no: nothing sent');
    await cancel.click();
    await dialog.getByRole('button', { name: 'Cancel task' }).click();
    await page.getByText('⊘ Cancelled').waitFor();
    const done = (await ended(runId)) as { state: string; data: Record<string, unknown> };
    t.equal(done.state, 'COMPLETED');
    t.equal(done.data.cancelled, true, 'the errorFlow ran');
    t.equal(done.data.got, undefined, 'the answer path did not');
  });

  await t.test('an answer in the browser, seen by `wfx logs --follow`', async (t) => {
    const runId = await start(id(2), 'order-followed');
    const follow = spawnWfx(t, ['logs', runId, '--follow', '--json'], { cwd });
    let out = '';
    follow.stdout.setEncoding('utf8');
    follow.stdout.on('data', (s: string) => (out += s));
    const exit = once(follow, 'exit');
    await eventually('the follower sees the wait', () => out.includes('"nodeId":"ask"'));
    await page.goto(`${url}/tasks/${runId}/ask`);
    await page.getByLabel('Answer').fill('7');
    await page.getByRole('button', { name: 'Complete' }).click();
    await page.getByText('✓ Answered').waitFor();
    const [code] = (await exit) as [number | null];
    t.equal(code, 0, 'the follower ended with the execution');
    const lines = out
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { nodeId?: string; message?: string });
    t.ok(
      lines.some((l) => l.nodeId === 'keep'),
      'it saw the execution go on past the answered node',
    );
  });

  await t.test('an answer that lost the race says so and links to the execution', async (t) => {
    const runId = await start(id(0), 'order-race');
    await page.goto(`${url}/tasks/${runId}/ask`);
    await page.getByLabel('Answer').fill('mine');
    t.equal(
      (
        await api('POST', '/process/task', {
          processInstanceId: runId,
          nodeId: 'ask',
          action: 'COMPLETE',
          data: { inputValue: 'theirs' },
        })
      ).status,
      200,
      'someone else answered first',
    );
    await page.getByRole('button', { name: 'Complete' }).click();
    const late = page.locator('.task-late[role="alert"]');
    await late.waitFor();
    t.match(await late.textContent(), /no longer waits/);
    await screenshot(page, 'console-task-too-late');
    await late.getByRole('link', { name: 'Open the execution' }).click();
    await page.waitForURL(`${url}/executions/${runId}`);
    t.equal(((await ended(runId)) as { data: { got: string } }).data.got, 'theirs', 'the first answer stands');
  });

  await t.test('a deep link opens the form; a user task is answered from its execution too', async (t) => {
    const fresh = await context.newPage();
    const freshProblems = collectConsoleErrors(fresh);
    const runId = await start(REVIEW, 'contract-2');
    await fresh.goto(`${url}/tasks/${runId}/review`);
    await fresh.getByRole('heading', { name: 'Review the contract', level: 3 }).waitFor();
    t.match(await fresh.locator('.task-panel').textContent(), /ann/, 'with its facts');
    t.equal(await fresh.getByRole('button', { name: 'Complete' }).count(), 1, 'ready to answer');

    await fresh.goto(`${url}/executions/${runId}?node=review`);
    const panel = fresh.locator('.node-panel');
    await panel.getByRole('heading', { name: 'Answer' }).waitFor();
    await panel.getByLabel('Yes').check();
    await panel.getByRole('button', { name: 'Complete' }).click();
    await fresh.locator('.page-head .state-completed').first().waitFor();
    const done = (await ended(runId)) as { state: string; data: Record<string, unknown> };
    t.equal(done.data.ok, true, 'answered from the execution page');
    t.same(unexpected(freshProblems), []);
    await fresh.close();
  });

  await t.test("a task beside its execution's variables; answered, it is no longer due", async (t) => {
    const runId = await start(REVIEW, 'contract-4');
    await page.goto(`${url}/tasks/${runId}/review`);
    const panel = page.locator('.task-panel');
    const variables = panel.getByLabel('Variables of the execution');
    await variables.waitFor();
    t.match(await variables.textContent(), /"order": "contract-4"/, 'the variables the answer is judged by');
    t.match(await panel.locator('.task-facts').textContent(), /Due.*\(in (59|60) min/, 'due, counting down');
    await panel.getByLabel('Yes').check();
    await panel.getByRole('button', { name: 'Complete' }).click();
    await panel.getByText('✓ Answered: the execution goes on.').waitFor();
    const facts = (await panel.locator('.task-facts').textContent()) ?? '';
    t.match(facts, /Dueanswered/, 'no longer due');
    t.notMatch(facts, /countdown|in \d+ min/, 'the countdown stopped');
    t.same(await axeCheck(page), [], 'the answered task: no serious accessibility violation');
    await ended(runId);
  });

  await t.test('a task claimed: Claim and Unclaim, and one another person claimed is closed', async (t) => {
    const mine = await start(REVIEW, 'contract-6');
    await page.goto(`${url}/tasks/${mine}/review`);
    const panel = page.locator('.task-panel');
    await panel.getByRole('button', { name: 'Claim', exact: true }).click();
    await panel.getByRole('button', { name: 'Unclaim' }).waitFor();
    t.match(await panel.locator('.task-facts').textContent(), /Claimedyou/, 'claimed by you');
    const view = (await api('GET', `/process/instance/${mine}`)).body as { nodes: Array<{ claimedBy?: string }> };
    t.ok(
      view.nodes.some((n) => n.claimedBy?.startsWith('key:')),
      'the daemon holds the claim',
    );
    await panel.getByRole('button', { name: 'Unclaim' }).click();
    await panel.getByRole('button', { name: 'Claim', exact: true }).waitFor();
    await panel.locator('.task-facts').getByText('nobody', { exact: true }).waitFor();
    t.match(await panel.locator('.task-facts').textContent(), /Claimednobody/, 'given back');

    // Claimed by Ada (another key): the inbox and the panel say so, and the form is closed.
    const ada = (await api('POST', '/admin/api-keys', { name: 'Ada', organization: 'default', role: 'operator' })).body
      .apiKey as string;
    const theirs = await start(REVIEW, 'contract-7');
    const claimed = await callDaemon(url, ada, 'POST', '/process/task', {
      processInstanceId: theirs,
      nodeId: 'review',
      action: 'CLAIM',
    });
    t.equal(claimed.status, 200);
    await page.goto(`${url}/tasks/${theirs}/review`);
    await panel.getByText('Ada claimed this task: only they answer it, unless they unclaim it.').waitFor();
    t.equal(await panel.getByRole('button', { name: 'Complete' }).count(), 0, 'no Complete');
    t.equal(await panel.getByRole('button', { name: 'Claim', exact: true }).count(), 0, 'no Claim');
    const row = page.locator('table.tasks tr', { hasText: 'contract-7' });
    t.match(await row.textContent(), /claimed by Ada/, 'the inbox says who has it');
    t.same(await axeCheck(page), [], 'a task claimed by another: no serious accessibility violation');
    await callDaemon(url, ada, 'POST', '/process/task', {
      processInstanceId: theirs,
      nodeId: 'review',
      action: 'COMPLETE',
      data: { ok: true },
    });
    await ended(theirs);
  });

  await t.test('a run waiting for a person: marked and filtered in the list, its banner answers it', async (t) => {
    const runId = await start(REVIEW, 'contract-3');
    await page.goto(`${url}/executions?processId=${REVIEW}`);
    const row = page.locator('tr[data-row]', { hasText: runId });
    await row.getByText('waiting for a person at Review the contract').waitFor();
    t.pass('the list says where it waits, not only that it runs');
    await page.getByLabel('Waiting').selectOption('person');
    await page.waitForURL((u) => u.searchParams.get('waiting') === 'person');
    // The unfiltered rows stay until the filtered list is read: wait for it.
    const listed = await eventually('the filtered list', async () => {
      const rows = await page.locator('tr[data-row]').allTextContents();
      return rows.length > 0 && rows.every((r) => /waiting for a person/.test(r)) && rows;
    });
    t.ok(
      listed.some((r) => r.includes(runId)),
      'the filter keeps only such runs, this one among them',
    );
    t.same(await axeCheck(page), [], 'the filtered list: no serious accessibility violation');

    await row.click();
    await page.waitForURL((u) => u.pathname === `/executions/${runId}`);
    const banner = page.getByRole('region', { name: 'What it waits for' });
    await banner.getByText('Waiting for a person at Review the contract').waitFor();
    await screenshot(page, 'console-execution-waiting');
    t.same(await axeCheck(page), [], 'the banner: no serious accessibility violation');
    await banner.getByRole('button', { name: 'Answer Review the contract' }).click();
    const panel = page.locator('.node-panel');
    await panel.getByRole('heading', { name: 'Answer' }).waitFor();
    await panel.getByLabel('Yes').check();
    await panel.getByRole('button', { name: 'Complete' }).click();
    await page.locator('.page-head .state-completed').first().waitFor();
    t.equal(await banner.count(), 0, 'answered, the banner is gone');
    const done = (await ended(runId)) as { data: Record<string, unknown> };
    t.equal(done.data.ok, true, 'the answer reached the flow');
  });

  await t.test('a viewer reads tasks but is offered no answer', async (t) => {
    const viewerKey = (
      await api('POST', '/admin/api-keys', { name: 'viewer', organization: 'default', role: 'viewer' })
    ).body.apiKey as string;
    const viewer = await (await browser.newContext()).newPage();
    const runId = await start(id(0), 'order-viewer');
    await viewer.goto(`${url}/tasks/${runId}/ask`);
    await viewer.waitForURL((u) => u.pathname === '/sign-in');
    await signInWithKey(viewer, viewerKey);
    await viewer.waitForURL(`${url}/tasks/${runId}/ask`);
    await viewer.getByText('answering it needs the permission').waitFor();
    t.equal(await viewer.getByRole('button', { name: 'Complete' }).count(), 0, 'no Complete');
    t.equal(await viewer.getByRole('button', { name: 'Cancel task' }).count(), 0, 'no Cancel');
    await viewer.context().close();
  });

  t.same(unexpected(problems), [], 'no page error, CSP violation or stray request');
  await context.close();
});
