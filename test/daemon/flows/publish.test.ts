import '../../setup/fixtures.js'; // fixtures under the OS temp dir (see there)
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { activateVersion, publishFlow } from '../../../src/daemon/flows/publish.js';
import { FlowFileOwners } from '../../../src/daemon/flows/file-owners.js';
import { publishFlowDir, publishFlowFile } from '../../../src/daemon/flows/load-dir.js';
import { applyRecord, type WfxRecord } from '../../../src/daemon/state/records.js';
import { initialState, type WfxState } from '../../../src/daemon/state/state.js';
import { Store } from '../../../src/daemon/store/store.js';
import type { AgentToolSpec, FlowDefinition, FlowNode } from '../../../src/shared/flow/types.js';
import type { FlowProblem } from '../../../src/shared/flow/validate.js';

const PID = '0b7c6a3e-2f0e-4a57-9a43-3d4f1c9e8b11';
const flow = (name: string): FlowDefinition => ({
  processId: PID,
  name,
  nodes: { start: { type: 'startEvent', next: 'done' }, done: { type: 'endEvent' } },
});

async function store(t: Test, dir = t.testdir()) {
  const s = await Store.open<WfxState, WfxRecord>({ dir, initialState, apply: applyRecord });
  t.teardown(() => s.close({ checkpoint: false }));
  return s;
}

t.test('versions: a changed definition is the next version, an identical one gives its version back', async (t) => {
  const s = await store(t);
  const v1 = await publishFlow(s, { definition: flow('A'), organization: 'default', environment: 'PRODUCTION' });
  t.match(v1, { version: '1', created: true });
  const again = await publishFlow(s, { definition: { ...flow('A') }, organization: 'default', environment: 'PRODUCTION' });
  t.match(again, { version: '1', created: false });
  const reordered = JSON.parse(JSON.stringify({ nodes: flow('A').nodes, name: 'A', processId: PID }));
  t.equal((await publishFlow(s, { definition: reordered, organization: 'default', environment: 'PRODUCTION' })).version, '1', 'key order does not matter');
  const v2 = await publishFlow(s, { definition: flow('B'), organization: 'default', environment: 'PRODUCTION' });
  t.match(v2, { version: '2', created: true });
  t.same(s.state.flows[PID]!.active, { PRODUCTION: '2' });
  t.equal(s.state.flows[PID]!.name, 'B');
});

t.test('environments have their own active version; rollback re-activates an older one', async (t) => {
  const s = await store(t);
  await publishFlow(s, { definition: flow('A'), organization: 'default', environment: 'PRODUCTION' });
  await publishFlow(s, { definition: flow('B'), organization: 'default', environment: 'DEVELOPMENT' });
  t.same(s.state.flows[PID]!.active, { PRODUCTION: '1', DEVELOPMENT: '2' });
  await activateVersion(s, { processId: PID, organization: 'default', environment: 'DEVELOPMENT', version: '1' });
  t.same(s.state.flows[PID]!.active.DEVELOPMENT, '1');
  await t.rejects(activateVersion(s, { processId: PID, organization: 'default', environment: 'PRODUCTION', version: '9' }), { code: 'VERSION_NOT_FOUND' });
  await t.rejects(activateVersion(s, { processId: PID, organization: 'acme', environment: 'PRODUCTION', version: '1' }), { code: 'PROCESS_NOT_FOUND' });
});

t.test('a processId belongs to the organization that first published it', async (t) => {
  const s = await store(t);
  await publishFlow(s, { definition: flow('A'), organization: 'acme', environment: 'PRODUCTION' });
  t.ok(s.state.organizations.acme, 'publishing into an organization creates it');
  await t.rejects(publishFlow(s, { definition: flow('A'), organization: 'other', environment: 'PRODUCTION' }), { code: 'PROCESS_ID_CONFLICT' });
});

t.test('a flow directory: valid files are published, invalid ones reported and skipped', async (t) => {
  // One fixture directory: a second t.testdir() call would re-create (empty) the first.
  const root = t.testdir({
    flows: {
      'good.yaml': `processId: ${PID}\nname: Good\nnodes:\n  start: { type: startEvent, next: done }\n  done: { type: endEvent }\n`,
      'bad.yml': 'processId: x\nname: Bad\nnodes: {}\n',
      'notes.txt': 'ignored',
    },
    store: {},
  });
  const s = await store(t, join(root, 'store'));
  const dir = join(root, 'flows');
  await writeFile(join(dir, 'also.json'), JSON.stringify({ ...flow('J'), processId: '1b7c6a3e-2f0e-4a57-9a43-3d4f1c9e8b11' }));
  const outcomes = await publishFlowDir(s, dir, { organization: 'default', environment: 'DEVELOPMENT' });
  t.same(outcomes.map((o) => [o.file.split('/').pop(), o.ok]), [['also.json', true], ['bad.yml', false], ['good.yaml', true]]);
  t.same(s.state.flows[PID]!.active, { DEVELOPMENT: '1' });
});

