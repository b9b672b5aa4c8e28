import '../../setup/fixtures.js'; // fixtures under the OS temp dir (see there)
import t from 'tap';
import { startDaemon, wfxIn } from '../../helpers/cli.js';

const ASK = `processId: 3c4d5e6f-7a8b-4c9d-8e0f-1a2b3c4d5e6f
name: Ask
nodes:
  start: { type: startEvent, next: ask }
  ask: { type: inputNode, inputType: number, next: done }
  done: { type: endEvent }
`;

/** The longest text both begin with. */
function commonPrefix(a: string, b: string): string {
  let i = 0;
  while (i < a.length && a[i] === b[i]) i++;
  return a.slice(0, i);
}

t.test('a flow by its name: flow show and instances list take it as run does', async (t) => {
  const cwd = t.testdir({ 'ask.yaml': ASK });
  await startDaemon(t, { cwd });
  const run = (args: string[]) => wfxIn(args, { cwd });
  t.equal((await run(['flow', 'publish', 'ask.yaml'])).code, 0);
  const show = await run(['flow', 'show', 'Ask', '--json']);
  t.equal(show.code, 0, show.stderr);
  t.equal((JSON.parse(show.stdout) as { processId: string }).processId, '3c4d5e6f-7a8b-4c9d-8e0f-1a2b3c4d5e6f');
  t.equal((await run(['flow', 'show', 'ask'])).code, 0, 'in any case when no name is exact');
  const none = await run(['flow', 'show', 'Nope']);
  t.equal(none.code, 1);
  t.match(none.stderr, /^PROCESS_NOT_FOUND: /);
  const id = (await run(['run', 'Ask'])).stdout.trim();
  const listed = JSON.parse((await run(['instances', 'list', 'Ask', '--json'])).stdout) as Array<{
    processInstanceId: string;
  }>;
  t.same(
    listed.map((i) => i.processInstanceId),
    [id],
  );
});

t.test('an execution by a unique prefix of its id, AMBIGUOUS_ID listing candidates when not unique', async (t) => {
  const cwd = t.testdir({ 'ask.yaml': ASK });
  await startDaemon(t, { cwd });
  const run = (args: string[]) => wfxIn(args, { cwd });
  t.equal((await run(['flow', 'publish', 'ask.yaml'])).code, 0);
  const a = (await run(['run', 'Ask'])).stdout.trim();
  const b = (await run(['run', 'Ask'])).stdout.trim();
  const unique = (id: string, other: string) => id.slice(0, commonPrefix(id, other).length + 1);

  const got = await run(['instances', 'get', unique(a, b), '--json']);
  t.equal(got.code, 0, got.stderr);
  t.equal((JSON.parse(got.stdout) as { processInstanceId: string }).processInstanceId, a);
  const logs = await run(['logs', unique(b, a)]);
  t.equal(logs.code, 0, logs.stderr);
  const long = await run(['task', 'complete', b.slice(0, 30), 'ask', '--set', 'inputValue=1']);
  t.equal(long.code, 0, long.stderr);
  t.equal(long.stdout, `${b} resumed at ask\n`, 'a prefix past the time digits: the whole id');

  const shared = commonPrefix(a, b);
  t.ok(shared.length >= 4, 'two ids started together share their first digits');
  const both = await run(['instances', 'cancel', shared]);
  t.equal(both.code, 2, 'ambiguous: a usage error');
  t.match(both.stderr, /^AMBIGUOUS_ID: /);
  t.match(both.stderr, a);
  t.match(both.stderr, b);

  const none = await run(['instances', 'get', 'ffff']);
  t.equal(none.code, 1);
  t.match(none.stderr, /^INSTANCE_NOT_FOUND: /);
  const cancelled = await run(['instances', 'cancel', unique(a, b)]);
  t.equal(cancelled.code, 0, cancelled.stderr);
  t.equal(cancelled.stdout, `${a} cancelled\n`);
});

