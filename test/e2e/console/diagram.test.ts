import '../../setup/fixtures.js'; // fixtures under the OS temp dir (see there)
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import t from 'tap';
import { axeCheck, CHROMIUM_SKIP, collectConsoleErrors, launchBrowser, screenshot } from '../../helpers/browser.js';
import { callDaemon, startDaemon } from '../../helpers/cli.js';
import { signInWithLink } from '../../helpers/console-session.js';

/*
 * An execution's diagram on a wide screen, in Debian's Chromium at 1440x900: drawn the page's
 * whole width above the details, every node of a 12-node flow in view with labels at least 11px
 * tall (read from the page's geometry), zoomed with the buttons and the keyboard, panned by
 * dragging, and fitted again.
 */

const PID = '8e9f0a1b-2c3d-4e5f-9a6b-7c8d9e0f1a2b';
/** Twelve nodes: a chain, a gateway with two branches of two tasks, a join, an end. */
const FLOW = `processId: ${PID}
name: Nightly batch
nodes:
  start: { type: startEvent, name: Batch due, next: fetch }
  fetch: { type: setVariable, name: Fetch the orders, variables: { n: 3 }, next: check }
  check: { type: setVariable, name: Check the totals, variables: { ok: true }, next: route }
  route:
    type: exclusiveGateway
    name: Totals match?
    branches: [{ condition: "\${ok}", next: book }]
    default: flag
  book: { type: setVariable, name: Book the batch, variables: { booked: true }, next: notify }
  notify: { type: setVariable, name: Notify finance, variables: { told: true }, next: join }
  flag: { type: setVariable, name: Flag the batch, variables: { flagged: true }, next: hold }
  hold: { type: setVariable, name: Hold the payouts, variables: { held: true }, next: join }
  join: { type: exclusiveGateway, name: Merge, branches: [{ condition: "\${true}", next: archive }] }
  archive: { type: setVariable, name: Archive the files, variables: { archived: true }, next: report }
  report: { type: setVariable, name: Write the report, variables: { reported: true }, next: done }
  done: { type: endEvent, name: Batch done }
`;

t.test(
  'the diagram of a 12-node run at 1440x900: whole, readable, zoomed and panned',
  { skip: CHROMIUM_SKIP },
  async (t) => {
    const cwd = t.testdir({});
    const { url } = await startDaemon(t, { cwd });
    const admin = (await readFile(join(cwd, '.wfx', 'bootstrap.key'), 'utf8')).trim();
    const api = (method: string, path: string, body?: object) => callDaemon(url, admin, method, path, body);
    t.equal((await api('POST', '/admin/flows', { source: FLOW })).status, 200);
    const run = (await api('POST', '/process/start?wait=10', { processId: PID })).body;
    t.match(run, { status: 'completed' });

    const browser = await launchBrowser(t);
    const page = await (await browser.newContext({ viewport: { width: 1440, height: 900 } })).newPage();
    const problems = collectConsoleErrors(page);
    await signInWithLink(page, url, cwd);
    await page.goto(`${url}/executions/${run.processInstanceId as string}`);
    const pane = page.locator('.diagram-scroll');
    await pane.locator('.dnode').first().waitFor();

    /** Every node's box, its label's height, and the pane's box, as the page lays them out (the test's lib has no DOM: its source is sent). */
    type Box = { left: number; right: number; top: number; bottom: number };
    const geometry = () =>
      page.evaluate(`(() => {
      const el = document.querySelector('.diagram-scroll');
      const box = (b) => ({ left: b.left, right: b.right, top: b.top, bottom: b.bottom, width: b.width });
      const nodes = [...el.querySelectorAll('.dnode')].map((n) => {
        const label = n.querySelector('text');
        return { ...box(n.getBoundingClientRect()), text: label ? label.getBoundingClientRect().height : 0 };
      });
      return { view: box(el.getBoundingClientRect()), nodes };
    })()`) as Promise<{ view: Box & { width: number }; nodes: Array<Box & { text: number }> }>;
    const scrollLeft = () => page.evaluate("document.querySelector('.diagram-scroll').scrollLeft") as Promise<number>;
    const fitted = await geometry();
    t.equal(fitted.nodes.length, 12, 'twelve nodes drawn');
    t.ok(fitted.view.width >= 1300, `the diagram takes the page's width (${Math.round(fitted.view.width)}px)`);
    t.ok(
      fitted.nodes.every((n) => n.text >= 11),
      `every label at least 11px tall: ${Math.min(...fitted.nodes.map((n) => n.text)).toFixed(1)}px the smallest`,
    );
    t.ok(
      fitted.nodes.every((n) => n.left >= fitted.view.left - 1 && n.right <= fitted.view.right + 1),
      'every node in view, the end and both branches too',
    );
    await screenshot(page, 'console-execution-diagram');
    t.same(await axeCheck(page), [], 'the page: no serious accessibility violation');

    // Zoom in with the keyboard on the focused pane: larger, and now it scrolls.
    await pane.focus();
    await page.keyboard.press('+');
    await page.keyboard.press('+');
    const zoomed = await geometry();
    t.ok(zoomed.nodes[0]!.text > fitted.nodes[0]!.text, 'larger');
    t.ok(
      zoomed.nodes.some((n) => n.right > zoomed.view.right),
      'part of it is off the pane now',
    );
    // Pan by dragging the background.
    const before = await scrollLeft();
    const box = (await pane.boundingBox())!;
    await page.mouse.move(box.x + box.width - 8, box.y + 8);
    await page.mouse.down();
    await page.mouse.move(box.x + box.width - 308, box.y + 8, { steps: 5 });
    await page.mouse.up();
    const after = await scrollLeft();
    t.ok(after > before + 100, `dragging pans it (${before} to ${after})`);
    // The buttons: out, then Fit again.
    await page.getByRole('button', { name: 'Zoom out' }).click();
    t.ok((await geometry()).nodes[0]!.text < zoomed.nodes[0]!.text, 'Zoom out makes it smaller');
    await page.getByRole('button', { name: 'Fit' }).click();
    const refit = await geometry();
    t.equal(refit.nodes[0]!.text.toFixed(1), fitted.nodes[0]!.text.toFixed(1), 'Fit draws it as first fitted');
    t.equal(await page.getByRole('button', { name: 'Fit' }).getAttribute('aria-pressed'), 'true');
    t.same(problems, [], 'no error in the page');
  },
);
