import t from 'tap';
import { wfxIn } from '../../helpers/cli.js';

const GOOD = `processId: 0b7c6a3e-2f0e-4a57-9a43-3d4f1c9e8b11
name: Good
nodes:
  start: { type: startEvent, next: done }
  done: { type: endEvent }
`;

t.test('wfx flow validate: exit 0 when valid, 2 with file:line:column problems', async (t) => {
  const dir = t.testdir({ 'good.yaml': GOOD, 'bad.yaml': GOOD.replace('next: done', 'next: ghost') });
  const good = await wfxIn(['flow', 'validate', 'good.yaml'], { cwd: dir });
  t.equal(good.code, 0);
  t.equal(good.stdout, 'good.yaml: ok\n');
  const bad = await wfxIn(['flow', 'validate', 'good.yaml', 'bad.yaml'], { cwd: dir });
  t.equal(bad.code, 2);
  t.match(bad.stderr, /^bad\.yaml:4:36: start\.next: connects to "ghost".*\[UNKNOWN_TARGET\]$/m);
  t.match(bad.stderr, /^bad\.yaml:5:9: done: .*\[UNREACHABLE\]$/m);
  t.match(bad.stderr, /FLOW_INVALID: 2 problems in 1 of 2 files/);
  const json = await wfxIn(['flow', 'validate', 'bad.yaml', '--json'], { cwd: dir });
  t.equal(json.code, 2);
  t.match(JSON.parse(json.stdout), [
    { file: 'bad.yaml', ok: false, problems: [{ code: 'UNKNOWN_TARGET', nodeId: 'start', line: 4 }] },
  ]);
  t.equal(json.stderr, '', '--json prints nothing else');
  const missing = await wfxIn(['flow', 'validate', 'nope.yaml'], { cwd: dir });
  t.equal(missing.code, 2);
  t.match(missing.stderr, /^USAGE_ERROR: cannot read nope\.yaml: ENOENT/);
});

t.test('wfx flow schema prints the JSON Schema', async (t) => {
  const res = await wfxIn(['flow', 'schema']);
  t.equal(res.code, 0);
  t.match(JSON.parse(res.stdout), { $schema: /draft-07/, required: ['processId', 'name', 'nodes'] });
});