t.test('outside the directory a daemon serves: instances list and daemon status say where it is', async (t) => {
  const served = t.testdir({ a: {}, b: {} });
  const { url } = await startDaemon(t, { cwd: `${served}/a` });
  const elsewhere = { cwd: `${served}/b`, env: { WFX_URL: url } };

  const list = await wfxIn(['instances', 'list'], elsewhere);
  t.equal(list.code, 5);
  t.match(list.stderr, /^UNAUTHORIZED: /);
  t.match(list.stderr, `serves ${url} for another directory`);
  t.match(list.stderr, /--api-key/);

  const status = await wfxIn(['daemon', 'status', '--json'], elsewhere);
  t.equal(status.code, 5, 'none runs on this directory');
  const body = JSON.parse(status.stdout) as { running: boolean; elsewhere?: { url: string; version: string } };
  t.equal(body.running, false);
  t.equal(body.elsewhere?.url, url);
  t.type(body.elsewhere?.version, 'string');
  const text = await wfxIn(['daemon', 'status'], elsewhere);
  t.match(text.stdout, `serves ${url} for another directory`);

  // Where no daemon answers, no such line.
  const nowhere = await wfxIn(['daemon', 'status', '--json'], {
    cwd: `${served}/b`,
    env: { WFX_URL: 'http://127.0.0.1:9' },
  });
  t.equal((JSON.parse(nowhere.stdout) as { elsewhere?: unknown }).elsewhere, undefined);

  // WFX_DEFAULT_URL is tried where nothing else names a daemon, as the default address is.
  const fallback = await wfxIn(['daemon', 'status', '--json'], { cwd: `${served}/b`, env: { WFX_DEFAULT_URL: url } });
  t.equal((JSON.parse(fallback.stdout) as { elsewhere?: { url: string } }).elsewhere?.url, url);
  const own = await wfxIn(['instances', 'list', '--json'], {
    cwd: `${served}/a`,
    env: { WFX_DEFAULT_URL: 'http://127.0.0.1:9' },
  });
  t.equal(own.code, 0, "a directory's own daemon is still the one it talks to");
});

const LOOPS = `processId: 6d7e8f90-a1b2-4c3d-9e4f-5a6b7c8d9e0f
name: Each order
nodes:
  start: { type: startEvent, next: each }
  each:
    type: loopNode
    collection: "{orders}"
    nodes:
      s: { type: startEvent, next: ask }
      ask: { type: inputNode, inputType: textbox, next: e }
      e: { type: endEvent }
    next: done
  done: { type: endEvent }
`;

t.test("a prefix its loop's iteration shares: instances name the run, task commands the waiting one", async (t) => {
  const cwd = t.testdir({ 'loops.yaml': LOOPS });
  await startDaemon(t, { cwd });
  const run = (args: string[]) => wfxIn(args, { cwd });
  t.equal((await run(['flow', 'publish', 'loops.yaml'])).code, 0);
  const root = (await run(['run', '6d7e8f90-a1b2-4c3d-9e4f-5a6b7c8d9e0f', '--data', '{"orders":[1]}'])).stdout.trim();
  const children = JSON.parse((await run(['instances', 'list', '--all', '--json'])).stdout) as Array<{
    processInstanceId: string;
    parentInstanceId: string | null;
  }>;
  const iteration = children.find((c) => c.parentInstanceId === root)!.processInstanceId;
  const shared = commonPrefix(root, iteration);
  // The iteration is drawn in the same step: its id may share no more than the millisecond.
  t.ok(shared.length >= 4, `the run and its iteration share ${shared}`);
  const got = await run(['instances', 'get', shared, '--json']);
  t.equal(got.code, 0, got.stderr);
  t.equal((JSON.parse(got.stdout) as { processInstanceId: string }).processInstanceId, root, 'instances: the run');
  const shown = await run(['task', 'show', shared]);
  t.equal(shown.code, 0, shown.stderr);
  t.match(shown.stdout, new RegExp(`^${iteration} ask \\(inputNode, textbox\\)`), 'task show: the iteration waiting');
  const done = await run(['task', 'complete', shared, '--set', 'inputValue=ok']);
  t.equal(done.code, 0, done.stderr);
  t.equal(done.stdout, `${iteration} resumed at ask\n`);
});
