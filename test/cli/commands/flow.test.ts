import '../../setup/fixtures.js'; // fixtures under the OS temp dir (see there)
import t from 'tap';
import { startDaemon, wfxIn } from '../../helpers/cli.js';

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

const TOOL = '11111111-1111-4111-8111-111111111111';
const AGENT = '22222222-2222-4222-8222-222222222222';
const LOOKUP = `processId: ${TOOL}
name: Look up order
description: Finds an order
inputs:
  type: object
  required: [orderId]
  properties:
    orderId: { type: string, description: "The order id, such as A-1001" }
    notify: { type: boolean, default: true, description: Tell the customer }
    channel: { enum: [email, sms], default: email }
    lines: { type: array }
nodes:
  start: { type: startEvent, next: done }
  done: { type: endEvent }
`;
const SUPPORT = `processId: ${AGENT}
name: Support agent
nodes:
  start: { type: startEvent, next: agent }
  agent: { type: callAgent, prompt: "Help with {orderId}", tools: [${TOOL}], next: done }
  done: { type: endEvent }
`;

t.test(
  'wfx flow publish: tool flows first, whatever the order on the command line; flow show lists inputs',
  async (t) => {
    const cwd = t.testdir({ 'agent.yaml': SUPPORT, 'tool.yaml': LOOKUP, 'good.yaml': GOOD });
    await startDaemon(t, { cwd });
    const run = (args: string[]) => wfxIn(args, { cwd });

    const published = await run(['flow', 'publish', 'agent.yaml', 'tool.yaml']);
    t.equal(published.code, 0, published.stderr);
    t.equal(
      published.stdout,
      `tool.yaml: Look up order version 1 active in PRODUCTION (${TOOL})\nagent.yaml: Support agent version 1 active in PRODUCTION (${AGENT})\n`,
      'the tool is published before the agent that uses it',
    );

    const shown = await run(['flow', 'show', TOOL]);
    t.equal(shown.code, 0, shown.stderr);
    const table = shown.stdout.slice(
      shown.stdout.indexOf('inputs of version 1:'),
      shown.stdout.indexOf('definition of'),
    );
    t.same(
      table
        .trimEnd()
        .split('\n')
        .map((l) => l.trimEnd().split(/ {2,}/)),
      [
        ['inputs of version 1:'],
        ['NAME', 'TYPE', 'REQUIRED', 'DEFAULT', 'DESCRIPTION'],
        ['orderId', 'string', 'yes', '-', 'The order id, such as A-1001'],
        ['notify', 'boolean', 'no', 'true', 'Tell the customer'],
        ['channel', '"email"|"sms"', 'no', '"email"'],
        ['lines', 'array', 'no', '-'],
      ],
    );
    t.match(shown.stdout, /definition of version 1:\n\{/, 'then the definition');
    const alias = await run(['flow', 'get', TOOL]);
    t.equal(alias.stdout, shown.stdout, 'flow get is flow show');

    t.equal((await run(['flow', 'publish', 'good.yaml'])).code, 0);
    const none = await run(['flow', 'show', '0b7c6a3e-2f0e-4a57-9a43-3d4f1c9e8b11']);
    t.match(none.stdout, /\ninputs: any object \(the flow declares no inputs:\)\n/, 'a flow without inputs says so');
    const json = await run(['flow', 'show', TOOL, '--json']);
    t.match(JSON.parse(json.stdout), { version: '1', versions: [{ version: '1', inputs: { required: ['orderId'] } }] });
  },
);

t.test('wfx flow publish: an agent whose tool is not among the files nor published is refused', async (t) => {
  const cwd = t.testdir({ 'agent.yaml': SUPPORT });
  await startDaemon(t, { cwd });
  const res = await wfxIn(['flow', 'publish', 'agent.yaml'], { cwd });
  t.equal(res.code, 2);
  // Line 5, at the tool's id in the flow list: the daemon's check located in the source.
  t.match(res.stderr, /^agent\.yaml:5:68: agent\.tools\.0: tool flow 1{8}-.* does not exist .*\[UNKNOWN_TOOL\]$/m);
  t.match(res.stderr, /FLOW_INVALID: 1 of 1 file not published/);
});
