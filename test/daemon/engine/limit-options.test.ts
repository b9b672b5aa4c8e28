import '../../setup/fixtures.js'; // fixtures under the OS temp dir (see there)
import t from 'tap';
import { DEFAULT_LIMITS, describeLimits, parseLimit } from '../../../src/daemon/engine/limits.js';
import { limitsOf } from '../../../src/cli/daemon-options.js';
import { wfxIn } from '../../helpers/cli.js';

t.test('parseLimit: NAME=VALUE, sizes with units, counts', async (t) => {
  t.same(parseLimit('variables-size=16MiB'), { key: 'variablesBytes', value: 16 * 1024 * 1024 });
  t.same(parseLimit('log-size=512KiB'), { key: 'logBytes', value: 512 * 1024 });
  t.same(parseLimit('log-size=2048'), { key: 'logBytes', value: 2048 });
  t.same(parseLimit('children=50'), { key: 'children', value: 50 });
  t.same(parseLimit('live-executions=1000'), { key: 'organizationExecutions', value: 1000 });
  t.same(parseLimit('trigger-depth=3'), { key: 'triggerDepth', value: 3 });
  t.same(parseLimit('tree-created=50000'), { key: 'treeCreated', value: 50000 });
  t.same(parseLimit('org-starts-per-second=200'), { key: 'organizationStartsPerSecond', value: 200 });
  for (const bad of [
    'nope=1',
    'children',
    'children=0',
    'children=1.5',
    'children=-1',
    'loop-iterations=100001',
    'variables-size=1',
    'variables-size=5TiB',
    'variables-size=lots',
    '__proto__=1',
  ])
    t.throws(() => parseLimit(bad), bad);
});

t.test('limitsOf: a later value of a name wins; none is undefined', async (t) => {
  t.equal(limitsOf(undefined), undefined);
  t.same(limitsOf(['children=5', 'branches=7', 'children=9']), { children: 9, branches: 7 });
});

t.test('describeLimits names every limit with its value', async (t) => {
  t.equal(
    describeLimits(DEFAULT_LIMITS),
    'variables-size=10MiB log-size=32MiB branches=1000 children=1000 tree-executions=10000 tree-created=10000 loop-iterations=100000 live-executions=1000000 org-starts-per-second=5000 bulk-operations=2 bulk-operations-total=8 bulk-executions=100000 trigger-depth=5',
  );
});

t.test('wfx daemon start --limit with an unknown name or a bad value is a usage error', async (t) => {
  const dir = t.testdir();
  for (const bad of ['nope=1', 'children=zero']) {
    const res = await wfxIn(['daemon', 'start', '--foreground', '--port', '0', '--data-dir', dir, '--limit', bad]);
    t.equal(res.code, 2, `--limit ${bad}: exit 2`);
    t.match(res.stderr, /--limit/, 'the message names the option');
  }
});
