import '../setup/fixtures.js'; // fixtures under the OS temp dir (see there)
import { once } from 'node:events';
import { createServer } from 'node:http';
import { createInterface } from 'node:readline';
import t from 'tap';
import { EXIT, exitCodeFor } from '../../src/cli/exit-codes.js';
import { spawnWfx, startDaemon, wfx, wfxIn } from '../helpers/cli.js';

t.test('exitCodeFor: usage and validation 2, unreachable and unauthenticated 5, anything else 1', async (t) => {
  for (const code of ['USAGE_ERROR', 'VALIDATION_ERROR', 'FLOW_INVALID', 'EXPRESSION_ERROR'] as const)
    t.equal(exitCodeFor(code), EXIT.USAGE, code);
  for (const code of ['UNAUTHORIZED', 'DAEMON_UNREACHABLE', 'DAEMON_NOT_RUNNING'] as const)
    t.equal(exitCodeFor(code), EXIT.UNREACHABLE, code);
  for (const code of ['FORBIDDEN', 'PROCESS_NOT_FOUND', 'INTERNAL_ERROR'] as const)
    t.equal(exitCodeFor(code), EXIT.FAILED, code);
});

// The rest run bin/wfx.js as a real process: the exit code is what the shell sees.

t.test("bin/wfx.js: 0 on success, 2 on a usage error, the code's exit for a WfxError", async (t) => {
  const ok = await wfx(['expr', '${1 + 1}']);
  t.equal(ok.code, 0);
  t.equal(ok.stdout, '2\n');
  const usage = await wfx(['no-such-command']);
  t.equal(usage.code, 2, 'usage error');
  t.match(usage.stderr, /unknown command/);
  const failed = await wfx(['expr', '${1 +}']);
  t.equal(failed.code, 2, 'EXPRESSION_ERROR: its exit code');
  t.match(failed.stderr, /^EXPRESSION_ERROR: /);
  t.notMatch(failed.stderr, /\n\s+at /, 'an expected error: no stack');
  const version = await wfx(['--version']);
  t.equal(version.code, 0);
  t.match(version.stdout, /^\d+\.\d+\.\d+/);
});

t.test('bin/wfx.js: an unexpected error prints the stack, asks for a report and exits 70', async (t) => {
  // A "daemon" whose answer has a shape the CLI does not expect: the command fails on a TypeError.
  const server = createServer((_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end('{}'));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  const res = await wfx(['flow', 'list', '--url', url, '--api-key', 'apk_test']);
  t.equal(res.code, 70);
  t.match(res.stderr, /^INTERNAL_ERROR: TypeError: [\s\S]*\n\s+at [\s\S]*This is a bug in wfx; please report it\.\n$/);
  const inProcess = await wfxIn(['flow', 'list', '--url', url, '--api-key', 'apk_test']);
  t.same(
    [inProcess.code, inProcess.stderr.split('\n')[0]],
    [70, res.stderr.split('\n')[0]],
    'wfxIn answers as the real process does',
  );
});

t.test('bin/wfx.js: a reader that goes away (`| head`) ends it quietly, exit 0, no stack', async (t) => {
  const child = spawnWfx(t, ['ai', 'providers', 'create', '--help']);
  // Closed before the help is written (the process is still loading), so its write meets EPIPE.
  child.stdout.destroy();
  let stderr = '';
  child.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
  const [code] = (await once(child, 'exit')) as [number | null];
  t.equal(code, 0);
  t.notMatch(stderr, /EPIPE|Unhandled|at /, 'nothing on stderr about it');
});

t.test(
  'bin/wfx.js: `wfx logs ID --follow --json | head -1`: the reader goes while it streams; exit 0, quietly',
  async (t) => {
    const cwd = t.testdir({
      'ask.yaml': `processId: 9c8b7a6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d
name: Ask
nodes:
  start: { type: startEvent, next: ask }
  ask: { type: inputNode, inputType: textbox, next: done }
  done: { type: endEvent }
`,
    });
    await startDaemon(t, { cwd });
    t.equal((await wfxIn(['flow', 'publish', 'ask.yaml'], { cwd })).code, 0);
    const id = (await wfxIn(['run', 'Ask'], { cwd })).stdout.trim();
    const child = spawnWfx(t, ['logs', id, '--follow', '--json'], { cwd });
    let stderr = '';
    child.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
    const exited = once(child, 'exit') as Promise<[number | null, string | null]>;
    // `head -1`: the first line, then the reader is gone while the stream is still open.
    const lines = createInterface({ input: child.stdout });
    const [first] = (await once(lines, 'line')) as [string];
    lines.close();
    child.stdout.destroy();
    t.match(JSON.parse(first), { id: 1, message: 'execution started' }, 'the first line came');
    // The execution goes on: the next entries meet the closed pipe.
    t.equal((await wfxIn(['task', 'complete', id, 'ask', '--set', 'inputValue=ok'], { cwd })).code, 0);
    const [code, signal] = await exited;
    t.same([code, signal], [0, null], 'exit 0');
    t.equal(stderr, '', 'nothing on stderr');
  },
);
