import { execFile, spawnSync } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import t from 'tap';
import { WfxClient } from '../../src/client/client.js';
import { startDaemon, wfxIn, WFX_BIN } from '../helpers/cli.js';
import { eventually } from '../helpers/eventually.js';

/*
 * The TUI once for real: the built CLI in a tmux terminal (100x30) against a real daemon; keys
 * go in with send-keys, the screen comes back with capture-pane.
 */

const HAVE_TMUX = spawnSync('tmux', ['-V']).status === 0;
const run = promisify(execFile);

const FLOW = `processId: 6f7a8b9c-0d1e-4f2a-9b3c-4d5e6f7a8b9c
name: Ship order
nodes:
  start: { type: startEvent, next: ask }
  ask: { type: inputNode, name: Approve, inputType: textbox, formTitle: "Ship order {order.id} ({order.total} EUR)?", next: done }
  done: { type: endEvent }
`;

t.test(
  'wfx tui in tmux: go to the tasks screen, answer the input node, the execution completes',
  { skip: !HAVE_TMUX && !process.env.CI && 'tmux is not installed (apt-get install tmux)' },
  async (t) => {
    const cwd = t.testdir({ 'flow.yaml': FLOW });
    const info = await startDaemon(t, { cwd });
    t.equal((await wfxIn(['flow', 'publish', 'flow.yaml'], { cwd })).code, 0);
    const key = (await readFile(join(cwd, '.wfx', 'bootstrap.key'), 'utf8')).trim();
    const client = new WfxClient({ url: info.url, apiKey: key, credentialSource: 'test' });
    const started = await client.process.startAny({
      processId: '6f7a8b9c-0d1e-4f2a-9b3c-4d5e6f7a8b9c',
      data: { order: { id: 42, total: 39 } },
    });

    const socket = `wfx-tui-${process.pid}-${Date.now()}`;
    const tmux = (...args: string[]) => run('tmux', ['-L', socket, '-f', '/dev/null', ...args]);
    t.teardown(() => tmux('kill-server').catch(() => undefined));
    // The key goes in through the environment, as a user's WFX_API_KEY would.
    const command = `env WFX_API_KEY='${key}' NO_COLOR=1 '${process.execPath}' '${WFX_BIN}' tui --url '${info.url}'`;
    await tmux('new-session', '-d', '-s', 'wfx', '-x', '100', '-y', '30', command);
    const screen = async () => (await tmux('capture-pane', '-p', '-t', 'wfx')).stdout;
    /** Looks at the pane until it matches; the error of a timeout shows the pane. */
    const paneMatching = async (re: RegExp): Promise<string> => {
      let last = '';
      const matched = await eventually(`the pane matches ${re}`, async () => {
        last = await screen().catch((err: Error) => `capture-pane failed: ${err.message}`);
        return re.test(last) && { pane: last };
      }).catch((err: Error) => {
        throw new Error(`${err.message}; it shows:\n${last}`);
      });
      return matched.pane;
    };
    const keys = (...k: string[]) => tmux('send-keys', '-t', 'wfx', ...k);

    await paneMatching(/· live/);
    await paneMatching(new RegExp(`● running\\s+Ship order v1 .*${started.processInstanceId}`));
    await keys('2');
    const list = await paneMatching(/› Ship order v1\s+Approve\s+textbox/);
    t.match(list, /input: Ship order 42 \(39 EUR\)\?/, 'the task, its title resolved');
    t.match(list, /FLOW\s+NODE\s+INPUT\s+WAITING SINCE/, 'screen 2: the tasks table');
    await keys('Enter');
    const form = await paneMatching(/› answer \[▌\]/);
    t.match(form, /Ship order 42 \(39 EUR\)\?/);
    t.match(form, /enter\s+complete\s+ctrl\+x\s+cancel\s+esc\s+back/);
    await keys('-l', 'yes, ship it (q)');
    await paneMatching(/› answer \[yes, ship it \(q\)▌\]/);
    await keys('Enter');
    await paneMatching(new RegExp(`completed Approve of Ship order \\(${started.processInstanceId}\\)`));
    await paneMatching(/no task waits for an answer/);

    const done = await client.instances.get(started.processInstanceId);
    t.equal(done.stateCd, 1, 'the execution completed');
    t.equal(done.data.inputValue, 'yes, ship it (q)', 'with the answer as its variable');
    await keys('q');
    const ended = await eventually(
      'the tmux session ends',
      async () =>
        !(await tmux('has-session', '-t', 'wfx').then(
          () => true,
          () => false,
        )),
    );
    t.ok(ended, 'q quits the TUI (and its tmux session ends)');
  },
);