// --- callAgent tools ----------------------------------------------------------------------

const TOOL = '11111111-1111-4111-8111-111111111111';
const OTHER_TOOL = '22222222-2222-4222-8222-222222222222';
const AGENT = '33333333-3333-4333-8333-333333333333';
const LOOKUP_INPUTS = { type: 'object', required: ['orderId'], properties: { orderId: { type: 'string' } } };

/** A tool flow: named `name`, with `inputs` unless null. */
const tool = (processId: string, name: string, inputs: Record<string, unknown> | null = LOOKUP_INPUTS): FlowDefinition => ({
  ...flow(name),
  processId,
  ...(inputs && { inputs }),
});
const agentNode = (tools: AgentToolSpec[]): FlowNode => ({ type: 'callAgent', prompt: 'help', tools, next: 'done' });
/** An agent flow whose callAgent node `agent` calls `tools`. */
const agentFlow = (tools: AgentToolSpec[], extra: Partial<FlowDefinition> = {}): FlowDefinition => ({
  processId: AGENT,
  name: 'Agent',
  nodes: { start: { type: 'startEvent', next: 'agent' }, agent: agentNode(tools), done: { type: 'endEvent' } },
  ...extra,
});
const inProduction = { organization: 'default', environment: 'PRODUCTION' } as const;

/** The problems a publish is refused with (FLOW_INVALID), or a failed test. */
async function refusal(t: Test, s: Awaited<ReturnType<typeof store>>, definition: FlowDefinition, target = inProduction) {
  const err = await publishFlow(s, { definition, ...target }).then(
    () => null,
    (e: unknown) => e as { code?: string; details?: { problems?: FlowProblem[] } },
  );
  t.equal(err?.code, 'FLOW_INVALID', 'refused as FLOW_INVALID');
  t.notOk(s.state.flows[definition.processId], 'nothing is published');
  return err?.details?.problems ?? [];
}

t.test('an agent publishes once its tools are published with inputs in the environment', async (t) => {
  const s = await store(t);
  await publishFlow(s, { definition: tool(TOOL, 'Look up order'), ...inProduction });
  await publishFlow(s, { definition: tool(OTHER_TOOL, 'Ask'), ...inProduction });
  const r = await publishFlow(s, {
    definition: agentFlow([TOOL, { processId: OTHER_TOOL, name: 'ask_supervisor' }]),
    ...inProduction,
  });
  t.match(r, { processId: AGENT, version: '1', created: true });
});

t.test('UNKNOWN_TOOL: no such flow, another organization\'s flow, or none active in the environment', async (t) => {
  const s = await store(t);
  t.match(await refusal(t, s, agentFlow([TOOL])), [
    { code: 'UNKNOWN_TOOL', nodeId: 'agent', property: 'tools.0', message: /does not exist in organization default/ },
  ]);

  await publishFlow(s, { definition: tool(TOOL, 'Look up'), organization: 'acme', environment: 'PRODUCTION' });
  t.match(
    await refusal(t, s, agentFlow([TOOL])),
    [{ code: 'UNKNOWN_TOOL', property: 'tools.0', message: /does not exist in organization default/ }],
    "another organization's flow is not a tool of this one",
  );

  await publishFlow(s, { definition: tool(OTHER_TOOL, 'Ask'), organization: 'default', environment: 'DEVELOPMENT' });
  t.match(
    await refusal(t, s, agentFlow([OTHER_TOOL])),
    [{ code: 'UNKNOWN_TOOL', property: 'tools.0', message: /no active version in PRODUCTION/ }],
    'a tool active in DEVELOPMENT only is no tool in PRODUCTION',
  );
  const dev = await publishFlow(s, {
    definition: agentFlow([OTHER_TOOL]),
    organization: 'default',
    environment: 'DEVELOPMENT',
  });
  t.equal(dev.version, '1', 'published into DEVELOPMENT, where the tool is active');
});

