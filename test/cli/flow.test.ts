import t from 'tap';
import { wfx } from '../helpers/cli.js';

const GOOD = `processId: 0b7c6a3e-2f0e-4a57-9a43-3d4f1c9e8b11
name: Good
nodes:
  start: { type: startEvent, next: done }
  done: { type: endEvent }
`;

t.test('wfx flow validate: exit 0 when valid, 2 with file:line:column problems', async (t) => {
  const dir = t.testdir({ 'good.yaml': GOOD, 'bad.yaml': GOOD.replace('next: done', 'next: ghost') });
  const good = await wfx(['flow', 'validate', 'good.yaml'], { cwd: dir });
  t.equal(good.code, 0);
  t.equal(good.stdout, 'good.yaml: ok\n');
  const bad = await wfx(['flow', 'validate', 'good.yaml', 'bad.yaml'], { cwd: dir });
  t.equal(bad.code, 2);
  t.match(bad.stderr, /^bad\.yaml:4:36: start\.next: connects to "ghost".*\[UNKNOWN_TARGET\]$/m);
  t.match(bad.stderr, /^bad\.yaml:5:9: done: .*\[UNREACHABLE\]$/m);
  t.match(bad.stderr, /FLOW_INVALID: 2 problems in 1 of 2 files/);
  const json = await wfx(['flow', 'validate', 'bad.yaml', '--json'], { cwd: dir });
  t.equal(json.code, 2);
  t.match(JSON.parse(json.stdout), [{ file: 'bad.yaml', ok: false, problems: [{ code: 'UNKNOWN_TARGET', nodeId: 'start', line: 4 }] }]);
  t.equal(json.stderr, '', '--json prints nothing else');
  const missing = await wfx(['flow', 'validate', 'nope.yaml'], { cwd: dir });
  t.equal(missing.code, 2);
  t.match(missing.stderr, /^USAGE_ERROR: cannot read nope\.yaml: ENOENT/);
});

t.test('wfx flow schema prints the JSON Schema', async (t) => {
  const res = await wfx(['flow', 'schema']);
  t.equal(res.code, 0);
  t.match(JSON.parse(res.stdout), { $schema: /draft-07/, required: ['processId', 'name', 'nodes'] });
});

t.test('wfx expr evaluates conditions and templates like the engine', async (t) => {
  const vars = JSON.stringify({ order: { id: 42, total: 250 }, approved: true });
  const cond = await wfx(['expr', '${order.total < 1000 && approved}', '--vars', vars]);
  t.equal(cond.code, 0);
  t.equal(cond.stdout, 'true\n');
  t.equal((await wfx(['expr', '${7 div 2}'])).stdout, '3.5\n');
  const tpl = await wfx(['expr', 'Approve order {order.id}? {nope}', '--vars', vars]);
  t.equal(tpl.stdout, '"Approve order 42? "\n');
  t.match(tpl.stderr, /WARN: reference \{nope\} is missing/);
  t.equal((await wfx(['expr', '{order}', '--vars', vars])).stdout, `${JSON.stringify({ id: 42, total: 250 }, null, 2)}\n`, 'a lone reference keeps its type');
  t.equal((await wfx(['expr', '{env.URL}/x', '--env', '{"URL":"http://h"}'])).stdout, '"http://h/x"\n');
  const bad = await wfx(['expr', '${1 +}']);
  t.equal(bad.code, 2);
  t.match(bad.stderr, /^EXPRESSION_ERROR: /);
  const unknown = await wfx(['expr', '${nope > 1}']);
  t.equal(unknown.code, 2, 'an unknown variable is an error, as in the engine');
  const badVars = await wfx(['expr', '${1}', '--vars', '{not json']);
  t.equal(badVars.code, 2);
  t.match(badVars.stderr, /^USAGE_ERROR: --vars is not valid JSON/);
});
