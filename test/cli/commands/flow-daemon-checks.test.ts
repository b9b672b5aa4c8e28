import '../../setup/fixtures.js'; // fixtures under the OS temp dir (see there)
import t from 'tap';
import { startDaemon, wfxIn } from '../../helpers/cli.js';

// A webhook trigger naming a registration: valid offline, refused by a daemon that has none.
const HOOK = `processId: 3c4d5e6f-7081-4a92-8b3c-4d5e6f708192
name: Hook
triggers:
  - { type: webhook, webhook: github, eventType: push }
nodes:
  start: { type: startEvent, next: done }
  done: { type: endEvent }
`;
const BAD = `processId: 4d5e6f70-8192-4aa3-9c4d-5e6f708192a3
name: Bad
nodes:
  start: { type: startEvent, next: ghost }
  done: { type: endEvent }
`;
const PROBLEM = /^hook\.yaml:4:\d+: triggers\.0\.webhook: .*\[UNKNOWN_WEBHOOK\]$/m;

t.test('wfx flow validate without a daemon says it checked offline only', async (t) => {
  const cwd = t.testdir({ 'hook.yaml': HOOK });
  const res = await wfxIn(['flow', 'validate', 'hook.yaml'], { cwd });
  t.equal(res.code, 0);
  t.equal(res.stdout, 'hook.yaml: ok\n');
  t.match(res.stderr, /^note: checked offline only \(no credential for a daemon at http:/m);
  const json = await wfxIn(['flow', 'validate', 'hook.yaml', '--json'], { cwd });
  t.match(JSON.parse(json.stdout), [{ file: 'hook.yaml', ok: true, checked: 'offline' }]);
  t.equal(json.stderr, '', '--json prints nothing else');
  const offline = await wfxIn(['flow', 'validate', 'hook.yaml', '--offline'], { cwd });
  t.equal(offline.stderr, '', '--offline asked for it: no note');
});

t.test('validate and publish agree on a webhook the daemon lacks, at its file:line:column', async (t) => {
  const cwd = t.testdir({ 'hook.yaml': HOOK });
  await startDaemon(t, { cwd });
  const run = (args: string[]) => wfxIn(args, { cwd });

  const validated = await run(['flow', 'validate', 'hook.yaml']);
  t.equal(validated.code, 2, validated.stderr);
  t.equal(validated.stdout, '');
  const published = await run(['flow', 'publish', 'hook.yaml']);
  t.equal(published.code, 2, published.stderr);
  const where = (stderr: string) => PROBLEM.exec(stderr)?.[0];
  t.ok(where(validated.stderr), 'validate names the trigger at its position');
  t.equal(where(published.stderr), where(validated.stderr), 'publish refuses it at the same place');
  const json = await run(['flow', 'validate', 'hook.yaml', '--json']);
  t.match(JSON.parse(json.stdout), [
    { file: 'hook.yaml', ok: false, checked: 'daemon', problems: [{ code: 'UNKNOWN_WEBHOOK', line: 4 }] },
  ]);
  t.same(JSON.parse((await run(['flow', 'list', '--json'])).stdout), [], 'a validate publishes nothing');

  t.equal((await run(['webhooks', 'create', '--name', 'github', '--provider', 'GITHUB'])).code, 0);
  const ok = await run(['flow', 'validate', 'hook.yaml']);
  t.equal(ok.code, 0, ok.stderr);
  t.equal(ok.stdout, 'hook.yaml: ok\n');
  t.equal(ok.stderr, '', 'checked with the daemon: no offline note');
  t.same(JSON.parse((await run(['flow', 'list', '--json'])).stdout), [], 'still nothing published');
  t.equal((await run(['flow', 'publish', 'hook.yaml'])).code, 0);
});

t.test('wfx run FILE prints the problems of a flow the daemon refuses, and --json the error', async (t) => {
  const cwd = t.testdir({ 'bad.yaml': BAD, 'hook.yaml': HOOK });
  await startDaemon(t, { cwd });
  const run = (args: string[]) => wfxIn(args, { cwd });

  const text = await run(['run', 'bad.yaml', '--wait']);
  t.equal(text.code, 2);
  t.equal(text.stdout, '');
  t.match(text.stderr, /^bad\.yaml:4:36: start\.next: connects to "ghost".*\[UNKNOWN_TARGET\]$/m);
  t.match(text.stderr, /^bad\.yaml:5:\d+: done: .*\[UNREACHABLE\]$/m);
  t.match(text.stderr, /^FLOW_INVALID: the flow has 2 problems\nhint: /m);

  const json = await run(['run', 'bad.yaml', '--wait', '--json']);
  t.equal(json.code, 2);
  t.match(JSON.parse(json.stdout), {
    error: 'FLOW_INVALID',
    problems: [
      { code: 'UNKNOWN_TARGET', nodeId: 'start', line: 4, column: 36 },
      { code: 'UNREACHABLE', nodeId: 'done', line: 5 },
    ],
  });

  const hook = await run(['run', 'hook.yaml']);
  t.equal(hook.code, 2);
  t.match(hook.stderr, PROBLEM, "a publish check's problem has its position too");
});