t.test('activating a version in another environment checks its tools there', async (t) => {
  const s = await store(t);
  const dev = { organization: 'default', environment: 'DEVELOPMENT' } as const;
  await publishFlow(s, { definition: tool(TOOL, 'Look up'), ...dev });
  await publishFlow(s, { definition: agentFlow([TOOL]), ...dev });
  const promote = () => activateVersion(s, { processId: AGENT, organization: 'default', environment: 'PRODUCTION', version: '1' });
  const err = await promote().then(
    () => null,
    (e: unknown) => e as { code?: string; details?: { problems?: FlowProblem[] } },
  );
  t.match(err, { code: 'FLOW_INVALID', details: { problems: [{ code: 'UNKNOWN_TOOL', nodeId: 'agent', message: /no active version in PRODUCTION/ }] } });
  t.equal(s.state.flows[AGENT]!.active.PRODUCTION, undefined, 'nothing activated');
  await activateVersion(s, { processId: TOOL, organization: 'default', environment: 'PRODUCTION', version: '1' });
  await promote();
  t.equal(s.state.flows[AGENT]!.active.PRODUCTION, '1', 'promoted once its tool is there');
});

t.test('TOOL_WITHOUT_INPUTS: a tool flow must declare its parameters', async (t) => {
  const s = await store(t);
  await publishFlow(s, { definition: tool(TOOL, 'Look up', null), ...inProduction });
  t.match(await refusal(t, s, agentFlow([TOOL])), [
    { code: 'TOOL_WITHOUT_INPUTS', nodeId: 'agent', property: 'tools.0', message: /declares no inputs/ },
  ]);
  await publishFlow(s, { definition: tool(TOOL, 'Look up'), ...inProduction });
  t.equal((await publishFlow(s, { definition: agentFlow([TOOL]), ...inProduction })).version, '1', 'its next version does');
});

t.test('two tools that the model would know by one name are refused', async (t) => {
  const s = await store(t);
  await publishFlow(s, { definition: tool(TOOL, 'Look up'), ...inProduction });
  await publishFlow(s, { definition: tool(OTHER_TOOL, 'Look  up!'), ...inProduction });
  t.match(
    await refusal(t, s, agentFlow([TOOL, OTHER_TOOL])),
    [{ code: 'SCHEMA', nodeId: 'agent', property: 'tools.1', message: /tools 0 and 1 are both named look_up/ }],
    'names made from flow names',
  );
  t.match(
    await refusal(t, s, agentFlow([TOOL, { processId: OTHER_TOOL, name: 'look_up' }])),
    [{ code: 'SCHEMA', property: 'tools.1', message: /both named look_up/ }],
    'a given name equal to a made one',
  );
  const r = await publishFlow(s, { definition: agentFlow([TOOL, { processId: OTHER_TOOL, name: 'look_up_2' }]), ...inProduction });
  t.equal(r.version, '1', 'a name given to one of them settles it');
});

t.test('every tool problem of a flow is listed at once', async (t) => {
  const s = await store(t);
  await publishFlow(s, { definition: tool(TOOL, 'Look up', null), ...inProduction });
  t.same(
    (await refusal(t, s, agentFlow([TOOL, OTHER_TOOL]))).map((p) => [p.code, p.property]),
    [
      ['TOOL_WITHOUT_INPUTS', 'tools.0'],
      ['UNKNOWN_TOOL', 'tools.1'],
    ],
  );
});

t.test('an agent may name its own flow as a tool: the definition being published is checked', async (t) => {
  const s = await store(t);
  t.match(await refusal(t, s, agentFlow([AGENT])), [{ code: 'TOOL_WITHOUT_INPUTS', property: 'tools.0' }]);
  const r = await publishFlow(s, { definition: agentFlow([AGENT], { inputs: LOOKUP_INPUTS }), ...inProduction });
  t.equal(r.version, '1', 'with inputs it publishes, though no version of it was active before');
});

t.test('tools of agents inside loop and subProcess bodies are checked, located at the container', async (t) => {
  const s = await store(t);
  const inLoop: FlowDefinition = {
    processId: AGENT,
    name: 'Loop agent',
    nodes: {
      start: { type: 'startEvent', next: 'each' },
      each: {
        type: 'loopNode',
        collection: '{tickets}',
        nodes: { s: { type: 'startEvent', next: 'a' }, a: agentNode([TOOL]), done: { type: 'endEvent' } },
        next: 'sub',
      },
      sub: {
        type: 'subProcess',
        nodes: { s: { type: 'startEvent', next: 'b' }, b: agentNode([OTHER_TOOL]), done: { type: 'endEvent' } },
        next: 'done',
      },
      done: { type: 'endEvent' },
    },
  };
  t.match(await refusal(t, s, inLoop), [
    { code: 'UNKNOWN_TOOL', nodeId: 'each', property: 'nodes.a.tools.0' },
    { code: 'UNKNOWN_TOOL', nodeId: 'sub', property: 'nodes.b.tools.0' },
  ]);
  await publishFlow(s, { definition: tool(TOOL, 'Look up'), ...inProduction });
  await publishFlow(s, { definition: tool(OTHER_TOOL, 'Ask'), ...inProduction });
  t.equal((await publishFlow(s, { definition: inLoop, ...inProduction })).version, '1');
});

