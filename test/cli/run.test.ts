import '../setup/fixtures.js'; // fixtures under the OS temp dir (see there)
import { once } from 'node:events';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import t from 'tap';
import { CLEAR_LINE } from '../../src/cli/spinner.js';
import { spawnWfx, startDaemon, wfx, wfxIn } from '../helpers/cli.js';
import { eventually } from '../helpers/eventually.js';

const WAITS = `processId: 1a2b3c4d-5e6f-4a7b-8c9d-0e1f2a3b4c5d
name: Approve
nodes:
  start: { type: startEvent, next: ask }
  ask: { type: inputNode, inputType: form, fields: [{ name: ok, type: boolean, required: true }], next: decide }
  decide: { type: ifElse, condition: "\${formData.ok}", then: done, else: boom }
  boom: { type: ifElse, condition: "\${undefinedVariable > 1}", then: done, else: done }
  done: { type: outputNode, outputs: { answer: "{formData.ok}" }, next: end }
  end: { type: endEvent }
`;
const PID = '1a2b3c4d-5e6f-4a7b-8c9d-0e1f2a3b4c5d';

const QUICK = `processId: 5a6b7c8d-9e0f-4a1b-8c2d-3e4f5a6b7c8d
name: Quick
nodes:
  start: { type: startEvent, next: out }
  out: { type: outputNode, outputs: { ok: true }, next: end }
  end: { type: endEvent }
`;

const ORDER_PID = '3c4d5e6f-7a8b-4c9d-8e0f-1a2b3c4d5e6f';
const ORDER = `processId: ${ORDER_PID}
name: Order
inputs:
  type: object
  required: [orderId]
  properties:
    orderId: { type: string }
    notify: { type: boolean, default: true }
nodes:
  start: { type: startEvent, next: out }
  out: { type: outputNode, outputs: { orderId: "{orderId}", notify: "{notify}" }, next: done }
  done: { type: endEvent }
`;

t.test('wfx tui without a terminal says it needs one, exit 2', async (t) => {
  const res = await wfxIn(['tui']);
  t.equal(res.code, 2);
  t.match(res.stderr, /USAGE_ERROR: wfx tui needs a terminal/);
});

