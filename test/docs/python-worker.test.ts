/**
 * The plain-HTTP Python worker of docs/workers.md, run as a reader would run it: taken from the
 * doc as it stands, run by python3 against a real daemon, through a proxy that makes the daemon
 * fail the ways a network and a stopping daemon do.
 */
import '../setup/fixtures.js'; // fixtures under the OS temp dir (see there)
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { createServer, request, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import t, { type Test } from 'tap';
import type { WfxClient } from '../../src/client/client.js';
import { adminClient, killIfAlive, startDaemon } from '../helpers/cli.js';
import { eventually } from '../helpers/eventually.js';
import { chargeFlow } from '../helpers/jobs.js';
import { prepareWorkers } from '../helpers/workers.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const HAVE_PYTHON = spawnSync('python3', ['--version']).status === 0;

/** The ```python block of docs/workers.md that is the plain-HTTP worker. */
function workerExample(): string {
  const doc = readFileSync(join(ROOT, 'docs', 'workers.md'), 'utf8');
  const block = /```python\n(# worker\.py[\s\S]*?)```/.exec(doc);
  if (!block) throw new Error('docs/workers.md has no ```python block starting "# worker.py"');
  return block[1]!;
}

interface PythonWorker {
  readonly proc: ChildProcess;
  /** Its output lines so far. */
  readonly stdout: string[];
  stderr(): string;
  /** Resolves with the exit code (or signal). */
  readonly exited: Promise<number | string>;
}

/** `python3 worker.py URL KEY billing` in `cwd`; killed at teardown. */
function runWorker(t: Test, cwd: string, url: string, apiKey: string): PythonWorker {
  const proc = spawn('python3', ['worker.py', url, apiKey, 'billing'], { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
  const stdout: string[] = [];
  let out = '';
  let err = '';
  proc.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
    out += chunk;
    const lines = out.split('\n');
    out = lines.pop()!;
    stdout.push(...lines);
  });
  proc.stderr!.setEncoding('utf8').on('data', (chunk: string) => (err += chunk));
  const exited = once(proc, 'exit').then(([code, signal]) => (code ?? signal) as number | string);
  t.teardown(async () => {
    killIfAlive(proc.pid);
    await exited;
  });
  return { proc, stdout, stderr: () => err, exited };
}

/** Resolves with how `proc` exited, or rejects once `ms` pass first (the test then fails, not hangs). */
function exitWithin(w: PythonWorker, ms: number): Promise<number | string> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`the worker did not exit within ${ms} ms: ${w.stderr()}`)), ms);
  });
  return Promise.race([w.exited, late]).finally(() => clearTimeout(timer));
}

type Fault = 'pass' | 'unavailable' | 'drop';

/**
 * An HTTP proxy on port 0 in front of `target`: each request is passed on, answered 503
 * SERVICE_UNAVAILABLE (as a stopping daemon answers), or dropped (its connection closed with no
 * answer, as when the daemon goes away), as `fault` says. Records every request it got.
 */
