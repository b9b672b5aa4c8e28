import '../../setup/fixtures.js'; // fixtures under the OS temp dir (see there)
import t from 'tap';
import { startDaemon, wfx } from '../../helpers/cli.js';
import { chainFlow, manyVariablesYaml, nestedFlow, yamlOf } from '../../fixtures/big-flows.js';

/** A line of a stack trace, as bin/wfx.js prints one for a bug. */
const STACK = /^\s+at /m;

t.test('wfx flow validate: flows past their limits are problems with file:line:column, exit 2', async (t) => {
  const cwd = t.testdir({
    'deep.json': JSON.stringify(nestedFlow(80)),
    'deep.yaml': yamlOf(nestedFlow(17)),
    'big.yaml': manyVariablesYaml(40_000),
    'good.yaml': yamlOf(chainFlow(2)),
  });
  const res = await wfx(['flow', 'validate', 'deep.json', 'deep.yaml', 'big.yaml', 'good.yaml'], { cwd });
  t.equal(res.code, 2, res.stderr);
  t.match(res.stderr, /^deep\.json:1:\d+: mappings and lists nest more than 64 deep here \[TOO_DEEP\]$/m);
  t.match(
    res.stderr,
    /^deep\.yaml:\d+:\d+: sub\.(nodes\.sub\.){16}nodes: bodies .* more than 16 deep here \[TOO_DEEP\]$/m,
  );
  t.match(res.stderr, /^big\.yaml: the flow source is \d+ bytes, more than 524288 \[TOO_LARGE\]$/m);
  t.match(res.stderr, /FLOW_INVALID: 3 problems in 3 of 4 files/);
  t.equal(res.stdout, 'good.yaml: ok\n');
  t.notMatch(res.stderr, STACK, 'no stack trace');
});

t.test('wfx flow publish: a flow past its limits, or a file past the body limit, exit 2 without a stack', async (t) => {
  const cwd = t.testdir({
    'deep.json': JSON.stringify(nestedFlow(80)),
    'huge.yaml': manyVariablesYaml(80_000),
    'good.yaml': yamlOf(chainFlow(2)),
  });
  await startDaemon(t, { cwd });
  const res = await wfx(['flow', 'publish', 'deep.json', 'huge.yaml', 'good.yaml'], { cwd });
  t.equal(res.code, 2, res.stderr);
  t.match(res.stderr, /^deep\.json:1:\d+: .*\[TOO_DEEP\]$/m);
  t.match(res.stderr, /^huge\.yaml: PAYLOAD_TOO_LARGE: /m);
  t.match(res.stdout, /^good\.yaml: chain of 2 version 1 active in PRODUCTION/m, 'the others are published');
  t.match(res.stderr, /FLOW_INVALID: 2 of 3 files not published/);
  t.notMatch(res.stderr, STACK, 'no stack trace');
});
