import '../../setup/fixtures.js'; // fixtures under the OS temp dir (see there)
import t, { type Test } from 'tap';
import { CLEAR_LINE } from '../../../src/cli/spinner.js';
import type { BulkDryRun, BulkView } from '../../../src/shared/api/index.js';
import { adminClient, startDaemon, wfxIn, type CliOptions } from '../../helpers/cli.js';

const FLOW = (id: string) => `processId: ${id}
name: Waits
nodes:
  start: { type: startEvent, next: ask }
  ask: { type: inputNode, inputType: textbox, next: done }
  done: { type: endEvent }
`;
const A = '5b0c1d2e-3f40-4a51-8b62-7c8d9e0f1a2b';
const B = '6c1d2e3f-4051-4b62-9c73-8d9e0f1a2b3c';

async function setup(t: Test) {
  const cwd = t.testdir({ 'a.yaml': FLOW(A), 'b.yaml': FLOW(B) });
  const info = await startDaemon(t, { cwd });
  const run = (args: string[], options: CliOptions = {}) => wfxIn(args, { cwd, ...options });
  const published = await run(['flow', 'publish', 'a.yaml', 'b.yaml']);
  if (published.code !== 0) throw new Error(published.stderr);
  const client = await adminClient(cwd, info.url);
  const start = async (processId: string, n: number) => {
    const ids: string[] = [];
    for (let i = 0; i < n; i++) ids.push((await client.process.start({ processId, data: {} })).processInstanceId);
    return ids;
  };
  return { run, client, start };
}

t.test('wfx instances cancel --query: dry run, refusal without a terminal, then the operation followed', async (t) => {
  const { run, client, start } = await setup(t);
  const ids = await start(A, 6);
  const others = await start(B, 2);

  const dry = await run(['instances', 'cancel', '--query', '--flow', A, '--state', 'running', '--dry-run', '--json']);
  t.equal(dry.code, 0, dry.stderr);
  const body = JSON.parse(dry.stdout) as BulkDryRun;
  t.equal(body.count, 6);
  t.equal(body.sample.length, 6);
  const human = await run(['instances', 'cancel', '--query', '--flow', A, '--dry-run', '--sample', '2']);
  t.match(human.stdout, /^cancel would select 6 executions\n/);
  t.equal(human.stdout.trim().split('\n').length, 4, 'the count, the header and two of them');

  const refused = await run(['instances', 'cancel', '--query', '--flow', A]);
  t.equal(refused.code, 2, 'no terminal to confirm on: a usage error');
  t.match(refused.stderr, /USAGE_ERROR: .*--yes/);
  const declined = await run(['instances', 'cancel', '--query', '--flow', A], { stdin: 'n\n', tty: { stdin: true } });
  t.equal(declined.code, 2, 'not confirmed');
  t.match(declined.stderr, /cancel 6 executions \(processId=.*\)\? \[y\/N\]/, 'the question says how many and which');
  t.equal((await client.bulk.list()).items.length, 0, 'nothing was created');

  const done = await run(['instances', 'cancel', '--query', '--flow', A], { stdin: 'y\n', tty: { stdin: true } });
  t.equal(done.code, 0, done.stderr);
  t.match(done.stdout, /^bulk cancel \S+ completed: 6 done, 0 skipped\n$/);
  t.match(done.stderr, /6\/6 \(100%\): 6 done, 0 skipped\n/, 'plain progress lines without a terminal');
  for (const id of ids) t.equal((await client.instances.get(id)).stateCd, 3);
  for (const id of others) t.equal((await client.instances.get(id)).stateCd, 0);

  const usage = [
    ['instances', 'cancel', ids[0]!, '--query'],
    ['instances', 'cancel', ids[0]!, '--flow', A],
    ['instances', 'cancel'],
    ['instances', 'cancel', '--query', '--started-before', 'yesterday'],
  ];
  for (const args of usage) t.equal((await run(args)).code, 2, args.slice(2).join(' '));
});

t.test('--detach, a progress bar on a terminal, and wfx instances bulk list|show|follow|cancel', async (t) => {
  const { run, client, start } = await setup(t);
  const ids = await start(B, 3);
  const detached = await run(['instances', 'cancel', '--query', '--flow', B, '--yes', '--detach', '--json']);
  t.equal(detached.code, 0, detached.stderr);
  const created = JSON.parse(detached.stdout) as BulkView;
  t.match(created, { operation: 'cancel', total: 3 });

  const followed = await run(['instances', 'bulk', 'follow', created.bulkId], {
    tty: { stderr: true },
    env: { CI: '' },
  });
  t.equal(followed.code, 0, followed.stderr);
  t.ok(followed.stderr.includes(`${CLEAR_LINE}[########################] 3/3 (100%)`), 'a bar drawn in place');
  t.match(followed.stdout, /completed: 3 done, 0 skipped/);

  const list = JSON.parse((await run(['instances', 'bulk', 'list', '--json'])).stdout) as BulkView[];
  t.same(
    list.map((b) => [b.bulkId, b.state]),
    [[created.bulkId, 'COMPLETED']],
  );
  const shown = JSON.parse((await run(['instances', 'bulk', 'show', created.bulkId, '--json'])).stdout) as {
    results: Array<{ processInstanceId: string; outcome: string }>;
  };
  t.same(shown.results.map((r) => r.processInstanceId).sort(), [...ids].sort());
  const text = (await run(['instances', 'bulk', 'show', created.bulkId])).stdout;
  t.match(text, new RegExp(`^${created.bulkId}  cancel  completed\\nquery: processId=${B}\\n`));

  const cancelled = await run(['instances', 'bulk', 'cancel', created.bulkId]);
  t.equal(cancelled.code, 1);
  t.match(cancelled.stderr, /^BULK_NOT_RUNNING: /);
  const missing = await run(['instances', 'bulk', 'show', '0193a5c2-5d1e-7c3a-9b1f-2a3b4c5d6e7f']);
  t.match(missing.stderr, /^BULK_NOT_FOUND: /);
  t.ok((await client.bulk.get(created.bulkId)).finishedAt);
});