async function faultyProxy(
  t: Test,
  target: string,
  fault: (path: string, seen: number) => Fault,
): Promise<{ url: string; calls: Array<{ path: string; at: number; fault: Fault }> }> {
  const calls: Array<{ path: string; at: number; fault: Fault }> = [];
  const server = createServer((req: IncomingMessage, res) => {
    const path = req.url!;
    const kind = path.replace(/^\/jobs\/[^/]+\//, '/jobs/KEY/');
    const f = fault(path, calls.filter((c) => c.path.replace(/^\/jobs\/[^/]+\//, '/jobs/KEY/') === kind).length);
    calls.push({ path, at: performance.now(), fault: f });
    if (f === 'drop') return void req.socket.destroy();
    if (f === 'unavailable') {
      res.writeHead(503, { 'content-type': 'application/json' });
      return void res.end(JSON.stringify({ error: 'SERVICE_UNAVAILABLE', message: 'the daemon is stopping' }));
    }
    const up = request(`${target}${path}`, { method: req.method, headers: req.headers }, (answer) => {
      res.writeHead(answer.statusCode!, answer.headers);
      answer.pipe(res);
    });
    up.on('error', () => res.destroy());
    req.pipe(up);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  t.teardown(() => {
    server.closeAllConnections();
    return new Promise<void>((resolve) => server.close(() => resolve()));
  });
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, calls };
}

const completed = async (admin: WfxClient, ids: readonly string[]) =>
  (await Promise.all(ids.map((id) => admin.instances.get(id)))).every((i) => i.stateCd === 1);

t.test(
  'the Python worker of docs/workers.md against a real daemon',
  { skip: !HAVE_PYTHON && !process.env.CI && 'python3 is not installed' },
  async (t) => {
    const cwd = t.testdir({ 'worker.py': workerExample() });
    const { url } = await startDaemon(t, { cwd });
    const admin = await adminClient(cwd, url);
    const apiKey = await prepareWorkers(cwd, admin);
    const pid = (await admin.flows.publish({ source: chargeFlow().replace('AUTO', randomUUID()) })).processId;
    const start = async (amount: number) =>
      (await admin.process.start({ processId: pid, data: { amount } })).processInstanceId;

    await t.test('completes jobs, and a SIGTERM stops it with exit 0', async (t) => {
      const w = runWorker(t, cwd, url, apiKey);
      const ids = [await start(1), await start(2), await start(3)];
      await eventually('3 executions completed', () => completed(admin, ids));
      for (const [i, id] of ids.entries())
        t.match((await admin.instances.get(id)).data.charge, { receipt: `r-${i + 1}` });
      await eventually('3 completions printed', () => w.stdout.length === 3);
      t.match(w.stdout, [/ completed$/, / completed$/, / completed$/]);
      w.proc.kill('SIGTERM'); // waiting in a long poll: it stops at once
      t.equal(await exitWithin(w, 10_000), 0);
    });

    await t.test('a refused key ends it with the error instead of polling on', async (t) => {
      const w = runWorker(t, cwd, url, 'apk_not-a-key');
      t.equal(await exitWithin(w, 10_000), 1);
      t.match(w.stderr(), /^UNAUTHORIZED: /m);
    });

    await t.test('a daemon away: it backs off, and sends a result again until it lands', async (t) => {
      // The first two polls are answered 503; the first completion is lost on the way.
      const proxy = await faultyProxy(t, url, (path, seen) => {
        if (path === '/jobs/activate' && seen < 2) return 'unavailable';
        if (/\/complete$/.test(path) && seen === 0) return 'drop';
        return 'pass';
      });
      const id = await start(7);
      const w = runWorker(t, cwd, proxy.url, apiKey);
      await eventually('the execution completed', () => completed(admin, [id]));
      const polls = proxy.calls.filter((c) => c.path === '/jobs/activate').map((c) => c.at);
      t.ok(polls[1]! - polls[0]! >= 900, 'it waited about a second after the first 503');
      t.ok(polls[2]! - polls[1]! >= 1900, 'and twice as long after the second');
      t.match(w.stderr(), /SERVICE_UNAVAILABLE; trying again in 1 s\nSERVICE_UNAVAILABLE; trying again in 2 s\n/);
      const results = proxy.calls.filter((c) => !c.path.endsWith('/activate'));
      t.match(
        results.map((c) => [c.path.split('/').pop(), c.fault]),
        [
          ['complete', 'drop'],
          ['complete', 'pass'],
        ],
        'the completion sent again, never a failure',
      );
      const inst = await admin.instances.get(id);
      t.match(inst.data.charge, { receipt: 'r-7' });
      const logs = (await admin.instances.logs(id)).map((e) => e.message);
      t.same(
        logs.filter((m) => m.startsWith('job activated')).map((m) => /\(attempt \d+/.exec(m)?.[0]),
        ['(attempt 1'],
        'activated once: one attempt',
      );
      await eventually('its completion printed', () => w.stdout.some((l) => / completed$/.test(l)));
      w.proc.kill('SIGTERM');
      t.equal(await exitWithin(w, 10_000), 0);
    });
  },
);
