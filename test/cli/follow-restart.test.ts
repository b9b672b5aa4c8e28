import '../setup/fixtures.js'; // fixtures under the OS temp dir (see there)
import { once } from 'node:events';
import { createServer } from 'node:net';
import { createInterface } from 'node:readline';
import t from 'tap';
import { killIfAlive, spawnWfx, wfx } from '../helpers/cli.js';

const FLOW = `processId: 5e6f7081-92a3-4bb4-8d5e-6f708192a3b4
name: Survives
nodes:
  start: { type: startEvent, next: ask }
  ask: { type: inputNode, inputType: textbox, next: done }
  done: { type: endEvent }
`;

/** A port that was free a moment ago (the daemon must come back on the same URL). */
async function freePort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const port = (srv.address() as { port: number }).port;
  await new Promise<void>((r) => srv.close(() => r()));
  return port;
}

t.test('wfx run --follow rides through a daemon restart, resuming with Last-Event-ID', async (t) => {
  const cwd = t.testdir({ 'flow.yaml': FLOW });
  const port = String(await freePort());
  const start = async () => {
    const res = await wfx(['daemon', 'start', '--port', port, '--json'], { cwd });
    if (res.code !== 0) throw new Error(res.stderr);
    const { pid } = JSON.parse(res.stdout) as { pid: number };
    t.teardown(() => killIfAlive(pid));
  };
  await start();
  t.teardown(() => wfx(['daemon', 'stop'], { cwd }));
  t.equal((await wfx(['flow', 'publish', 'flow.yaml'], { cwd })).code, 0);
  const child = spawnWfx(t, ['run', '5e6f7081-92a3-4bb4-8d5e-6f708192a3b4', '--follow', '--json'], { cwd });
  const exited = once(child, 'exit');
  const entries: Array<{ id: number; message: string }> = [];
  let restarted = false;
  for await (const line of createInterface({ input: child.stdout })) {
    const entry = JSON.parse(line) as { id: number; message: string; processInstanceId?: string };
    entries.push(entry);
    if (entry.message === 'waiting for input' && !restarted) {
      restarted = true;
      t.equal((await wfx(['daemon', 'stop'], { cwd })).code, 0, 'the daemon goes away mid-follow');
      await start();
      const id = JSON.parse((await wfx(['instances', 'list', '--json'], { cwd })).stdout)[0]
        .processInstanceId as string;
      t.equal((await wfx(['task', 'complete', id, 'ask', '--set', 'inputValue=ok'], { cwd })).code, 0);
    }
  }
  const [code] = await exited;
  t.equal(code, 0, 'and the run is followed to its end');
  const ids = entries.filter((e) => typeof e.id === 'number' && e.message !== undefined).map((e) => e.id);
  t.same(
    ids,
    ids.map((_, i) => i + 1),
    'every entry exactly once, in order, across the reconnect',
  );
  t.ok(entries.some((e) => e.message === 'execution completed'));
});
