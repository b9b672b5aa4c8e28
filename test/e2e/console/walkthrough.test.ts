import '../../setup/fixtures.js'; // fixtures under the OS temp dir (see there)
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { axeCheck, CHROMIUM_SKIP, collectConsoleErrors, launchBrowser } from '../../helpers/browser.js';
import { spawnWfx, startDaemon, wfxIn } from '../../helpers/cli.js';
import { signInWithLink } from '../../helpers/console-session.js';
import { eventually } from '../../helpers/eventually.js';

/*
 * The README's walk-through, its browser path, as a newcomer takes it: the example flow
 * published from flows/, run with `wfx run --follow`, and the approval answered in the console
 * (`wfx console`, Tasks, the form, Complete) while the run in the terminal follows it to its end.
 */

const ORDER_APPROVAL = fileURLToPath(new URL('../../../../flows/order-approval.yaml', import.meta.url));
const ORDER_APPROVAL_ID = '0b7c6a3e-2f0e-4a57-9a43-3d4f1c9e8b11';

t.test("the README's walk-through: the approval answered in the console", { skip: CHROMIUM_SKIP }, async (t) => {
  const cwd = t.testdir({});
  const { url } = await startDaemon(t, { cwd });
  const published = await wfxIn(['flow', 'publish', ORDER_APPROVAL], { cwd });
  t.equal(published.code, 0, 'wfx flow publish flows/order-approval.yaml');

  const run = spawnWfx(t, ['run', ORDER_APPROVAL_ID, '--set', 'order.id=42', '--set', 'order.total=250', '--follow'], {
    cwd,
  });
  // The id and the log may go to either stream: read both, as a terminal shows them.
  let out = '';
  for (const stream of [run.stdout, run.stderr]) {
    stream.setEncoding('utf8');
    stream.on('data', (s: string) => (out += s));
  }
  const exit = once(run, 'exit');
  await eventually('the run waits at ask', () => out.includes('Ask for approval (ask): waiting for input'));
  const runId = /^started (\S+)/m.exec(out)?.[1];
  t.ok(runId, 'wfx run printed the execution id');

  const browser = await launchBrowser(t);
  const page = await (await browser.newContext()).newPage();
  const problems = collectConsoleErrors(page);
  await signInWithLink(page, url, cwd);

  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Tasks' }).click();
  const row = page.locator('table.tasks tbody tr', { hasText: 'Approve order 42 of 250 EUR?' });
  await row.waitFor();
  t.match(await row.locator('.countdown').textContent(), /^in (29|30) min/, 'due in 30 minutes, counting down');
  await row.getByRole('link', { name: 'Approve order 42 of 250 EUR?' }).click();
  await page.waitForURL(`${url}/tasks/${runId}/ask`);
  const form = page.locator('form.task-form');
  await form.getByRole('heading', { name: 'Approve order 42 of 250 EUR?' }).waitFor();
  t.same(await axeCheck(page), [], 'the form: no serious accessibility violation');
  await form
    .getByRole('group', { name: /approve/ })
    .getByLabel('Yes')
    .check();
  await form.getByLabel(/comment/).fill('fine by me');
  await form.getByRole('button', { name: 'Complete' }).click();

  const [code] = (await exit) as [number | null];
  t.equal(code, 0, 'wfx run --follow ended with the execution, completed');
  t.match(out, /Order approval: execution completed/, 'the terminal followed it to its end');
  t.match(out, /output: \{"decision":"approved","orderId":42\}/, 'approved, as the README shows');
  t.same(problems, [], 'no error in the page');
});
