import '../setup/fixtures.js'; // fixtures under the OS temp dir (see there)
import { once } from 'node:events';
import { mkdir, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { startDaemon, wfxIn } from '../helpers/cli.js';

const PID = '88888888-8888-4888-8888-888888888888';
const FLOW = `processId: ${PID}
name: Call out
nodes:
  start: { type: startEvent, next: call }
  call: { type: serviceTask, url: "{target}", retry: { maxAttempts: 2, initialInterval: 10ms }, resultVariable: reply, next: done }
  done: { type: endEvent }
`;

/** A loopback server: /redirect?to=URL answers 302 to URL, anything else 200 `{ok: true}`. */
async function localServer(t: Test): Promise<string> {
  const srv = createServer((req, res) => {
    const to = new URL(req.url ?? '/', 'http://x').searchParams.get('to');
    if (to !== null) res.writeHead(302, { location: to }).end();
    else res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
  });
  srv.listen(0, '127.0.0.1');
  await once(srv, 'listening');
  t.teardown(() => srv.close());
  return `http://127.0.0.1:${(srv.address() as AddressInfo).port}`;
}

/** Each test's fixture directory, made by its first daemonWith. */
const roots = new WeakMap<Test, string>();

/**
 * A daemon (with `args`) in directory `name` of the test's own, and a flow calling `{target}`;
 * `call(url)` runs it (one CLI process) and resolves with the execution. Each daemon of a test
 * has a directory of its own: a second `t.testdir()` would remove the first under its daemon.
 */
async function daemonWith(t: Test, name: string, args: string[] = []) {
  let root = roots.get(t);
  if (root === undefined) roots.set(t, (root = t.testdir())); // made once, removed at the test's end
  const cwd = join(root, name);
  await mkdir(cwd);
  await writeFile(join(cwd, 'call.yaml'), FLOW);
  const info = await startDaemon(t, { cwd, args });
  const run = (a: string[]) => wfxIn(a, { cwd });
  t.equal((await run(['flow', 'publish', 'call.yaml'])).code, 0);
  const call = async (url: string) => {
    const res = await run(['run', PID, '--data', JSON.stringify({ target: url }), '--wait', '--json']);
    return JSON.parse(res.stdout) as {
      stateCd: number;
      data: { reply?: { status: number }; error?: { code: string; message: string } };
    };
  };
  return { port: Number(new URL(info.url).port), call };
}

t.test(
  'by default: the daemon own port at any address, and a redirect to it, are refused; other local servers are not',
  async (t) => {
    const local = await localServer(t);
    const { port, call } = await daemonWith(t, 'default');
    for (const url of [
      `http://127.0.0.1:${port}/health`,
      `http://2130706433:${port}/health`,
      `http://0.0.0.0:${port}/health`,
      `http://localhost:${port}/health`,
      `http://[::ffff:127.0.0.1]:${port}/health`,
    ]) {
      const inst = await call(url);
      t.match(inst, { stateCd: 2, data: { error: { code: 'HTTP_FORBIDDEN_ADDRESS' } } }, `${url}: refused`);
      t.match(inst.data.error?.message, String(port), 'the message names the address');
    }
    const redirected = await call(`${local}/redirect?to=${encodeURIComponent(`http://127.0.0.1:${port}/health`)}`);
    t.match(
      redirected,
      { stateCd: 2, data: { error: { code: 'HTTP_FORBIDDEN_ADDRESS' } } },
      'a redirect to the own port: refused',
    );
    t.match(
      await call(`${local}/anything`),
      { stateCd: 1, data: { reply: { status: 200 } } },
      'another loopback server: allowed',
    );
  },
);

t.test('--http-deny refuses a network; --http-allow re-allows what a built-in rule refuses', async (t) => {
  const local = await localServer(t);
  const denied = await daemonWith(t, 'denied', ['--http-deny', '127.0.0.0/8']);
  t.match(
    await denied.call(`${local}/anything`),
    { stateCd: 2, data: { error: { code: 'HTTP_FORBIDDEN_ADDRESS' } } },
    '--http-deny 127.0.0.0/8: a loopback server is refused',
  );
  const allowed = await daemonWith(t, 'allowed', ['--http-allow', '127.0.0.1/32']);
  t.match(
    await allowed.call(`http://127.0.0.1:${allowed.port}/health`),
    { stateCd: 1, data: { reply: { status: 200 } } },
    '--http-allow 127.0.0.1/32: the own port is allowed',
  );
});
