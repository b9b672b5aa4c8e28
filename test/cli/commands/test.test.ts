import '../../setup/fixtures.js'; // fixtures under the OS temp dir (see there)
import { readdirSync, readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse as parseYaml } from 'yaml';
import { compileJsonSchema } from '../../../src/shared/flow/json-schema.js';
import { parse as parseJunit } from 'junit2json';
import t from 'tap';
import { wfx, wfxIn } from '../../helpers/cli.js';

const ROOT = fileURLToPath(new URL('../../../../', import.meta.url));

/** Charges small orders at once and asks a person about big ones first. */
const ORDER = `processId: 3a1e0f52-6a40-4b9e-9d2c-5c0e7f1a2b3c
name: Order approval
nodes:
  start: { type: startEvent, next: decide }
  decide: { type: ifElse, condition: "\${amount > 100}", then: ask, else: charge }
  ask: { type: inputNode, inputType: textbox, next: charge }
  charge:
    type: serviceTask
    method: POST
    url: "{env.PAYMENTS}/charge"
    retry: { maxAttempts: 3, initialInterval: 1h }
    next: end
  end: { type: endEvent }
`;

/** A review with a deadline, an error flow, a message wait and a timer boundary event on it. */
const REVIEW = `processId: 4b2f1a63-7b51-4c0f-8e3d-6d1f802b3c4d
name: Review with deadlines
nodes:
  start: { type: startEvent, next: review }
  review:
    type: inputNode
    inputType: textbox
    timeout: 2d
    timeoutFlow: expired
    errorFlow: refused
    next: work
  work: { type: intermediateCatchEvent, eventType: message, messageRef: done, next: fine }
  slow: { type: boundaryEvent, attachedTo: work, event: timer, duration: 3d, next: late }
  late: { type: setVariable, variables: { late: true }, next: fine }
  expired: { type: setVariable, variables: { expired: true }, next: fine }
  refused: { type: setVariable, variables: { refused: true }, next: fine }
  fine: { type: endEvent }
`;

const ORDER_TESTS = `flow: order.yaml
cases:
  - name: small orders are charged at once
    start: { data: { amount: 50 } }
    env: { PAYMENTS: "https://pay.example" }
    mocks:
      charge: { status: 200, body: { id: 7 } }
    expect:
      state: COMPLETED
      path: [start, decide, charge, end]
      variables: { charge: { status: 200, headers: { content-type: application/json }, body: { id: 7 } } }
  - name: big orders ask first, and a 503 is retried
    start: { data: { amount: 500 } }
    env: { PAYMENTS: "https://pay.example" }
    mocks:
      charge: [ { status: 503 }, { status: 200, body: { id: 8 } } ]
    steps:
      - expect: { waitingAt: ask, state: RUNNING }
      - answer: { node: ask, data: { inputValue: approved } }
    expect:
      state: COMPLETED
      path: [start, decide, ask, charge, end]
      variables: { inputValue: approved }
  - name: a refused charge fails the order
    start: { data: { amount: 5 } }
    env: { PAYMENTS: "https://pay.example" }
    mocks:
      charge: { status: 402, body: { error: no funds } }
    expect: { state: FAILED, errorCode: HTTP_402 }
  - name: a payment service that never answers times out
    start: { data: { amount: 5 } }
    env: { PAYMENTS: "https://pay.example" }
    mocks:
      charge: { timeout: true }
    expect: { state: FAILED, errorCode: HTTP_TIMEOUT }
  - name: a connection refused is a network failure
    start: { data: { amount: 5 } }
    env: { PAYMENTS: "https://pay.example" }
    mocks:
      charge: { network: ECONNREFUSED }
    expect: { state: FAILED, errorCode: HTTP_NETWORK }
`;

const REVIEW_TESTS = `flow: review.yaml
cases:
  - name: an unanswered review expires after two days
    steps:
      - advance: 1d
      - expect: { waitingAt: review }
      - advance: 1d
    expect: { state: COMPLETED, variables: { expired: true }, path: [start, review, expired, fine] }
  - name: a cancelled review takes the error flow
    steps:
      - answer: { node: review, action: CANCEL }
    expect: { state: COMPLETED, variables: { refused: true }, path: [start, review, refused, fine] }
  - name: work that takes too long is late
    steps:
      - answer: { node: review, data: { inputValue: ok } }
      - advance: 3d
    expect: { state: COMPLETED, variables: { late: true }, path: [start, review, work, slow, late, fine] }
  - name: work done in time
    start: { correlationKey: A1 }
    steps:
      - answer: { node: review, data: { inputValue: ok } }
      - advance: 2d
      - event: { type: done, correlationKey: A1, data: { result: 1 } }
    expect: { state: COMPLETED, variables: { result: 1 }, path: [start, review, work, fine] }
`;

