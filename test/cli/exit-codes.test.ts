import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createServer } from 'node:http';
import t from 'tap';
import { EXIT, exitCodeFor } from '../../src/cli/exit-codes.js';
import { WFX_BIN, wfx, wfxIn } from '../helpers/cli.js';

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
  const child = spawn(process.execPath, [WFX_BIN, 'ai', 'providers', 'create', '--help'], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  t.teardown(() => child.kill('SIGKILL'));
  // Closed before the help is written (the process is still loading), so its write meets EPIPE.
  child.stdout.destroy();
  let stderr = '';
  child.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
  const [code] = (await once(child, 'exit')) as [number | null];
  t.equal(code, 0);
  t.notMatch(stderr, /EPIPE|Unhandled|at /, 'nothing on stderr about it');
});
