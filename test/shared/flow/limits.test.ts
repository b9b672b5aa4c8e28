import t from 'tap';
import { FLOW_LIMITS } from '../../../src/shared/flow/limits.js';
import { parseFlowSource } from '../../../src/shared/flow/parse.js';
import { validateFlowSource, validateFlowValue, type FlowProblem } from '../../../src/shared/flow/validate.js';
import {
  BIG_FLOW_ID,
  chainFlow,
  deepValueFlow,
  manyVariablesJson,
  manyVariablesYaml,
  nestedFlow,
  yamlOf,
} from '../../fixtures/big-flows.js';

function problemsOf(text: string): readonly FlowProblem[] {
  const v = validateFlowSource(text);
  return v.ok ? [] : v.problems;
}

t.test('a source over the byte limit is refused whole, before it is parsed', async (t) => {
  const text = manyVariablesYaml(40_000); // the reproduction
  t.ok(Buffer.byteLength(text) > FLOW_LIMITS.sourceBytes);
  const parsed = parseFlowSource(text);
  t.equal(parsed.value, undefined, 'no document built');
  t.same(validateFlowSource(text), {
    ok: false,
    problems: [{ code: 'TOO_LARGE', message: String(parsed.syntaxErrors[0]!.message) }],
  });
  t.match(parsed.syntaxErrors[0]!.message, /more than 524288/);
  const multiByte = `# ${'é'.repeat(FLOW_LIMITS.sourceBytes / 2)}\n${yamlOf(chainFlow(1))}`;
  t.ok(multiByte.length < FLOW_LIMITS.sourceBytes, 'fewer characters than the limit...');
  t.match(problemsOf(multiByte), [{ code: 'TOO_LARGE' }], '...but more UTF-8 bytes: bytes count');
});

t.test('keys of a mapping: 40,000 variables are TOO_LARGE at the mapping; the limit itself validates', async (t) => {
  const text = manyVariablesJson(40_000);
  t.ok(Buffer.byteLength(text) <= FLOW_LIMITS.sourceBytes, 'within the byte limit: the key limit refuses it');
  t.match(problemsOf(text), [
    { code: 'TOO_LARGE', nodeId: 'set', property: 'variables', message: /40000 keys, more than 10000/, line: 1 },
  ]);
  t.equal(problemsOf(text).length, 1, 'nothing else is looked at');
  t.same(problemsOf(manyVariablesJson(FLOW_LIMITS.mapKeys)), [], 'exactly at the limit');
  t.same(problemsOf(manyVariablesYaml(FLOW_LIMITS.mapKeys)), [], 'in YAML, one key per line');
});

t.test('duplicate keys are found in a big mapping, each at its line:column, with the first named', async (t) => {
  const text = manyVariablesYaml(FLOW_LIMITS.mapKeys - 2)
    .replace('   v7: 7\n', '   v7: 7\n   v3: again\n')
    .replace('  next: end\n', '   v9000: again\n  next: end\n');
  const problems = problemsOf(text);
  t.same(
    problems.map((p) => [p.code, p.line, p.column]),
    [
      ['SYNTAX', 18, 4],
      ['SYNTAX', FLOW_LIMITS.mapKeys + 9, 4],
    ],
  );
  t.match(problems[0]!.message, /"v3" is given twice \(first on line 13\)/);
  t.match(
    problemsOf(yamlOf(chainFlow(1)).replace('"t0": {', '"t0": {\n  "type": "task",')),
    [{ code: 'SYNTAX', line: 11, column: 4, message: /"type" is given twice \(first on line 10\)/ }],
    'in JSON text too',
  );
  t.match(
    problemsOf(
      `processId: ${BIG_FLOW_ID}\nname: n\nnodes:\n  start: { type: startEvent, next: "1" }\n  "1": { type: endEvent }\n  1: { type: endEvent }\n`,
    ),
    [{ code: 'SYNTAX', line: 6, column: 3 }],
    'keys that become one property are one key: 1 and "1"',
  );
});

t.test('nodes: at the limit a flow validates; one more is TOO_LARGE; bodies count', async (t) => {
  t.same(validateFlowValue(chainFlow(FLOW_LIMITS.nodes - 2)).problems, [], 'exactly the limit');
  t.match(validateFlowValue(chainFlow(FLOW_LIMITS.nodes - 1)).problems, [
    { code: 'TOO_LARGE', property: 'nodes', message: /5001 nodes/ },
  ]);
  const withBody = chainFlow(FLOW_LIMITS.nodes - 3);
  Object.assign(withBody.nodes, {
    t0: { type: 'subProcess', nodes: { s: { type: 'startEvent', next: 'e' }, e: { type: 'endEvent' } }, next: 't1' },
  });
  t.match(validateFlowValue(withBody).problems, [{ code: 'TOO_LARGE', property: 'nodes' }], 'a body holds nodes too');
  t.match(validateFlowValue(chainFlow(20_000)).problems, [{ code: 'TOO_LARGE', property: 'nodes' }], '20,000 nodes');
  const source = JSON.stringify(chainFlow(20_000));
  t.match(problemsOf(source), [{ code: 'TOO_LARGE' }], 'the same as a source: over the byte limit first');
});

