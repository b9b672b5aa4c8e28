import '../setup/fixtures.js'; // fixtures under the OS temp dir (see there)
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import t, { type Test } from 'tap';
import { startDaemon, wfxIn } from '../helpers/cli.js';
import { eventually } from '../helpers/eventually.js';

/** A daemon on a fresh data dir, in `cwd`; commands run in `cwd` (they find the daemon there). */
async function setup(t: Test, files: Record<string, string>) {
  const cwd = t.testdir(files);
  const info = await startDaemon(t, { cwd });
  return { info, run: (args: string[]) => wfxIn(args, { cwd }) };
}

/** A flow running `body`; a short timeout (300ms) unless a script must run into another limit first. */
const script = (id: string, body: string, timeout = '300ms') => `processId: ${id}
name: Script ${id.slice(0, 4)}
nodes:
  start: { type: startEvent, next: run }
  run: { type: scriptTask, script: ${JSON.stringify(body)}, timeout: ${timeout}, next: done }
  done: { type: endEvent }
`;

t.test('hostile scripts fail only their own node: the daemon stays healthy and runs the next flow', async (t) => {
  const hostile = [
    ['11111111-1111-4111-8111-111111111111', 'while (true) {}', 'SCRIPT_TIMEOUT'],
    [
      '22222222-2222-4222-8222-222222222222',
      'let a = []; while (true) a.push({ big: new Array(1000).fill(a.length) });',
      'SCRIPT_MEMORY',
    ],
    ['33333333-3333-4333-8333-333333333333', 'process.exit(1)', 'SCRIPT_ERROR'],
    [
      '44444444-4444-4444-8444-444444444444',
      'return require("child_process").execSync("id").toString()',
      'SCRIPT_ERROR',
    ],
    [
      '55555555-5555-4555-8555-555555555555',
      'return globalThis.constructor.constructor("return process")().pid',
      'SCRIPT_ERROR',
    ],
  ] as const;
  const files: Record<string, string> = {
    'ok.yaml': script('66666666-6666-4666-8666-666666666666', 'return { fine: vars.n + 1 }'),
  };
  // The memory hog gets time enough to reach the memory limit however loaded the machine is.
  for (const [id, body, code] of hostile)
    files[`${id}.yaml`] = script(id, body, code === 'SCRIPT_MEMORY' ? '60s' : '300ms');
  const { info, run } = await setup(t, files);
  for (const name of Object.keys(files)) t.equal((await run(['flow', 'publish', name])).code, 0, `published ${name}`);
  for (const [id, , code] of hostile) {
    const res = await run(['run', id, '--wait', '--json']);
    t.equal(res.code, 1, `${code}: wfx run exits 1 (Failed)`);
    t.match(
      JSON.parse(res.stdout),
      { stateCd: 2, data: { error: { code, nodeId: 'run' } } },
      `${code}: data.error names it`,
    );
  }
  const health = await fetch(`${info.url}/health`);
  t.equal(health.status, 200, 'the daemon is healthy');
  const ok = await run(['run', '66666666-6666-4666-8666-666666666666', '--set', 'n=41', '--wait', '--json']);
  t.equal(ok.code, 0);
  t.match(JSON.parse(ok.stdout), { stateCd: 1, data: { fine: 42 } }, 'and the next script runs');
});

t.test(
  'a serviceTask over a real daemon: an unset {env.NAME} named, then 503 and 200 retried, the result kept, the retry logged',
  async (t) => {
    let n = 0;
    const srv = createServer((req, res) =>
      ++n === 1
        ? res.writeHead(503).end()
        : res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ path: req.url })),
    );
    srv.listen(0, '127.0.0.1');
    await once(srv, 'listening');
    t.teardown(() => srv.close());
    const url = `http://127.0.0.1:${(srv.address() as AddressInfo).port}`;
    const { run } = await setup(t, {
      'call.yaml': `processId: 77777777-7777-4777-8777-777777777777
name: Call
nodes:
  start: { type: startEvent, next: call }
  call: { type: serviceTask, url: "{env.BASE}/items/{id}", retry: { initialInterval: 10ms }, resultVariable: reply, next: done }
  done: { type: endEvent }
`,
    });
    t.equal((await run(['flow', 'publish', 'call.yaml'])).code, 0);
    // Before {env.BASE} is set: the failure names it, and no call is made.
    const unset = await run(['run', '77777777-7777-4777-8777-777777777777', '--set', 'id=9', '--wait', '--json']);
    t.equal(unset.code, 1, 'the run fails');
    const failed = JSON.parse(unset.stdout) as { processInstanceId: string; data: { error: unknown } };
    t.match(failed.data.error, {
      code: 'ENV_NOT_SET',
      nodeId: 'call',
      message: /^\{env\.BASE\} has no value in PRODUCTION: wfx env set BASE VALUE --env PRODUCTION/,
    });
    t.equal(n, 0, 'no call was made');
    t.equal((await run(['env', 'set', 'BASE', url])).code, 0, '{env.BASE} set for PRODUCTION');
    const retried = await run(['instances', 'retry', failed.processInstanceId]);
    t.equal(retried.code, 0, retried.stderr);
    const inst = await eventually('the retried run completes', async () => {
      const got = JSON.parse((await run(['instances', 'get', failed.processInstanceId, '--json'])).stdout) as {
        processInstanceId: string;
        state: string;
        data: { reply: unknown };
      };
      return got.state === 'COMPLETED' && got;
    });
    t.match(inst.data.reply, { status: 200, body: { path: '/items/9' } });
    const logs = await run(['logs', inst.processInstanceId]);
    t.match(logs.stdout, /WARN .*attempt 1 failed \(HTTP 503/, 'the retry is in the log');
  },
);
