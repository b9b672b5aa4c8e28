import '../setup/fixtures.js'; // fixtures under the OS temp dir (see there)
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { readdir, readFile } from 'node:fs/promises';
import { Agent, request } from 'node:http';
import { connect } from 'node:net';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { eventually } from '../helpers/eventually.js';
import { forgetDaemon, noteDaemon } from '../setup/daemons.js';

/*
 * Issue 53: idle connections beyond the open-files limit made the next journal roll fail with
 * EMFILE (STORE_FAILED) and the daemon exit. A daemon with a low open-files limit, flooded with
 * connections that send nothing, while executions start and the journal rolls every 20 entries.
 */

const FIXTURE = fileURLToPath(new URL('../fixtures/daemon-process.js', import.meta.url));
const OPEN_FILES = 256;
/** Sockets each wave of the flood opens: more than the daemon's open-files limit. */
const WAVE = 400;
const STARTS = 100;
const CHECKPOINT_EVERY = 20;
const WAIT_FLOW = `processId: 5e1a7c2b-3d4f-4a6b-8c9d-0e1f2a3b4c5d
name: Wait
nodes:
  start: { type: startEvent, next: ask }
  ask: { type: inputNode, inputType: textbox, next: done }
  done: { type: endEvent }
`;

/** Opens `n` connections that send nothing; resolves once each is closed (by the daemon: the test never closes them). */
async function wave(port: number, n: number): Promise<void> {
  await Promise.all(
    Array.from({ length: n }, async () => {
      const socket = connect(port, '127.0.0.1');
      socket.on('error', () => undefined); // one over the cap is reset as accepted
      socket.on('data', () => t.fail('a connection that sent nothing got an answer'));
      await new Promise((resolve) => socket.once('close', resolve));
    }),
  );
}

t.test(
  'a flood of idle connections over the open-files limit: the store never fails, idle sockets are closed, /health answers',
  { skip: process.platform !== 'linux' && 'reads the open-files limit from /proc (Linux)' },
  async (t) => {
    const dataDir = join(t.testdir({}), 'data');
    const options = { dataDir, port: 0, checkpointEvery: CHECKPOINT_EVERY, headersTimeoutMs: 1_000 };
    const child = spawn(
      'sh',
      ['-c', `ulimit -n ${OPEN_FILES} && exec "$0" "$@"`, process.execPath, FIXTURE, JSON.stringify(options)],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    noteDaemon(child.pid!);
    let stderr = '';
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    const exited = once(child, 'exit');
    t.teardown(async () => {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM');
        await Promise.race([exited, eventually('the daemon stops', () => child.exitCode !== null)]).catch(() =>
          child.kill('SIGKILL'),
        );
      }
      forgetDaemon(child.pid!);
    });
    const first = await Promise.race([
      once(createInterface({ input: child.stdout }), 'line').then(([line]) => line as string),
      exited.then(() => {
        throw new Error(`the daemon exited before it served: ${stderr}`);
      }),
    ]);
    const url = (JSON.parse(first) as { url: string }).url;
    const port = Number(new URL(url).port);
    const limits = await readFile(`/proc/${child.pid}/limits`, 'utf8');
    t.match(limits, new RegExp(`Max open files\\s+${OPEN_FILES}\\s`), 'the daemon runs under the low limit');
    const key = (await readFile(join(dataDir, 'bootstrap.key'), 'utf8')).trim();

    // One keep-alive connection, opened before the flood: within the cap, it stays served.
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    t.teardown(() => agent.destroy());
    const call = (method: string, path: string, body?: unknown) =>
      new Promise<{ status: number; json: Record<string, unknown> }>((resolve, reject) => {
        const req = request(`${url}${path}`, {
          method,
          agent,
          headers: { 'x-api-key': key, ...(body !== undefined && { 'content-type': 'application/json' }) },
        });
        req.on('error', reject);
        req.on('response', (res) => {
          let text = '';
          res.on('data', (c: Buffer) => (text += c.toString()));
          res.on('error', reject);
          res.on('end', () => resolve({ status: res.statusCode!, json: JSON.parse(text) as Record<string, unknown> }));
        });
        req.end(body === undefined ? undefined : JSON.stringify(body));
      });
    t.equal((await call('POST', '/admin/flows', { source: WAIT_FLOW })).status, 200, 'flow published');

    // The flood, a wave after another until the starts are done.
    let flooding = true;
    let waves = 0;
    const flood = (async () => {
      while (flooding || waves < 2) {
        await eventually(
          `wave ${waves + 1}: every idle socket closed by the daemon`,
          () => wave(port, WAVE).then(() => true),
          { attempts: 1, withinMs: 30_000 },
        );
        waves++;
      }
    })();
    void flood.catch(() => undefined); // awaited below; a failure ends the test there, not before
    const descriptors = async () => (await readdir(`/proc/${child.pid}/fd`)).length;
    await eventually('the flood holds the daemon near its open-files limit', async () => (await descriptors()) > 128);

    // Starts, one after another on that connection, retried when refused (a refused start was
    // not acknowledged; one the connection broke under may have been).
    const acknowledged: string[] = [];
    const starts = (async () => {
      try {
        while (acknowledged.length < STARTS) {
          const res = await eventually('a start is acknowledged', async () => {
            const r = await call('POST', '/process/start', { processId: '5e1a7c2b-3d4f-4a6b-8c9d-0e1f2a3b4c5d' });
            return r.status === 200 && r;
          });
          acknowledged.push(res.json.processInstanceId as string);
        }
      } finally {
        flooding = false;
      }
    })();
    await starts;
    await flood;
    t.ok(waves >= 2, `${waves} waves of ${WAVE} idle sockets, each closed by the daemon`);

    t.equal(child.exitCode, null, 'the daemon still runs');
    t.notMatch(stderr, /stopped:/, 'its store did not fail');
    const log = await readFile(join(dataDir, 'logs', 'daemon.log'), 'utf8');
    t.notMatch(log, /STORE_FAILED|EMFILE|store failed/, 'no store failure in its log');
    const segments = (await readdir(join(dataDir, 'journal'))).map((name) => Number(name.slice(0, 20)));
    t.ok(
      Math.max(...segments) > STARTS - 2 * CHECKPOINT_EVERY,
      `the journal rolled during the flood (newest segment from entry ${Math.max(...segments)})`,
    );
    t.equal(acknowledged.length, STARTS);
    for (const id of acknowledged) {
      const got = await call('GET', `/process/instance/${id}`);
      if (got.status !== 200 || got.json.stateCd !== 0)
        t.fail(`acknowledged start ${id} is not readable: ${got.status}`);
    }
    t.pass(`every acknowledged start (${acknowledged.length}) reads back running`);
    const health = await fetch(`${url}/health`);
    t.equal(health.status, 200, '/health answers on a new connection after the flood');
    await health.body?.cancel();
  },
);