t.test('bodies nested exactly at the limit validate; one deeper is TOO_DEEP at the container', async (t) => {
  t.same(validateFlowSource(yamlOf(nestedFlow(FLOW_LIMITS.bodyDepth))).problems, []);
  const over = problemsOf(yamlOf(nestedFlow(FLOW_LIMITS.bodyDepth + 1)));
  t.equal(over.length, 1);
  t.match(over[0], {
    code: 'TOO_DEEP',
    nodeId: 'sub',
    property: `${'nodes.sub.'.repeat(FLOW_LIMITS.bodyDepth)}nodes`,
    line: Number,
    column: Number,
  });
  t.match(validateFlowValue(nestedFlow(FLOW_LIMITS.bodyDepth + 1)).problems, [{ code: 'TOO_DEEP', nodeId: 'sub' }]);
});

t.test('80 nested subProcesses: TOO_DEEP with a position, as a source or a value; never a throw', async (t) => {
  const json = JSON.stringify(nestedFlow(80));
  const problems = problemsOf(json);
  t.match(problems, [{ code: 'TOO_DEEP', line: 1, column: Number }]);
  t.equal(problems.length, 1);
  t.match(problemsOf(yamlOf(nestedFlow(80))), [{ code: 'TOO_DEEP', line: Number }]);
  t.match(validateFlowValue(nestedFlow(80)).problems, [{ code: 'TOO_DEEP' }]);
  t.match(validateFlowValue(nestedFlow(5_000)).problems, [{ code: 'TOO_DEEP' }], 'any depth');
});

t.test('the document nests at most FLOW_LIMITS.depth deep: the limit validates, one more does not', async (t) => {
  t.same(problemsOf(yamlOf(deepValueFlow(FLOW_LIMITS.depth))), []);
  const over = problemsOf(yamlOf(deepValueFlow(FLOW_LIMITS.depth + 1)));
  // Line 12 opens `v`'s value, 5 deep; each line after one deeper.
  t.match(over, [{ code: 'TOO_DEEP', line: 12 + FLOW_LIMITS.depth + 1 - 5, column: Number }]);
  t.match(validateFlowValue(deepValueFlow(FLOW_LIMITS.depth + 1)).problems, [
    { code: 'TOO_DEEP', nodeId: 'set', property: /^variables\.v(\.a)+$/ },
  ]);
  const brackets = `processId: ${BIG_FLOW_ID}\nname: n\nx: ${'['.repeat(100_000)}${']'.repeat(100_000)}\n`;
  t.match(problemsOf(brackets), [{ code: 'TOO_DEEP', line: 3 }], 'a flow list 100,000 deep is refused unbuilt');
  const anchors = `a: &a ${'['.repeat(40)}1${']'.repeat(40)}\nb: [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[*a]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]\n`;
  t.match(problemsOf(anchors), [{ code: 'TOO_DEEP', property: /^b\./ }], 'depth an alias adds is found on the value');
});

t.test('a script nested too deep for the compiler is BAD_SCRIPT, not a thrown RangeError', async (t) => {
  const script = `return ${'('.repeat(50_000)}1${')'.repeat(50_000)}`;
  const value = chainFlow(0);
  Object.assign(value.nodes, {
    start: { type: 'startEvent', next: 's' },
    s: { type: 'scriptTask', script, next: 'end' },
  });
  t.match(validateFlowValue(value).problems, [{ code: 'BAD_SCRIPT', nodeId: 's', property: 'script' }]);
});

t.test('many problems in a flow at the node limit are all reported, each placed', async (t) => {
  // Every node leads to a node that does not exist: one UNKNOWN_TARGET per node, each located.
  const value = chainFlow(FLOW_LIMITS.nodes - 2);
  for (const node of Object.values(value.nodes) as Array<{ next?: string }>) if (node.next) node.next = 'ghost';
  const problems = problemsOf(yamlOf(value));
  t.equal(problems.filter((p) => p.code === 'UNKNOWN_TARGET').length, FLOW_LIMITS.nodes - 1);
  t.ok(
    problems.every((p) => typeof p.line === 'number'),
    'every problem has its line',
  );
});