t.test('a flow directory: an agent whose file sorts before its tools publishes', async (t) => {
  const yaml = (processId: string, name: string, rest: string) =>
    `processId: ${processId}\nname: ${name}\n${rest}nodes:\n  start: { type: startEvent, next: x }\n  x: ${
      rest === '' ? `{ type: callAgent, prompt: hi, tools: [${TOOL}, ${OTHER_TOOL}], next: done }` : '{ type: task, next: done }'
    }\n  done: { type: endEvent }\n`;
  const inputs = 'inputs: { type: object, properties: { q: { type: string } } }\n';
  const root = t.testdir({
    flows: {
      'a-agent.yaml': yaml(AGENT, 'Agent', ''),
      'b-lookup.yaml': yaml(TOOL, 'Look up', inputs),
      'c-ask.yaml': yaml(OTHER_TOOL, 'Ask', inputs),
    },
    store: {},
  });
  const s = await store(t, join(root, 'store'));
  const outcomes = await publishFlowDir(s, join(root, 'flows'), inProduction);
  t.same(
    outcomes.map((o) => [o.file.split('/').pop(), o.ok]),
    [
      ['a-agent.yaml', true],
      ['b-lookup.yaml', true],
      ['c-ask.yaml', true],
    ],
    'outcomes in file order, every one published',
  );
  for (const pid of [AGENT, TOOL, OTHER_TOOL]) t.same(s.state.flows[pid]?.active, { PRODUCTION: '1' });
});

t.test('two flow files with one processId are both refused, naming each other; a later file too', async (t) => {
  const yaml = (name: string) =>
    `processId: ${PID}\nname: ${name}\nnodes:\n  start: { type: startEvent, next: done }\n  done: { type: endEvent }\n`;
  const root = t.testdir({
    flows: { 'a.yaml': yaml('A'), 'b.yaml': yaml('B'), 'c.yaml': yaml('C').replace(PID, AGENT) },
    store: {},
  });
  const s = await store(t, join(root, 'store'));
  const dir = join(root, 'flows');
  const outcomes = await publishFlowDir(s, dir, inProduction);
  t.same(
    outcomes.map((o) => [o.file.split('/').pop(), o.ok]),
    [
      ['a.yaml', false],
      ['b.yaml', false],
      ['c.yaml', true],
    ],
  );
  t.match(outcomes[0], {
    problems: [
      { code: 'DUPLICATE_PROCESS_ID', property: 'processId', line: 1, column: 1, message: /also the processId of b\.yaml/ },
    ],
  });
  t.match(outcomes[1], { problems: [{ code: 'DUPLICATE_PROCESS_ID', message: /also the processId of a\.yaml/ }] });
  t.equal(s.state.flows[PID], undefined, 'neither replaced the other: the flow is not published');

  // As `wfx dev` publishes a file on each save: a file's processId stays its own while it has it.
  const owners = new FlowFileOwners();
  await writeFile(join(dir, 'b.yaml'), yaml('B').replace(PID, TOOL));
  t.match(await publishFlowFile(s, join(dir, 'a.yaml'), inProduction, undefined, owners), { ok: true });
  const c = await publishFlowFile(s, join(dir, 'c.yaml'), inProduction, undefined, owners);
  t.ok(c.ok, 'another processId publishes');
  await writeFile(join(dir, 'd.yaml'), yaml('D'));
  const d = await publishFlowFile(s, join(dir, 'd.yaml'), inProduction, undefined, owners);
  t.match(d, { ok: false, problems: [{ code: 'DUPLICATE_PROCESS_ID', message: /also the processId of a\.yaml/ }] });
  t.equal(s.state.flows[PID]?.versions['1']?.definition.name, 'A', "a's flow is left as it was");
  t.same(Object.keys(s.state.flows[PID]!.versions), ['1']);
  await writeFile(join(dir, 'a.yaml'), yaml('A').replace(PID, OTHER_TOOL));
  t.match(
    await publishFlowFile(s, join(dir, 'd.yaml'), inProduction, undefined, owners),
    { ok: true },
    'once a.yaml has another processId, d.yaml may have its old one',
  );
  t.equal(s.state.flows[PID]?.versions['2']?.definition.name, 'D');
});
