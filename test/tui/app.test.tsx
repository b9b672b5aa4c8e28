import '../setup/fixtures.js'; // fixtures under the OS temp dir (see there)
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { render } from 'ink-testing-library';
import t from 'tap';
import { WfxClient } from '../../src/client/client.js';
import { App } from '../../src/tui/app.js';
import { adminClient, startDaemon, wfxIn } from '../helpers/cli.js';
import { frameMatching, KEY } from '../helpers/ink.js';

/**
 * The flow that waits for an answer, as flow `processId`: a processId belongs to one
 * organization, and three tests publish it, each in an organization of its own.
 */
const ASK = [
  '2e3f4a5b-6c7d-4e8f-9a0b-1c2d3e4f5a6b',
  '2e3f4a5b-6c7d-4e8f-9a0b-1c2d3e4f5a6c',
  '2e3f4a5b-6c7d-4e8f-9a0b-1c2d3e4f5a6d',
];
const needsAnswer = (processId: string) => `processId: ${processId}
name: Needs an answer
nodes:
  start: { type: startEvent, next: ask }
  ask: { type: inputNode, inputType: textbox, formTitle: "Ship order {orderId}?", next: done }
  done: { type: endEvent }
`;

const LOOP = `processId: 3f4a5b6c-7d8e-4f9a-8b1c-2d3e4f5a6b7c
name: Three items
nodes:
  start: { type: startEvent, next: each }
  each:
    type: loopNode
    collection: "{items}"
    nodes:
      s: { type: startEvent, next: wait }
      wait: { type: inputNode, inputType: textbox, next: e }
      e: { type: endEvent }
    next: done
  done: { type: endEvent }
`;

const FAILING = `processId: 4a5b6c7d-8e9f-4a0b-9c1d-2e3f4a5b6c7d
name: Fails until fixed
nodes:
  start: { type: startEvent, next: check }
  check: { type: scriptTask, script: "if (!vars.ok) throw new Error('not ok'); return {}", next: done }
  done: { type: endEvent }
`;

const RESERVE = `processId: 5b6c7d8e-9f0a-4b1c-8d2e-3f4a5b6c7d9e
name: Reserve then ask
nodes:
  start: { type: startEvent, next: reserve }
  reserve: { type: serviceTask, url: "{env.BASE}/reserve", next: ask }
  ask: { type: inputNode, inputType: textbox, next: done }
  done: { type: endEvent }
`;