t.test('wfx test runs cases over mocks and a clock of its own, and exits 0 when all pass', async (t) => {
  const cwd = t.testdir({
    'order.yaml': ORDER,
    'order.test.yaml': ORDER_TESTS,
    flows: { 'review.yaml': REVIEW, 'review.test.yaml': REVIEW_TESTS },
  });
  const r = await wfxIn(['test'], { cwd });
  t.equal(r.code, 0, r.stdout + r.stderr);
  t.match(r.stdout, /^order\.test\.yaml \(order\.yaml\)\n {2}✓ small orders are charged at once/m);
  t.match(r.stdout, /^flows\/review\.test\.yaml \(flows\/review\.yaml\)$/m);
  t.match(r.stdout, /✓ work that takes too long is late/);
  t.match(r.stdout, /\n9 passed, 0 failed \(9 cases in 2 files, \d+ ms\)\n$/);

  const one = await wfxIn(['test', 'flows', '--grep', 'error flow'], { cwd });
  t.equal(one.code, 0);
  t.match(one.stdout, /1 passed, 0 failed \(1 case in 1 file/, '--grep picks cases by name, a path picks files');
});

t.test('a failing case says where, what was expected and found, and the path so far; exit 1', async (t) => {
  const cwd = t.testdir({
    'order.yaml': ORDER,
    'order.test.yaml': `flow: order.yaml
env: { PAYMENTS: "https://pay.example" }
cases:
  - name: passes
    start: { data: { amount: 5 } }
    mocks: { charge: { status: 200 } }
    expect: { state: COMPLETED }
  - name: expects the wrong path
    start: { data: { amount: 5 } }
    mocks: { charge: { status: 200 } }
    expect: { path: [start, charge, end] }
  - name: forgets the mock
    start: { data: { amount: 5 } }
    expect: { state: COMPLETED }
  - name: runs out of answers
    start: { data: { amount: 5 } }
    mocks: { charge: [ { status: 500 }, { status: 500 } ] }
    expect: { state: COMPLETED }
  - name: answers a node that does not wait
    start: { data: { amount: 5 } }
    mocks: { charge: { status: 200 } }
    steps:
      - answer: { node: ask, data: { inputValue: x } }
`,
  });
  const r = await wfxIn(['test'], { cwd });
  t.equal(r.code, 1);
  t.match(r.stdout, /✓ passes/);
  t.match(
    r.stdout,
    /\n {2}✗ expects the wrong path \(\d+ ms\)\n {6}the path differs\n {6}at order\.test\.yaml:8:5\n {6}expected: \["start","charge","end"\]\n {6}actual: {3}\["start","decide","charge","end"\]\n {6}path: {5}start → decide → charge → end\n/,
  );
  t.match(
    r.stdout,
    /✗ forgets the mock .*\n {6}NO_MOCK: serviceTask "charge" has no mock: give it one under mocks, or run with --allow-network\n {6}at order\.test\.yaml:12:5\n {6}path: {5}start → decide → charge\n/,
  );
  t.match(
    r.stdout,
    /MOCK_EXHAUSTED: "charge" was called 3 times; its mock has 2 answers/,
    'each attempt takes the next answer',
  );
  t.match(r.stdout, /at order\.test\.yaml:23:9\n/, 'a step that cannot be taken fails at the step');
  t.match(r.stdout, /answer failed: INSTANCE_NOT_RUNNING: execution [0-9a-f-]+ is not running\n/);
  t.match(r.stdout, /\n1 passed, 4 failed \(5 cases in 1 file/);
});

t.test('an invalid test file or flow is refused with file:line:column; exit 2', async (t) => {
  const cwd = t.testdir({
    'order.yaml': ORDER,
    'typo.test.yaml': 'flow: order.yaml\ncases:\n  - name: typo\n    strat: { data: {} }\n',
    'duration.test.yaml': 'flow: order.yaml\ncases:\n  - name: x\n    steps:\n      - advance: three days\n',
    'broken.yaml': 'processId: x\nnodes:\n  start: { type: startEvent, next: nowhere }\n',
    'broken.test.yaml': 'flow: broken.yaml\ncases:\n  - name: x\n',
    'missing.test.yaml': 'flow: nope.yaml\ncases:\n  - name: x\n',
    'syntax.test.yaml': 'flow: order.yaml\ncases: [\n',
  });
  const r = await wfxIn(['test'], { cwd });
  t.equal(r.code, 2);
  t.match(
    r.stdout,
    /^typo\.test\.yaml:4:5: unknown key "strat" \(expected name, start, env, secrets, mocks, steps, expect\)$/m,
    'an unknown key is pointed at, not its value',
  );
  t.match(r.stdout, /^duration\.test\.yaml:5:\d+: "three days" is not a duration/m);
  t.match(r.stdout, /^broken\.yaml:\d+:\d+: [A-Z_]+: /m, "the flow's own problems, where they stand in the flow");
  t.match(r.stdout, /^missing\.test\.yaml: flow file nope\.yaml: no such file$/m);
  t.match(r.stdout, /^syntax\.test\.yaml:\d+:\d+: /m);
  t.match(r.stdout, /0 passed, 0 failed, 5 invalid files/);
});

/** What junit2json makes of a report (the parts these tests read). */
interface JunitReport {
  tests: number;
  failures: number;
  errors: number;
  testsuite: Array<{
    name: string;
    tests: number;
    failures: number;
    testcase: Array<{ name: string; classname: string; failure?: Array<{ message: string; inner: string }> }>;
  }>;
}

t.test('reporters: tap, json and junit, to stdout or a file', async (t) => {
  const cwd = t.testdir({
    'order.yaml': ORDER,
    'order.test.yaml': `flow: order.yaml
env: { PAYMENTS: "https://pay.example" }
cases:
  - name: passes
    start: { data: { amount: 5 } }
    mocks: { charge: { status: 200 } }
  - name: fails <on purpose> & says so
    start: { data: { amount: 5 } }
    mocks: { charge: { status: 200 } }
    expect: { state: FAILED }
`,
  });
  const tap = await wfxIn(['test', '--reporter', 'tap'], { cwd });
  t.equal(tap.code, 1);
  t.match(
    tap.stdout,
    /^TAP version 14\nok 1 - order\.test\.yaml > passes # time=[\d.]+ms\nnot ok 2 - order\.test\.yaml > fails <on purpose> & says so # time=[\d.]+ms\n {2}---\n {2}message: "expected the execution FAILED, it is COMPLETED"\n/,
  );
  t.match(tap.stdout, /\n1\.\.2\n$/);

  const json = await wfxIn(['test', '--reporter', 'json'], { cwd });
  const parsed = JSON.parse(json.stdout) as {
    passed: number;
    failed: number;
    files: Array<{
      file: string;
      cases: Array<{ name: string; ok: boolean; failure?: { expected: unknown; actual: unknown } }>;
    }>;
  };
  t.equal(parsed.passed, 1);
  t.equal(parsed.failed, 1);
  t.match(parsed.files[0]!.cases[1]!.failure, { expected: 'FAILED', actual: 'COMPLETED', at: 'order.test.yaml:7:5' });

  const junit = await wfxIn(['test', '--reporter', 'junit', '--output', 'out/report.xml'], { cwd });
  t.equal(junit.code, 1);
  t.equal(junit.stdout, '');
  t.match(junit.stderr, /1 passed, 1 failed, 0 invalid: junit report in out\/report\.xml/);
  const xml = await readFile(join(cwd, 'out/report.xml'), 'utf8');
  t.match(xml, /<testcase name="fails &lt;on purpose&gt; &amp; says so" classname="order\.test\.yaml"/);
  // Read back by a JUnit XML parser (xml2js underneath: strict XML), as CI servers read it.
  const report = (await parseJunit(xml)) as unknown as JunitReport;
  t.match(report, { tests: 2, failures: 1, errors: 0 });
  const suite = report.testsuite[0]!;
  t.match(suite, { name: 'order.test.yaml', tests: 2, failures: 1 });
  t.same(
    suite.testcase.map((c) => [c.name, c.classname, c.failure?.[0]?.message ?? null]),
    [
      ['passes', 'order.test.yaml', null],
      ['fails <on purpose> & says so', 'order.test.yaml', 'expected the execution FAILED, it is COMPLETED'],
    ],
  );
  t.match(
    suite.testcase[1]!.failure![0]!.inner,
    /at order\.test\.yaml:7:5\nexpected: FAILED\nactual: {3}COMPLETED\npath: {5}start → decide → charge → end/,
  );

  // An invalid file is an error of its own suite.
  const invalid = t.testdir({ 'order.yaml': ORDER, 'bad.test.yaml': 'flow: order.yaml\ncases: []\n' });
  const bad = await wfxIn(['test', '--reporter', 'junit'], { cwd: invalid });
  t.equal(bad.code, 2);
  t.match(await parseJunit(bad.stdout), {
    tests: 1,
    errors: 1,
    testsuite: [
      { name: 'bad.test.yaml', errors: 1, testcase: [{ error: [{ message: 'a test file needs at least one case' }] }] },
    ],
  });
});

t.test('the built CLI runs flow tests as a pipeline would (a real process)', async (t) => {
  const cwd = t.testdir({ 'order.yaml': ORDER, 'order.test.yaml': ORDER_TESTS });
  const r = await wfx(['test', '--reporter', 'tap'], { cwd });
  t.equal(r.code, 0, r.stderr);
  t.match(r.stdout, /\n1\.\.5\n$/);
  t.equal(r.stderr, '');
});

/** A gateway of two branches and a default, and a loop: 9 nodes and 5 branches to cover. */
const ROUTE = `processId: 5c3a2b74-8c62-4d1f-9f4e-7e2a913c4d5e
name: Routing
nodes:
  start: { type: startEvent, next: kind }
  kind:
    type: exclusiveGateway
    branches:
      - { condition: "\${kind == 'a'}", next: a }
      - { condition: "\${kind == 'b'}", next: b }
    default: other
  a: { type: setVariable, variables: { went: a }, next: each }
  b: { type: setVariable, variables: { went: b }, next: each }
  other: { type: setVariable, variables: { went: other }, next: each }
  each:
    type: loopNode
    collection: "{items}"
    nodes:
      s: { type: startEvent, next: e }
      e: { type: endEvent }
    next: end
  end: { type: endEvent }
`;

const ROUTE_TESTS = `flow: route.yaml
cases:
  - name: a, with one item
    start: { data: { kind: a, items: [1] } }
    expect: { state: COMPLETED, variables: { went: a } }
  - name: anything else, with none
    start: { data: { kind: z, items: [] } }
    expect: { state: COMPLETED, variables: { went: other } }
`;

t.test('--coverage counts the nodes reached and branches taken, and names what no case took', async (t) => {
  const cwd = t.testdir({ 'route.yaml': ROUTE, 'route.test.yaml': ROUTE_TESTS });
  const r = await wfxIn(['test', '--coverage'], { cwd });
  t.equal(r.code, 0);
  t.match(
    r.stdout,
    [
      'coverage (nodes reached, branches taken):',
      '  route.yaml: 85.7% (nodes 8/9, branches 4/5)',
      '    kind branch 2 → b not taken',
      '    b not reached',
      '',
      '2 passed, 0 failed',
    ].join('\n'),
  );
  const json = await wfxIn(['test', '--coverage', '--reporter', 'json'], { cwd });
  const [measured, ...more] = (JSON.parse(json.stdout) as { coverage: Array<Record<string, unknown>> }).coverage;
  t.same(more, []);
  const { hash, ...rest } = measured!;
  t.match(hash, /^[0-9a-f]{64}$/, 'the hash the definition is published under');
  t.same(rest, {
    flow: 'route.yaml',
    processId: '5c3a2b74-8c62-4d1f-9f4e-7e2a913c4d5e',
    cases: { passed: 2, failed: 0 },
    nodes: [8, 9],
    branches: [4, 5],
    percent: (12 * 100) / 14,
    missed: ['kind branch 2 → b not taken', 'b not reached'],
    covered: [
      { node: 'start', part: 'node' },
      { node: 'kind', part: 'node' },
      { node: 'kind', part: 'branch 1' },
      { node: 'kind', part: 'default' },
      { node: 'a', part: 'node' },
      { node: 'other', part: 'node' },
      { node: 'each', part: 'node' },
      { node: 'each', part: 'loop entered' },
      { node: 'each', part: 'loop skipped' },
      { node: 'each/s', part: 'node' },
      { node: 'each/e', part: 'node' },
      { node: 'end', part: 'node' },
    ],
  });

  const under = await wfxIn(['test', '--coverage-min', '90'], { cwd });
  t.equal(under.code, 1, 'under --coverage-min: exit 1, every case passing');
  t.match(under.stderr, /^COVERAGE_TOO_LOW: the flows' coverage is 85\.7%, under --coverage-min 90\n$/);
  t.equal((await wfxIn(['test', '--coverage-min', '85'], { cwd })).code, 0);
  const bad = await wfxIn(['test', '--coverage-min', 'most'], { cwd });
  t.equal(bad.code, 2);
  t.match(bad.stderr, /USAGE_ERROR: --coverage-min takes a percentage from 0 to 100, not "most"/);

  // One more case takes the last branch: everything covered.
  const all = t.testdir({
    'route.yaml': ROUTE,
    'route.test.yaml': `${ROUTE_TESTS}  - name: b
    start: { data: { kind: b, items: [] } }
`,
  });
  t.match(
    (await wfxIn(['test', '--coverage'], { cwd: all })).stdout,
    /route\.yaml: 100\.0% \(nodes 9\/9, branches 5\/5\)\n\n/,
  );
});

t.test('wfx test schema: a JSON Schema that takes what the reader takes and refuses its typos', async (t) => {
  const r = await wfxIn(['test', 'schema']);
  t.equal(r.code, 0);
  const compiled = compileJsonSchema(JSON.parse(r.stdout));
  if (!compiled.ok) throw new Error(compiled.message);
  const valid = (text: string) => compiled.validate(parseYaml(text));
  const files = [
    ...readdirSync(join(ROOT, 'flows'))
      .filter((f) => f.endsWith('.test.yaml'))
      .map((f) => readFileSync(join(ROOT, 'flows', f), 'utf8')),
    ORDER_TESTS,
    REVIEW_TESTS,
    ROUTE_TESTS,
    ...[
      ...readFileSync(join(ROOT, 'docs/testing.md'), 'utf8').matchAll(/```yaml file=\S+\.test\.yaml\n([\s\S]*?)\n```/g),
    ].map((m) => m[1]!),
  ];
  t.ok(files.length >= 8);
  for (const f of files) t.ok(valid(f), `${f.split('\n')[0]} ... ${JSON.stringify(compiled.validate.errors)}`);
  t.notOk(valid('flow: a.yaml\ncases:\n  - name: x\n    strat: {}\n'), 'a typo');
  t.notOk(valid('flow: a.yaml\ncases:\n  - name: x\n    mocks: { n: { status: 99 } }\n'), 'no such status');
  t.notOk(
    valid('flow: a.yaml\ncases:\n  - name: x\n    steps: [ { advance: 1d, answer: { node: a } } ]\n'),
    'one thing a step',
  );
  t.notOk(valid('flow: a.yaml\ncases: []\n'), 'no case');
});

t.test('wfx flow validate and publish leave flow test files out, as flows/*.yaml names them too', async (t) => {
  const cwd = t.testdir({ 'order.yaml': ORDER, 'order.test.yaml': ORDER_TESTS });
  const r = await wfxIn(['flow', 'validate', '--offline', 'order.yaml', 'order.test.yaml'], { cwd });
  t.equal(r.code, 0, r.stderr);
  t.equal(r.stdout, 'order.yaml: ok\n');
  t.equal(r.stderr, 'note: left out order.test.yaml: flow test file (wfx test runs it)\n');
});

t.test("a start its flow's inputs refuse fails the case with the code", async (t) => {
  const cwd = t.testdir({
    'typed.yaml': `processId: 6a5b4c3d-2e1f-4a0b-9c8d-7e6f5a4b3c2d
name: Typed
inputs: { type: object, required: [amount], properties: { amount: { type: number } } }
nodes:
  start: { type: startEvent, next: end }
  end: { type: endEvent }
`,
    'typed.test.yaml': 'flow: typed.yaml\ncases:\n  - name: no amount\n    start: { data: { amount: lots } }\n',
  });
  const r = await wfxIn(['test'], { cwd });
  t.equal(r.code, 1);
  t.match(r.stdout, /✗ no amount \(\d+ ms\)\n {6}the start failed: VALIDATION_ERROR: .*amount/);
});

t.test('no test file, or no case --grep takes: exit 0 with a note saying so', async (t) => {
  const empty = await wfxIn(['test'], { cwd: t.testdir({ 'notes.md': '#' }) });
  t.equal(empty.code, 0);
  t.equal(empty.stderr, 'note: no test files (*.test.yaml) under this folder\n');
  const cwd = t.testdir({ 'order.yaml': ORDER, 'order.test.yaml': ORDER_TESTS });
  const none = await wfxIn(['test', '--grep', 'nothing like it'], { cwd });
  t.equal(none.code, 0);
  t.equal(none.stderr, 'note: no case\'s name contains "nothing like it"\n');
});