t.test('wfx run and the exit codes of commands, against one daemon', async (t) => {
  // One daemon for these tests: each starts executions of its own and reads back only those,
  // or flows of names of its own; the fixtures of all are in one directory.
  const cwd = t.testdir({
    'approve.yaml': WAITS,
    'order.yaml': ORDER,
    'quick.yaml': QUICK,
    'twin.yaml': QUICK.replace('5a6b7c8d-9e0f-4a1b-8c2d-3e4f5a6b7c8d', '6b7c8d9e-0f1a-4b2c-8d3e-4f5a6b7c8d9e'),
  });
  const info = await startDaemon(t, { cwd });
  const run = (args: string[], env: NodeJS.ProcessEnv = {}) => wfxIn(args, { cwd, env });
  const published = await run(['flow', 'publish', 'approve.yaml']);
  if (published.code !== 0) throw new Error(published.stderr);

  await t.test('a run followed to the end while its input node is answered; exit codes 0, 1, 3, 4', async (t) => {
    // wfx run --follow as a real child process; answer the input node when the log shows the wait.
    const child = spawnWfx(t, ['run', PID, '--follow'], { cwd });
    const exited = once(child, 'exit');
    let id = '';
    child.stderr.on('data', (d: Buffer) => (id ||= /started (\S+)/.exec(d.toString())?.[1] ?? ''));
    const lines: string[] = [];
    for await (const line of createInterface({ input: child.stdout })) {
      lines.push(line);
      if (line.includes('waiting for input')) {
        const answered = await run(['task', 'complete', id, 'ask', '--set', 'ok=true']);
        t.equal(answered.code, 0, 'task complete');
      }
    }
    const [code] = await exited;
    t.equal(code, 0, 'run --follow exits 0 when the execution completed');
    t.ok(
      lines.some((l) => /INFO  Approve: execution started/.test(l)),
      'log lines as they come',
    );
    t.ok(lines.some((l) => /ask.*waiting for input/.test(l)));
    t.ok(lines.includes(`${id} completed`), 'then the final state');
    t.equal(lines.at(-1), 'output: {"answer":true}', 'and the output');

    const id2 = (await run(['run', PID])).stdout.trim();
    await run(['task', 'complete', id2, 'ask', '--set', 'ok=false']);
    const failed = await run(['instances', 'get', id2, '--json']);
    t.equal(JSON.parse(failed.stdout).stateCd, 2, 'the else path fails on an unknown variable');

    // Exit 1: --wait on an execution that fails.
    const waiter = spawnWfx(t, ['run', PID, '--wait'], { cwd });
    const waiterExit = once(waiter, 'exit');
    let waiterErr = '';
    for await (const chunk of waiter.stderr) {
      waiterErr += chunk;
      const m = /started (\S+)/.exec(waiterErr);
      if (m) {
        await run(['task', 'complete', m[1]!, 'ask', '--set', 'ok=false']);
        break;
      }
    }
    t.equal((await waiterExit)[0], 1, 'exit 1: the execution failed');

    // Exit 3: cancelled while waited for.
    const canceller = spawnWfx(t, ['run', PID, '--wait'], { cwd });
    const cancelExit = once(canceller, 'exit');
    let cancelErr = '';
    for await (const chunk of canceller.stderr) {
      cancelErr += chunk;
      const m = /started (\S+)/.exec(cancelErr);
      if (m) {
        t.equal((await run(['instances', 'cancel', m[1]!])).code, 0);
        break;
      }
    }
    t.equal((await cancelExit)[0], 3, 'exit 3: cancelled');

    const timeout = await run(['run', PID, '--wait', '--timeout', '0.5', '--json']);
    t.equal(timeout.code, 4, 'exit 4: --timeout passed');
    t.match(
      JSON.parse(timeout.stdout),
      { processInstanceId: String, timedOut: true },
      'the id is printed to pick the run up later',
    );
  });

  await t.test(
    'run --wait on a terminal: a spinner with the elapsed time on stderr, erased before the result',
    async (t) => {
      const terminal = { cwd, env: { CI: '' }, tty: { stdout: true, stderr: true, columns: 100 } };
      const waitingAtAsk = async () =>
        (
          JSON.parse((await run(['instances', 'list', PID, '--json'])).stdout) as Array<{
            processInstanceId: string;
            waitingNodeIds: string[];
          }>
        )
          .filter((i) => i.waitingNodeIds.includes('ask'))
          .map((i) => i.processInstanceId);
      // Runs of the tests before wait there too: this one is the one that was not there before.
      const before = new Set(await waitingAtAsk());
      const waiting = wfxIn(['run', PID, '--wait'], terminal);
      // It waits at the input node, spinning: answer it, and the run ends.
      const id = await eventually('the run waits at its input node', async () =>
        (await waitingAtAsk()).find((i) => !before.has(i)),
      );
      t.equal((await run(['task', 'complete', id, 'ask', '--set', 'ok=true'])).code, 0);
      const res = await waiting;
      t.equal(res.code, 0, res.stderr);
      const frames = res.stderr.split(CLEAR_LINE).slice(1, -1);
      t.ok(frames.length > 0, 'frames were drawn');
      for (const frame of frames)
        t.match(frame, new RegExp(`^[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] running ${id} \\d+s$`), 'spinner, id, elapsed time');
      t.ok(res.stderr.endsWith(CLEAR_LINE), 'the line erased at the end');
      const result = res.interleaved!.indexOf(`${id} completed`);
      t.equal(
        res.interleaved!.lastIndexOf(CLEAR_LINE, result) + CLEAR_LINE.length,
        result,
        'erased right before the result',
      );
      t.equal(res.stdout, `${id} completed\noutput: {"answer":true}\n`, 'stdout has the result only');
      t.notMatch(res.stderr, /\u001b\[3\dm/, 'no colour under NO_COLOR');

      // A flow that ends at once: the first frame is drawn all the same, where a spinner belongs.
      const now = `processId: 7a8b9c0d-1e2f-4a3b-8c4d-5e6f7a8b9c0d
name: Now
nodes:
  start: { type: startEvent, next: end }
  end: { type: endEvent }
`;
      await writeFile(join(cwd, 'now.yaml'), now);
      const cases: Array<[string, string[], NodeJS.ProcessEnv, RegExp | null]> = [
        ['in colour where colour is allowed', [], { CI: '', NO_COLOR: '' }, /\u001b\[36m⠋\u001b\[0m running /],
        [
          'without colour with --no-color',
          ['--no-color'],
          { CI: '', NO_COLOR: '' },
          /^(?![\s\S]*\u001b\[3)[\s\S]*⠋ running /,
        ],
        ['none in CI', [], { CI: 'true' }, null],
        ['none with --json', ['--json'], { CI: '' }, null],
      ];
      for (const [what, args, env, frame] of cases) {
        const res = await wfxIn(['run', 'now.yaml', '--wait', ...args], { ...terminal, env });
        t.equal(res.code, 0, res.stderr);
        if (frame) t.match(res.stderr, frame, `a spinner ${what}`);
        else t.notMatch(res.stderr, /⠋|running /, `a spinner: ${what}`);
      }
    },
  );

  await t.test('exit codes 2 and 5, and --json that is only JSON, for every command', async (t) => {
    t.equal((await run(['run', PID, '--set', 'novalue'])).code, 2, 'usage');
    const invalid = await run([
      'task',
      'complete',
      (await run(['run', PID])).stdout.trim(),
      'ask',
      '--set',
      'ok=maybe',
    ]);
    t.equal(invalid.code, 2, 'task data that does not fit: 2');
    t.match(invalid.stderr, /^VALIDATION_ERROR: /);
    const unauth = await run([
      'flow',
      'list',
      '--api-key',
      'apk_0000000000000000_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA',
    ]);
    t.equal(unauth.code, 5, 'authentication failed: 5');
    t.match(unauth.stderr, /UNAUTHORIZED: .*tried the API key from --api-key[\s\S]*hint: /);
    const unreachable = await run(['flow', 'list', '--url', 'http://127.0.0.1:9']);
    t.equal(unreachable.code, 5, 'unreachable: 5');

    const id = (await run(['run', PID, '--correlation-key', 'k1'])).stdout.trim();
    const json: string[][] = [
      ['flow', 'list'],
      ['flow', 'show', PID],
      ['instances', 'list'],
      ['instances', 'list', PID, '--state', 'running'],
      ['instances', 'get', id],
      ['logs', id],
      ['keys', 'list'],
      ['keys', 'create', '--name', 'x', '--role', 'viewer'],
      ['env', 'set', 'A', 'b'],
      ['env', 'list'],
      ['event', 'send', 'nothing', '--correlation-key', 'k', '--ttl', '60'],
      ['run', PID],
      ['task', 'complete', id, 'ask', '--set', 'ok=true'],
      ['daemon', 'status'],
      ['flow', 'validate', 'approve.yaml'],
      ['expr', '${1 + 1}'],
    ];
    for (const args of json) {
      const res = await run([...args, '--json']);
      t.equal(res.code, 0, `${args.join(' ')} --json exits 0 (${res.stderr.trim()})`);
      try {
        const lines = res.stdout.trim().split('\n');
        if (args[0] === 'logs') for (const l of lines) JSON.parse(l);
        else JSON.parse(res.stdout);
        t.pass(`${args.join(' ')} --json is JSON`);
      } catch {
        t.fail(`${args.join(' ')} --json printed: ${res.stdout.slice(0, 200)}`);
      }
    }
  });

  await t.test('credentials: --api-key, then WFX_API_KEY, then wfx login, then bootstrap.key', async (t) => {
    const bootstrap = (await readFile(join(cwd, '.wfx', 'bootstrap.key'), 'utf8')).trim();
    const viewer = (await run(['keys', 'create', '--name', 'v', '--role', 'viewer'])).stdout.trim();
    const bad = 'apk_0000000000000000_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA';
    const home = { XDG_CONFIG_HOME: join(cwd, 'config') };
    // keys list needs ADMIN: the bootstrap key passes, the viewer is 403 (exit 1), a bad key 401 (exit 5).
    t.equal((await run(['keys', 'list'], home)).code, 0, 'bootstrap.key when nothing else is given');
    // A real process: the OS keyring library reads the process's own environment, and the
    // helper gives a child no D-Bus session, so `wfx login` never writes to the user's keyring.
    const login = await wfx(['login', '--api-key', viewer], { cwd, env: home });
    t.equal(login.code, 0);
    t.match(
      login.stdout,
      /kept in .*credentials\.json \(no OS keyring service answered\)/,
      'no keyring here: a file, and it says so',
    );
    t.equal((await run(['keys', 'list'], home)).code, 1, 'the login key wins over bootstrap.key');
    t.equal(
      (await run(['keys', 'list'], { ...home, WFX_API_KEY: bootstrap })).code,
      0,
      'WFX_API_KEY wins over the login key',
    );
    t.equal(
      (await run(['keys', 'list', '--api-key', bad], { ...home, WFX_API_KEY: bootstrap })).code,
      5,
      '--api-key wins over WFX_API_KEY',
    );
    const file = await readFile(join(cwd, 'config', 'wfx', 'credentials.json'), 'utf8');
    t.same(Object.keys(JSON.parse(file)), [info.url], 'kept per daemon URL');
    const { stat } = await import('node:fs/promises');
    t.equal((await stat(join(cwd, 'config', 'wfx', 'credentials.json'))).mode & 0o777, 0o600);
  });

  await t.test("wfx run and wfx instances get name the execution's console address; --json does not", async (t) => {
    const started = await run(['run', PID]);
    t.equal(started.code, 0, started.stderr);
    const id = started.stdout.trim();
    t.equal(started.stdout, `${id}\n`, 'stdout: the id alone, for scripts');
    t.equal(started.stderr, `console: ${info.url}/executions/${id}\n`, 'stderr: where the console shows it');

    // It waits for input: --timeout ends the wait, not the execution.
    const waited = await run(['run', PID, '--timeout', '0.2']);
    t.equal(waited.code, 4);
    const waitedId = /^started (\S+)$/m.exec(waited.stderr)?.[1];
    t.match(waited.stderr, new RegExp(`^started ${waitedId}\\nconsole: ${info.url}/executions/${waitedId}$`, 'm'));

    const got = await run(['instances', 'get', id]);
    t.match(
      got.stdout,
      new RegExp(`^started .*\\nconsole: ${info.url}/executions/${id}$`, 'm'),
      'under when it started',
    );
    for (const args of [
      ['run', PID],
      ['instances', 'get', id],
    ]) {
      const res = await run([...args, '--json']);
      t.notMatch(res.stdout, /executions\//, `${args[0]} --json: the API's answer as it is`);
      t.equal(res.stderr, '', `${args[0]} --json: nothing on stderr`);
    }
  });

  await t.test('the local bootstrap key is never sent to another URL', async (t) => {
    // A listener that records the headers it gets, standing in for another host.
    const { createServer } = await import('node:http');
    const seen: Array<string | undefined> = [];
    const other = createServer((req, res) => {
      seen.push(req.headers['x-api-key'] as string | undefined);
      res
        .writeHead(401, { 'content-type': 'application/json' })
        .end('{"error":"UNAUTHORIZED","message":"no","timestamp":"x"}');
    });
    await new Promise<void>((r) => other.listen(0, '127.0.0.1', r));
    t.teardown(() => new Promise<void>((r) => other.close(() => r())));
    const url = `http://127.0.0.1:${(other.address() as { port: number }).port}`;
    const res = await run(['flow', 'list', '--url', url], { XDG_CONFIG_HOME: join(cwd, 'no-login') });
    t.equal(res.code, 5);
    t.same(seen, [undefined], 'no X-API-Key went to the other host');
    t.match(res.stderr, /tried no credential/);
  });

  await t.test(
    'wfx run with data that does not match the flow inputs: exit 2, the field named, nothing started',
    async (t) => {
      const pid = ORDER_PID;
      t.equal((await run(['flow', 'publish', 'order.yaml'])).code, 0);

      const missing = await run(['run', pid, '--set', 'notify=false']);
      t.equal(missing.code, 2, 'a validation error: exit 2');
      t.match(missing.stderr, /^VALIDATION_ERROR: data\.orderId is required \(the inputs of flow Order, version 1\)$/m);
      t.equal(missing.stdout, '', 'no execution id');
      const wrong = await run(['run', pid, '--data', '{"orderId": 42}']);
      t.equal(wrong.code, 2);
      t.match(wrong.stderr, /^VALIDATION_ERROR: data\.orderId must be string/m);
      const listed = JSON.parse((await run(['instances', 'list', pid, '--json'])).stdout) as unknown[];
      t.same(listed, [], 'nothing started');

      const ok = await run(['run', pid, '--set', 'orderId=A1', '--wait']);
      t.equal(ok.code, 0, ok.stderr);
      t.match(ok.stdout, /^output: \{"orderId":"A1","notify":true\}$/m, 'the default reached the variables');
    },
  );

  await t.test('wfx run for scripts: a name, --timeout alone, --follow --json ending with the result', async (t) => {
    const byName = await run(['run', 'Approve', '--json']);
    t.equal(byName.code, 0, byName.stderr);
    t.match(JSON.parse(byName.stdout), { processId: PID }, "a flow's name where it is unique");
    t.equal((await run(['run', 'approve', '--json'])).code, 0, 'in any case when no name matches exactly');
    const none = await run(['run', 'Nothing like it']);
    t.equal(none.code, 1);
    t.match(none.stderr, /^PROCESS_NOT_FOUND: no flow Nothing like it/);

    const timedOut = await run(['run', PID, '--timeout', '0.2', '--json']);
    t.equal(timedOut.code, 4, '--timeout without --wait waits');
    t.match(JSON.parse(timedOut.stdout), { timedOut: true });
  });

  await t.test(
    'wfx run: a second flow of the same name, a flow active in DEVELOPMENT only, --follow --json',
    async (t) => {
      t.equal((await run(['flow', 'publish', 'quick.yaml', '--env', 'DEVELOPMENT'])).code, 0);

      const notHere = await run(['run', '5a6b7c8d-9e0f-4a1b-8c2d-3e4f5a6b7c8d']);
      t.equal(notHere.code, 1);
      t.match(
        notHere.stderr,
        /^PROCESS_NOT_PUBLISHED: flow Quick \(5a6b7c8d-.*\) has no active version in PRODUCTION; version 1 is active in DEVELOPMENT: start it there \(environment DEVELOPMENT, wfx run --env DEVELOPMENT\)/,
      );

      const followed = await run(['run', 'Quick', '--env', 'DEVELOPMENT', '--follow', '--json']);
      t.equal(followed.code, 0, followed.stderr);
      const lines = followed.stdout.trimEnd().split('\n');
      t.ok(lines.length > 1, 'log lines, then the result');
      for (const line of lines) JSON.parse(line);
      t.match(JSON.parse(lines.at(-1)!), {
        processId: '5a6b7c8d-9e0f-4a1b-8c2d-3e4f5a6b7c8d',
        state: 'COMPLETED',
        output: { ok: true },
      });
      t.match(JSON.parse(lines[0]!), { id: Number, message: String }, 'the log lines before it');

      t.equal((await run(['flow', 'publish', 'twin.yaml', '--env', 'DEVELOPMENT'])).code, 0);
      const twins = await run(['run', 'Quick', '--env', 'DEVELOPMENT']);
      t.equal(twins.code, 2);
      t.match(
        twins.stderr,
        /^USAGE_ERROR: 2 flows are named Quick: give one's processId \((?=.*5a6b7c8d)(?=.*6b7c8d9e)/,
      );
    },
  );
});