t.test('the TUI against a real daemon', async (t) => {
  // One daemon; each test in an organization of its own, whose executions alone its TUI lists,
  // as a daemon of its own would.
  const cwd = t.testdir({
    ...Object.fromEntries(ASK.map((id, i) => [`ask-${i}.yaml`, needsAnswer(id)])),
    'loop.yaml': LOOP,
    'failing.yaml': FAILING,
    'reserve.yaml': RESERVE,
  });
  const { url } = await startDaemon(t, { cwd });
  const system = await adminClient(cwd, url);
  let organizations = 0;
  /** An admin of a new organization: an API client, and `wfx` run in-process with its key. */
  const organization = async () => {
    const name = `tui-${++organizations}`;
    const { apiKey } = await system.keys.create({ name: 'admin', organization: name, role: 'admin' });
    return {
      client: new WfxClient({ url, apiKey, credentialSource: 'test' }),
      wfx: (args: string[]) => wfxIn([...args, '--api-key', apiKey], { cwd }),
    };
  };

  await t.test(
    'the TUI against a real daemon: the list goes live, enter opens an execution, c then y cancels it',
    async (t) => {
      const { client, wfx } = await organization();
      t.equal((await wfx(['flow', 'publish', 'ask-0.yaml'])).code, 0);
      const first = await client.process.start({
        processId: ASK[0]!,
        data: { orderId: 42 },
      });

      const ui = render(<App client={client} url={url} rows={24} />);
      t.teardown(() => ui.unmount());
      // Waiting at its input node: waiting for a person, not running.
      await frameMatching(ui.lastFrame, new RegExp(`◷ waiting\\s+Needs an answer v1 .*${first.processInstanceId}`));
      t.match(ui.lastFrame(), /· live/);

      // Started while the TUI watches: it appears without a key press (GET /events).
      const second = await client.process.start({
        processId: ASK[0]!,
        data: { orderId: 43 },
      });
      await frameMatching(ui.lastFrame, new RegExp(second.processInstanceId));

      ui.stdin.write(KEY.enter); // the newest, selected first
      const detail = await frameMatching(
        ui.lastFrame,
        /ask\s+inputNode\s+waiting\s+input textbox: Ship order 43\?[\s\S]*ask: waiting for input/,
      );
      t.match(detail, /variables \{"orderId":43\}/, 'its variables, and the log tail above');
      ui.stdin.write('c');
      await frameMatching(ui.lastFrame, /Cancel Needs an answer .*\? y \/ n/);
      ui.stdin.write('y');
      await frameMatching(ui.lastFrame, /◌ cancelled/);
      t.equal((await client.instances.get(second.processInstanceId)).stateCd, 3, 'cancelled in the daemon');
      t.equal((await client.instances.get(first.processInstanceId)).stateCd, 0, 'the other one untouched');

      ui.stdin.write(KEY.esc); // esc: back to the list, which has heard of the cancel
      await frameMatching(ui.lastFrame, new RegExp(`◌ cancelled .*${second.processInstanceId}`));
      ui.stdin.write('s'); // state filter: running
      const running = await frameMatching(ui.lastFrame, /state: running/);
      t.notMatch(running, /◌ cancelled/, 'the cancelled one is filtered out');
      t.match(running, /◷ waiting/, 'running, waiting for a person');
      ui.stdin.write('?');
      await frameMatching(ui.lastFrame, /wfx tui · keys/);
    },
  );

  await t.test(
    'the : command line against a real daemon: it takes every key, tab completes, :open takes a unique id prefix',
    async (t) => {
      const { client, wfx } = await organization();
      t.equal((await wfx(['flow', 'publish', 'ask-1.yaml'])).code, 0);
      const start = async (orderId: number) =>
        (await client.process.start({ processId: ASK[1]!, data: { orderId } })).processInstanceId;
      const first = await start(1);
      const second = await start(2);

      const copied: string[] = [];
      const ui = render(<App client={client} url={url} rows={24} copy={(id) => copied.push(id)} />);
      t.teardown(() => ui.unmount());
      await frameMatching(ui.lastFrame, new RegExp(`Needs an answer v1 .*${second.slice(0, 12)}`));
      t.match(ui.lastFrame(), /:\s+command/, 'the key bar names :');
      ui.stdin.write(':');
      await frameMatching(ui.lastFrame, /^: +executions, tasks/m);
      ui.stdin.write('q'); // text here, not quit
      await frameMatching(ui.lastFrame, /^: q/m);
      ui.stdin.write(KEY.backspace);
      ui.stdin.write('ta');
      await frameMatching(ui.lastFrame, /^: ta/m);
      ui.stdin.write(KEY.tab);
      await frameMatching(ui.lastFrame, /^: tasks/m);
      ui.stdin.write(KEY.enter);
      await frameMatching(ui.lastFrame, /WAITING SINCE/);
      t.notMatch(ui.lastFrame(), /^: /m, 'enter closes the line');

      // A prefix both ids begin with: AMBIGUOUS_ID, said on the notice line.
      let common = 0;
      while (first[common] === second[common]) common++;
      ui.stdin.write(':');
      await frameMatching(ui.lastFrame, /^: /m);
      ui.stdin.write(`open ${first.slice(0, Math.max(8, Math.min(common, 18)))}`);
      ui.stdin.write(KEY.enter);
      await frameMatching(ui.lastFrame, /✖ cannot open \S+: AMBIGUOUS_ID/);

      // A unique prefix opens that execution, from any screen.
      ui.stdin.write(':');
      await frameMatching(ui.lastFrame, /^: /m);
      ui.stdin.write(`open ${first.slice(0, common + 1)}`);
      ui.stdin.write(KEY.enter);
      const opened = await frameMatching(ui.lastFrame, /ask\s+inputNode\s+waiting\s+input textbox: Ship order 1\?/);
      t.match(opened, new RegExp(`Needs an answer v1 .*${first}`), 'the execution view of the one named');
      t.match(opened, /\[1 executions\]/, 'on the executions screen');
      ui.stdin.write('y'); // and y copies its whole id (OSC 52 to the terminal), shown too
      await frameMatching(ui.lastFrame, new RegExp(`copied ${first}`));
      t.same(copied, [first]);

      ui.stdin.write(':');
      await frameMatching(ui.lastFrame, /^: /m);
      ui.stdin.write('nope');
      ui.stdin.write(KEY.enter);
      await frameMatching(ui.lastFrame, /✖ no command nope/);
      ui.stdin.write(':');
      await frameMatching(ui.lastFrame, /^: /m);
      ui.stdin.write('tr');
      ui.stdin.write(KEY.esc);
      await frameMatching(ui.lastFrame, /^(?![\s\S]*^: )/m);
      t.notMatch(ui.lastFrame(), /TRIGGER/, 'esc closed it without running it');
    },
  );

  await t.test(
    'a loop is one row with its count of children; a shows its iterations, a again hides them',
    async (t) => {
      const { client, wfx } = await organization();
      t.equal((await wfx(['flow', 'publish', 'loop.yaml'])).code, 0);
      const started = await client.process.start({
        processId: '3f4a5b6c-7d8e-4f9a-8b1c-2d3e4f5a6b7c',
        data: { items: [1, 2, 3] },
      });
      const ui = render(<App client={client} url={url} rows={24} />);
      t.teardown(() => ui.unmount());
      // Sequential: one iteration runs (and waits) at a time.
      const top = await frameMatching(ui.lastFrame, /Three items v1 \(\+1\)/);
      t.match(top, new RegExp(started.processInstanceId));
      t.notMatch(top, /↳/, 'no iteration listed');
      t.match(top, /a\s+children: hidden/);
      ui.stdin.write('a');
      const all = await frameMatching(ui.lastFrame, /↳ Three items v1/);
      t.match(all, /a\s+children: shown/);
      ui.stdin.write('a');
      await frameMatching(ui.lastFrame, /^(?![\s\S]*↳)[\s\S]*children: hidden/);
    },
  );

  await t.test('r then y retries a failed execution where it failed', async (t) => {
    const { client, wfx } = await organization();
    t.equal((await wfx(['flow', 'publish', 'failing.yaml'])).code, 0);
    const run = await wfx(['run', '4a5b6c7d-8e9f-4a0b-9c1d-2e3f4a5b6c7d', '--wait', '--json']);
    const id = (JSON.parse(run.stdout) as { processInstanceId: string }).processInstanceId;
    const ui = render(<App client={client} url={url} rows={24} />);
    t.teardown(() => ui.unmount());
    await frameMatching(ui.lastFrame, new RegExp(`failed\\s+Fails until fixed v1 .*${id}`));
    ui.stdin.write('r');
    await frameMatching(ui.lastFrame, /Retry Fails until fixed .*\? y \/ n/);
    ui.stdin.write('y');
    await frameMatching(ui.lastFrame, /retried .*: it runs again where it failed/);
    const after = await client.instances.get(id);
    t.match(
      after.retries,
      [{ by: /^key:/, error: { code: 'SCRIPT_ERROR', nodeId: 'check' } }],
      'retried in the daemon',
    );
  });

  await t.test(
    'an open execution: v shows its variables whole, tab moves to the log, a answers the task it waits on',
    async (t) => {
      const { client, wfx } = await organization();
      t.equal((await wfx(['flow', 'publish', 'ask-2.yaml'])).code, 0);
      const run = await client.process.start({
        processId: ASK[2]!,
        data: { orderId: 44, lines: [{ sku: 'A1', qty: 2 }] },
      });
      const app = <App client={client} url={url} rows={30} />;
      const ui = render(app);
      t.teardown(() => ui.unmount());
      await frameMatching(ui.lastFrame, new RegExp(`◷ waiting\\s+Needs an answer v1 .*${run.processInstanceId}`));
      ui.stdin.write(KEY.enter);
      const detail = await frameMatching(ui.lastFrame, /ask: waiting for input[\s\S]*\ba\s+answer/);
      t.match(detail, /tab\s+log\s+v\s+variables/, 'the key bar names the panes and the variables');
      t.match(detail, /y\s+copy id[\s\S]*:\s+command/, 'and y and : as everywhere');

      ui.stdin.write('v');
      const vars = await frameMatching(ui.lastFrame, /variables of Needs an answer v1/);
      t.match(vars, /\n {2}"orderId": 44,\n {2}"lines": \[\n {4}\{\n {6}"sku": "A1",/, 'indented JSON, whole');
      t.match(vars, /g G\s+top \/ bottom\s+esc\s+back\s+y\s+copy id/);
      ui.stdin.write(KEY.esc);
      await frameMatching(ui.lastFrame, /NODE\s+TYPE\s+STATUS/);
      t.match(ui.lastFrame(), /Needs an answer v1 · ● running/, 'esc leaves the variables, not the execution');

      ui.stdin.write(KEY.tab);
      await frameMatching(ui.lastFrame, /› log[\s\S]*scroll the log/);
      ui.stdin.write(KEY.tab);
      await frameMatching(ui.lastFrame, /tab\s+log/);

      ui.stdin.write('a');
      await frameMatching(ui.lastFrame, /Ship order 44\?[\s\S]*enter\s+complete/);
      ui.rerender(app); // the form's key listener is attached in an effect (see tasks.test.tsx)
      ui.stdin.write('ship it');
      await frameMatching(ui.lastFrame, /\[ship it▌\]/);
      ui.stdin.write(KEY.enter);
      await frameMatching(ui.lastFrame, /completed Ask|completed ask|✔ completed/);
      const after = await client.instances.get(run.processInstanceId);
      t.equal(after.stateCd, 1, 'the execution completed in the daemon');
      t.match(JSON.stringify(after.data), /ship it/, 'with the answer in its variables');
    },
  );

  await t.test('an open execution retried with r follows the run again instead of staying failed', async (t) => {
    const partner = createServer((_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end('{}'));
    partner.listen(0, '127.0.0.1');
    await once(partner, 'listening');
    t.teardown(() => partner.close());
    const base = `http://127.0.0.1:${(partner.address() as AddressInfo).port}`;
    const { client, wfx } = await organization();
    t.equal((await wfx(['flow', 'publish', 'reserve.yaml'])).code, 0);
    const run = await wfx(['run', '5b6c7d8e-9f0a-4b1c-8d2e-3f4a5b6c7d9e', '--wait', '--json']);
    t.equal(run.code, 1, 'it fails: BASE has no value');
    const id = (JSON.parse(run.stdout) as { processInstanceId: string }).processInstanceId;
    const ui = render(<App client={client} url={url} rows={30} />);
    t.teardown(() => ui.unmount());
    await frameMatching(ui.lastFrame, new RegExp(`failed\\s+Reserve then ask v1 .*${id}`));
    ui.stdin.write(KEY.enter);
    await frameMatching(ui.lastFrame, /ENV_NOT_SET/);
    t.equal((await wfx(['env', 'set', 'BASE', base])).code, 0);
    ui.stdin.write('r');
    await frameMatching(ui.lastFrame, /Retry Reserve then ask .*\? y \/ n/);
    ui.stdin.write('y');
    const after = await frameMatching(ui.lastFrame, /ask: waiting for input/);
    t.match(after, /running/, 'the open view says it runs again, waiting at ask');
  });
});
