import '../setup/fixtures.js'; // fixtures under the OS temp dir (see there)
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
    await paneMatching(new RegExp(`◷ waiting\\s+Ship order v1 .*${started.processInstanceId}`));
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

t.test(
  'wfx tui under a CI variable its parent set: colour, and at 80x24 with the daemon down a header that fits',
  { skip: !HAVE_TMUX && !process.env.CI && 'tmux is not installed (apt-get install tmux)' },
  async (t) => {
    const socket = `wfx-tui-ci-${process.pid}-${Date.now()}`;
    const tmux = (...args: string[]) => run('tmux', ['-L', socket, '-f', '/dev/null', ...args]);
    t.teardown(() => tmux('kill-server').catch(() => undefined));
    // Port 9 (discard) on loopback: nothing of wfx answers there.
    // Only CI variables: none of the test runner's own colour settings (tap sets some) reach it.
    const command = `env -u NO_COLOR -u FORCE_COLOR -u NODE_DISABLE_COLORS CI=true CI_JOB_ID=1 '${process.execPath}' '${WFX_BIN}' tui --url http://127.0.0.1:9 --api-key x`;
    await tmux('new-session', '-d', '-s', 'wfx', '-x', '80', '-y', '24', command);
    const pane = await eventually('the TUI says the daemon is unreachable', async () => {
      const plain = (await tmux('capture-pane', '-p', '-t', 'wfx')).stdout;
      return /cannot reach/.test(plain) && plain;
    });
    const lines = pane.split('\n');
    t.match(
      lines[0],
      /^http:\/\/127\.0\.0\.1:9 · unreachable\s+\[1 executions\]\s+2\s+3\s+4\s+5$/,
      'one line: at 80 columns the other screens by their number',
    );
    t.match(
      lines[1],
      /^cannot reach a wfx daemon at http:\/\/127\.0\.0\.1:9 .*· reconnecting…/,
      'why, on a line of its own',
    );
    t.equal(
      (await tmux('display', '-p', '-t', 'wfx', '#{alternate_on}')).stdout.trim(),
      '1',
      'on the alternate screen',
    );
    const styled = (await tmux('capture-pane', '-e', '-p', '-t', 'wfx')).stdout;
    t.match(styled, /\u001b\[7m\[1 executions\]/, 'the active tab in inverse');
    t.match(styled, /\u001b\[33m/, 'the unreachable daemon in yellow: colour, though CI is set');
    // Ctrl-L: the terminal cleared and every line drawn again.
    await tmux('send-keys', '-t', 'wfx', 'C-l');
    await eventually('drawn again after Ctrl-L', async () => {
      const again = (await tmux('capture-pane', '-p', '-t', 'wfx')).stdout;
      return /^http:\/\/127\.0\.0\.1:9 · unreachable/.test(again) && /no executions/.test(again);
    });
    // Narrower: one header, no line left over from the wider layout.
    await tmux('resize-window', '-t', 'wfx', '-x', '70', '-y', '20');
    const narrow = await eventually('drawn again at 70 columns', async () => {
      const shown = (await tmux('capture-pane', '-p', '-t', 'wfx')).stdout;
      return /^http:\/\/127\.0\.0\.1:9/.test(shown) && /q\s+quit/.test(shown) && shown;
    });
    t.equal(narrow.match(/\[1 executions\]/g)?.length, 1, 'one header after the resize');
    await tmux('send-keys', '-t', 'wfx', 'q');
    await eventually('the TUI quits', async () =>
      tmux('has-session', '-t', 'wfx').then(
        () => false,
        () => true,
      ),
    );

    // NO_COLOR: no colour at all; the current screen's tab is still marked.
    await tmux(
      'new-session',
      '-d',
      '-s',
      'wfx',
      '-x',
      '80',
      '-y',
      '24',
      command.replace('CI=true', 'NO_COLOR=1 CI=true'),
    );
    const plain = await eventually('the TUI draws without colour', async () => {
      const shown = (await tmux('capture-pane', '-e', '-p', '-t', 'wfx')).stdout;
      return /cannot reach/.test(shown) && shown;
    });
    t.notMatch(plain, /\u001b\[(3[0-7]|9[0-7]|38;)/, 'no colour');
    t.match(plain, /\[1 executions\]/, 'the current tab bracketed');
    await tmux('send-keys', '-t', 'wfx', 'q');
    t.ok(
      await eventually('the tmux session ends', async () =>
        tmux('has-session', '-t', 'wfx').then(
          () => false,
          () => true,
        ),
      ),
    );
  },
);
