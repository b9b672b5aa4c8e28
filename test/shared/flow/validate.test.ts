import { readdir, readFile } from 'node:fs/promises';
import { Ajv } from 'ajv';
import t from 'tap';
import { isFlowFile } from '../../../src/shared/flow/files.js';
import { flowSchema, NODE_TYPES } from '../../../src/shared/flow/schema.js';
import { SEED_NODE_TYPES } from '../../../src/shared/flow/types.js';
import { validateFlowSource, validateFlowValue, type FlowProblem } from '../../../src/shared/flow/validate.js';
import { HANDLERS } from '../../../src/daemon/engine/nodes/index.js';

const FLOWS_DIR = new URL('../../../../flows/', import.meta.url);
/** The worker example's flow lives with its domain and workers: it needs them registered first. */
const WORKERS_DIR = new URL('../../../../workers/', import.meta.url);

const ok = (nodes: string) => `processId: 0b7c6a3e-2f0e-4a57-9a43-3d4f1c9e8b11
name: Test
nodes:
${nodes}`;

function problems(text: string): FlowProblem[] {
  const v = validateFlowSource(text);
  return v.ok ? [] : [...v.problems];
}

t.test('the example flows (flows/, workers/) validate, and together use every node type the engine runs', async (t) => {
  const used = new Set<string>();
  const files = [
    ...(await readdir(FLOWS_DIR)).filter(isFlowFile).map((name) => new URL(name, FLOWS_DIR)),
    ...(await readdir(new URL('opt-in/', FLOWS_DIR)))
      .filter(isFlowFile)
      .map((name) => new URL(`opt-in/${name}`, FLOWS_DIR)),
    new URL('payment-charge.yaml', WORKERS_DIR),
  ];
  for (const file of files) {
    const name = file.pathname.split('/').slice(-2).join('/');
    const text = await readFile(file, 'utf8');
    const v = validateFlowSource(text);
    t.ok(v.ok, `${name} validates`);
    if (v.ok) for (const node of Object.values(v.flow.nodes)) used.add(node.type);
  }
  t.same([...used].sort(), [...NODE_TYPES].sort());
});

t.test(
  'every node type of the schema has a handler, and every seed type is in the schema or refused by name',
  async (t) => {
    t.same(Object.keys(HANDLERS).sort(), [...NODE_TYPES].sort());
    for (const type of SEED_NODE_TYPES) {
      if ((NODE_TYPES as string[]).includes(type)) continue;
      const p = problems(
        ok(`  start: { type: startEvent, next: x }\n  x: { type: ${type}, next: done }\n  done: { type: endEvent }`),
      );
      t.match(
        p,
        [{ code: 'NODE_TYPE_UNSUPPORTED', nodeId: 'x', property: 'type', line: 5 }],
        `${type} is refused by name`,
      );
    }
  },
);

t.test('each kind of problem is reported with node, property and line:column', async (t) => {
  const cases: Array<[string, string, Partial<Record<keyof FlowProblem, unknown>>]> = [
    [
      'unknown type',
      '  start: { type: startEvent, next: x }\n  x: { type: teleport, next: done }\n  done: { type: endEvent }',
      { code: 'UNKNOWN_NODE_TYPE', nodeId: 'x', line: 5, column: 14 },
    ],
    [
      'missing property',
      '  start: { type: startEvent, next: x }\n  x: { type: ifElse, then: done }\n  done: { type: endEvent }',
      { code: 'MISSING_PROPERTY', nodeId: 'x', property: 'condition', line: 5 },
    ],
    [
      'wrong type',
      '  start: { type: startEvent, next: x }\n  x: { type: endEvent, terminate: "yes" }',
      { code: 'SCHEMA', nodeId: 'x', property: 'terminate', line: 5 },
    ],
    [
      'unknown target',
      '  start: { type: startEvent, next: ghost }',
      { code: 'UNKNOWN_TARGET', nodeId: 'start', property: 'next', line: 4, column: 36 },
    ],
    [
      'dead end',
      '  start: { type: startEvent, next: x }\n  x: { type: exclusiveGateway }',
      { code: 'DEAD_END', nodeId: 'x' },
    ],
    [
      'unreachable',
      '  start: { type: startEvent, next: done }\n  island: { type: task, next: done }\n  done: { type: endEvent }',
      { code: 'UNREACHABLE', nodeId: 'island', line: 5 },
    ],
    [
      'two starts',
      '  a: { type: startEvent, next: done }\n  b: { type: startEvent, next: done }\n  done: { type: endEvent }',
      { code: 'START_EVENT_COUNT' },
    ],
    [
      'bad condition',
      '  start: { type: startEvent, next: x }\n  x: { type: ifElse, condition: "${a &&}", then: done, else: done }\n  done: { type: endEvent }',
      { code: 'BAD_CONDITION', nodeId: 'x', property: 'condition' },
    ],
    [
      'condition without ${}',
      '  start: { type: startEvent, next: x }\n  x: { type: ifElse, condition: "a > 1", then: done, else: done }\n  done: { type: endEvent }',
      { code: 'SCHEMA', nodeId: 'x', property: 'condition' },
    ],
    [
      'bad inputType',
      '  start: { type: startEvent, next: x }\n  x: { type: inputNode, inputType: slider, next: done }\n  done: { type: endEvent }',
      { code: 'SCHEMA', nodeId: 'x', property: 'inputType' },
    ],
    [
      'select without options',
      '  start: { type: startEvent, next: x }\n  x: { type: inputNode, inputType: select, next: done }\n  done: { type: endEvent }',
      { code: 'MISSING_PROPERTY', nodeId: 'x', property: 'options' },
    ],
    [
      'bad duration',
      '  start: { type: startEvent, next: x }\n  x: { type: intermediateCatchEvent, eventType: timer, duration: 5x, next: done }\n  done: { type: endEvent }',
      { code: 'BAD_DURATION', nodeId: 'x', property: 'duration' },
    ],
    [
      'message without ref',
      '  start: { type: startEvent, next: x }\n  x: { type: intermediateCatchEvent, eventType: message, next: done }\n  done: { type: endEvent }',
      { code: 'MISSING_PROPERTY', nodeId: 'x', property: 'messageRef' },
    ],
    [
      'bad id',
      '  start: { type: startEvent, next: done }\n  "9lives": { type: endEvent }\n  done: { type: endEvent }',
      { code: 'SCHEMA', nodeId: '9lives', message: /node id "9lives" must start with a letter or _/, line: 5 },
    ],
  ];
  for (const [name, nodes, expected] of cases) t.match(problems(ok(nodes)), [expected], name);
});

t.test('every problem is listed at once', async (t) => {
  const p = problems(`processId: nope
name: ""
nodes:
  start: { type: startEvent, next: ghost }
  x: { type: task }
`);
  t.same(
    p.map((x) => x.code).sort(),
    ['DEAD_END', 'MISSING_PROPERTY', 'SCHEMA', 'SCHEMA', 'UNKNOWN_TARGET', 'UNREACHABLE'].sort(),
  );
});

t.test('syntax errors and duplicate ids are reported with positions', async (t) => {
  t.match(problems('processId: x\nnodes: [\n'), [{ code: 'SYNTAX', line: Number }]);
  t.match(
    problems(ok('  a: { type: startEvent, next: a2 }\n  a2: { type: endEvent }\n  a2: { type: endEvent }')),
    [{ code: 'SYNTAX', line: 6 }],
    'ids collide',
  );
});

t.test('JSON flow files validate like YAML, with positions', async (t) => {
  const json = JSON.stringify(
    {
      processId: '0b7c6a3e-2f0e-4a57-9a43-3d4f1c9e8b11',
      name: 'J',
      nodes: { start: { type: 'startEvent', next: 'ghost' } },
    },
    null,
    2,
  );
  t.match(problems(json), [{ code: 'UNKNOWN_TARGET', nodeId: 'start', line: 7, column: 15 }]);
});

t.test('an unknown trigger type is refused rather than ignored; email filters are checked', async (t) => {
  const flow = (trigger: string) =>
    problems(
      `${ok('  start: { type: startEvent, next: done }\n  done: { type: endEvent }')}\ntriggers:\n  - ${trigger}\n`,
    );
  t.match(flow('{ type: carrier-pigeon }'), [{ code: 'SCHEMA', property: 'triggers.0.type' }]);
  t.same(
    flow(
      '{ type: email, connection: support, filters: { subjectContains: Order, senderMatches: "@example\\\\.com$" } }',
    ),
    [],
  );
  t.match(flow('{ type: email, connection: support, filters: { senderMatches: "([a-z" } }'), [
    { code: 'BAD_PATTERN', property: 'triggers.0.filters.senderMatches' },
  ]);
  t.match(flow('{ type: email, connection: support, filters: { fromContains: x } }'), [
    { code: 'SCHEMA', property: 'triggers.0.filters.fromContains' },
  ]);
});

t.test("schedule triggers: the expression and zone are checked with the scheduler's own code", async (t) => {
  const flow = (trigger: string) =>
    problems(
      `${ok('  start: { type: startEvent, next: done }\n  done: { type: endEvent }')}\ntriggers:\n  - ${trigger}\n`,
    );
  t.same(flow('{ type: schedule, cron: "*/5 * * * *", timezone: Europe/Berlin, missedRuns: last }'), []);
  t.match(flow('{ type: schedule, cron: "61 * * * *" }'), [{ code: 'BAD_SCHEDULE', property: 'triggers.0.cron' }]);
  t.match(flow('{ type: schedule, cron: "* * * *" }'), [
    { code: 'BAD_SCHEDULE', property: 'triggers.0.cron', message: /five fields/ },
  ]);
  t.match(flow('{ type: schedule, cron: "* * * * *", timezone: Atlantis/Capital }'), [
    { code: 'BAD_SCHEDULE', property: 'triggers.0.timezone' },
  ]);
  t.match(flow('{ type: schedule, cron: "* * * * *", missedRuns: sometimes }'), [
    { code: 'SCHEMA', property: 'triggers.0.missedRuns' },
  ]);
});

t.test('a non-object is refused without throwing', async (t) => {
  for (const v of [null, 1, 'x', []]) t.equal(validateFlowValue(v).ok, false);
});

t.test('the published schema is valid JSON Schema that editors can use', async (t) => {
  const ajv = new Ajv({ strict: true, strictTypes: false, allowUnionTypes: true });
  t.doesNotThrow(() => ajv.compile(flowSchema()));
  const schema = flowSchema() as { definitions: Record<string, unknown> };
  for (const type of NODE_TYPES) t.ok(schema.definitions[type], `${type} has a definition`);
});

t.test(
  'nested bodies (loopNode, embedded subProcess) are validated like flows, problems located inside them',
  async (t) => {
    const body = (inner: string) =>
      ok(`  start: { type: startEvent, next: each }
  each:
    type: loopNode
    collection: "{items}"
    nodes:
${inner}
    next: done
  done: { type: endEvent }`);
    t.same(problems(body('      s: { type: startEvent, next: e }\n      e: { type: endEvent }')), [], 'a valid body');
    t.match(problems(body('      s: { type: startEvent, next: ghost }\n      e: { type: endEvent }')), [
      { code: 'UNKNOWN_TARGET', nodeId: 'each', property: 'nodes.s.next', line: 9 },
      { code: 'UNREACHABLE', nodeId: 'each', property: 'nodes.e', line: 10 },
    ]);
    t.match(
      problems(body('      e: { type: endEvent }')),
      [{ code: 'START_EVENT_COUNT', nodeId: 'each', property: 'nodes' }],
      'a body needs its own start',
    );
    t.match(
      problems(
        body(
          '      s: { type: startEvent, next: x }\n      x: { type: teleport, next: e }\n      e: { type: endEvent }',
        ),
      ),
      [{ code: 'UNKNOWN_NODE_TYPE', nodeId: 'each', property: 'nodes.x.type', line: 10 }],
    );
    t.match(problems(body('      s: { type: startEvent, next: e }\n      e: { type: endEvent, terminate: 3 }')), [
      { code: 'SCHEMA', nodeId: 'each', property: 'nodes.e.terminate' },
    ]);
  },
);

t.test('composite and work nodes: the rules the schema cannot say', async (t) => {
  const cases: Array<[string, string, Partial<Record<keyof FlowProblem, unknown>>]> = [
    [
      'loop with both collection and condition',
      '  start: { type: startEvent, next: l }\n  l: { type: loopNode, collection: "{x}", condition: "${true}", nodes: { s: { type: startEvent, next: e }, e: { type: endEvent } }, next: done }\n  done: { type: endEvent }',
      { code: 'MISSING_PROPERTY', nodeId: 'l', property: 'collection' },
    ],
    [
      'parallel condition loop',
      '  start: { type: startEvent, next: l }\n  l: { type: loopNode, condition: "${true}", parallel: true, nodes: { s: { type: startEvent, next: e }, e: { type: endEvent } }, next: done }\n  done: { type: endEvent }',
      { code: 'SCHEMA', nodeId: 'l', property: 'parallel' },
    ],
    [
      'subProcess with neither nodes nor processId',
      '  start: { type: startEvent, next: sp }\n  sp: { type: subProcess, next: done }\n  done: { type: endEvent }',
      { code: 'MISSING_PROPERTY', nodeId: 'sp', property: 'nodes' },
    ],
    [
      'boundary on an unknown node',
      '  start: { type: startEvent, next: done }\n  b: { type: boundaryEvent, attachedTo: ghost, event: error, next: done }\n  done: { type: endEvent }',
      { code: 'UNKNOWN_TARGET', nodeId: 'b', property: 'attachedTo', line: 5 },
    ],
    [
      'timer boundary without duration',
      '  start: { type: startEvent, next: w }\n  w: { type: task, next: done }\n  b: { type: boundaryEvent, attachedTo: w, event: timer, next: done }\n  done: { type: endEvent }',
      { code: 'MISSING_PROPERTY', nodeId: 'b', property: 'duration' },
    ],
    [
      'boundary on an endEvent',
      '  start: { type: startEvent, next: done }\n  b: { type: boundaryEvent, attachedTo: done, event: error, next: done }\n  done: { type: endEvent }',
      { code: 'SCHEMA', nodeId: 'b', property: 'attachedTo' },
    ],
    [
      'serviceTask retry interval',
      '  start: { type: startEvent, next: h }\n  h: { type: serviceTask, url: "http://x", retry: { initialInterval: soon }, next: done }\n  done: { type: endEvent }',
      { code: 'BAD_DURATION', nodeId: 'h', property: 'retry.initialInterval' },
    ],
    [
      'scriptTask without script',
      '  start: { type: startEvent, next: s }\n  s: { type: scriptTask, next: done }\n  done: { type: endEvent }',
      { code: 'MISSING_PROPERTY', nodeId: 's', property: 'script' },
    ],
  ];
  for (const [name, nodes, want] of cases) t.match(problems(ok(nodes)), [want], name);
  const reachable = problems(
    ok(
      '  start: { type: startEvent, next: w }\n  w: { type: task, next: done }\n  b: { type: boundaryEvent, attachedTo: w, event: error, next: handle }\n  handle: { type: endEvent }\n  done: { type: endEvent }',
    ),
  );
  t.same(reachable, [], 'a boundary event and its path are reached through the node it is attached to');
});

t.test('aiTask and memoryAction publish, with every property the engine reads', async (t) => {
  const good = ok(`  start: { type: startEvent, next: recall }
  recall:
    type: memoryAction
    action: retrieve
    namespace: customers
    key: "{customerId}"
    window: 5
    default: []
    resultVariable: history
    next: classify
  classify:
    type: aiTask
    provider: openai
    model: gpt-4o-mini
    systemPrompt: "You sort support tickets."
    prompt: "Ticket: {ticket}"
    schema:
      type: object
      required: [category]
      additionalProperties: false
      properties: { category: { enum: [billing, bug, other] } }
    temperature: 0
    maxTokens: 200
    seed: 7
    timeout: 30s
    retry: { maxAttempts: 2, initialInterval: 1s, backoff: 2, maxInterval: 10s }
    repairs: 2
    memory: { namespace: chats, key: "{customerId}", window: 10 }
    resultVariable: triage
    next: remember
    errorFlow: done
  remember:
    type: memoryAction
    action: append
    namespace: customers
    key: "{customerId}"
    value: "{triage.data}"
    maxItems: 50
    ttl: 30d
    next: chat
  chat:
    type: aiTask
    messages:
      - { role: system, content: "Be brief." }
      - { role: user, content: "{ticket}" }
    responseFormat: text
    next: forget
  forget: { type: memoryAction, action: delete, namespace: customers, key: old, next: keys }
  keys: { type: memoryAction, action: list, namespace: customers, next: store }
  store: { type: memoryAction, action: store, namespace: n, key: k, value: { a: 1 }, ttl: 1h, next: done }
  done: { type: endEvent }`);
  t.same(problems(good), [], 'a flow using both types publishes');
});

t.test('aiTask and memoryAction: bad properties are refused where they are', async (t) => {
  const flow = (node: string) => ok(`  start: { type: startEvent, next: x }\n  x: ${node}\n  done: { type: endEvent }`);
  const cases: Array<[string, string, Partial<Record<keyof FlowProblem, unknown>>]> = [
    [
      'aiTask without prompt or messages',
      '{ type: aiTask, next: done }',
      { code: 'MISSING_PROPERTY', property: 'prompt' },
    ],
    [
      'aiTask with both prompt and messages',
      '{ type: aiTask, prompt: hi, messages: [{ role: user, content: hi }], next: done }',
      { code: 'MISSING_PROPERTY', property: 'prompt' },
    ],
    [
      'a message role that is not one',
      '{ type: aiTask, messages: [{ role: robot, content: hi }], next: done }',
      { code: 'SCHEMA', property: 'messages.0.role' },
    ],
    [
      'a schema with an unknown type',
      '{ type: aiTask, prompt: hi, schema: { type: object, properties: { a: { type: strin } } }, next: done }',
      { code: 'SCHEMA', property: 'schema.properties.a.type', message: /not a valid JSON Schema/ },
    ],
    [
      'a schema with a misspelt keyword',
      '{ type: aiTask, prompt: hi, schema: { type: object, proprties: {} }, next: done }',
      { code: 'SCHEMA', property: 'schema', message: /proprties/ },
    ],
    [
      'a schema of a draft this daemon does not read',
      '{ type: aiTask, prompt: hi, schema: { $schema: "http://json-schema.org/draft-04/schema#" }, next: done }',
      { code: 'SCHEMA', property: 'schema.$schema' },
    ],
    [
      'a schema with responseFormat text',
      '{ type: aiTask, prompt: hi, responseFormat: text, schema: { type: object }, next: done }',
      { code: 'SCHEMA', property: 'responseFormat' },
    ],
    [
      'repairs above 3',
      '{ type: aiTask, prompt: hi, repairs: 4, next: done }',
      { code: 'SCHEMA', property: 'repairs' },
    ],
    [
      'a bad timeout',
      '{ type: aiTask, prompt: hi, timeout: soon, next: done }',
      { code: 'BAD_DURATION', property: 'timeout' },
    ],
    [
      'a bad retry interval',
      '{ type: aiTask, prompt: hi, retry: { maxInterval: later }, next: done }',
      { code: 'BAD_DURATION', property: 'retry.maxInterval' },
    ],
    [
      'memory without key',
      '{ type: aiTask, prompt: hi, memory: { namespace: n }, next: done }',
      { code: 'MISSING_PROPERTY', property: 'memory.key' },
    ],
    [
      'an unknown action',
      '{ type: memoryAction, action: forget, namespace: n, key: k, next: done }',
      { code: 'SCHEMA', property: 'action' },
    ],
    [
      'store without value',
      '{ type: memoryAction, action: store, namespace: n, key: k, next: done }',
      { code: 'MISSING_PROPERTY', property: 'value' },
    ],
    [
      'retrieve without key',
      '{ type: memoryAction, action: retrieve, namespace: n, next: done }',
      { code: 'MISSING_PROPERTY', property: 'key' },
    ],
    [
      'list with a key',
      '{ type: memoryAction, action: list, namespace: n, key: k, next: done }',
      { code: 'SCHEMA', property: 'key' },
    ],
    [
      'window on an append',
      '{ type: memoryAction, action: append, namespace: n, key: k, value: 1, window: 3, next: done }',
      { code: 'SCHEMA', property: 'window' },
    ],
    [
      'ttl on a retrieve',
      '{ type: memoryAction, action: retrieve, namespace: n, key: k, ttl: 1h, next: done }',
      { code: 'SCHEMA', property: 'ttl' },
    ],
    [
      'a bad ttl',
      '{ type: memoryAction, action: store, namespace: n, key: k, value: 1, ttl: forever, next: done }',
      { code: 'BAD_DURATION', property: 'ttl' },
    ],
    [
      'an empty namespace',
      '{ type: memoryAction, action: list, namespace: "", next: done }',
      { code: 'SCHEMA', property: 'namespace' },
    ],
  ];
  for (const [name, node, want] of cases) t.match(problems(flow(node)), [{ nodeId: 'x', ...want }], name);
});

t.test("a flow's inputs: a JSON Schema of an object, problems located inside it at line:column", async (t) => {
  const withInputs = (inputs: string) =>
    problems(
      `processId: 0b7c6a3e-2f0e-4a57-9a43-3d4f1c9e8b11\nname: Test\ninputs:\n${inputs}\nnodes:\n  start: { type: startEvent, next: done }\n  done: { type: endEvent }\n`,
    );
  t.same(
    withInputs(
      '  type: object\n  required: [orderId]\n  properties:\n    orderId: { type: string, description: The order }\n    notify: { type: boolean, default: true }',
    ),
    [],
    'valid inputs',
  );
  t.same(
    withInputs(
      '  $schema: "https://json-schema.org/draft/2020-12/schema"\n  type: object\n  properties:\n    pair: { type: array, prefixItems: [{ type: string }] }',
    ),
    [],
    'a 2020-12 schema',
  );
  t.match(
    withInputs('  type: object\n  properties:\n    orderId: { type: strin }'),
    [
      {
        code: 'SCHEMA',
        property: 'inputs.properties.orderId.type',
        line: 6,
        column: 22,
        message: /not a valid JSON Schema/,
      },
    ],
    'a bad type inside a property',
  );
  t.match(
    withInputs('  type: array\n  items: { type: string }'),
    [{ code: 'SCHEMA', property: 'inputs.type', line: 4, column: 9, message: /type object/ }],
    'start data is always an object',
  );
  t.match(
    withInputs('  type: object\n  proprties: { a: { type: string } }'),
    [{ code: 'SCHEMA', property: 'inputs', line: 4, message: /proprties/ }],
    'a misspelt keyword',
  );
  t.match(withInputs('  - orderId'), [{ code: 'SCHEMA', property: 'inputs', line: 4 }], 'a list is no schema');
  t.equal(withInputs('  - orderId').length, 1, 'reported once');
});

const TOOL_A = '11111111-1111-4111-8111-111111111111';
const TOOL_B = '22222222-2222-4222-8222-222222222222';

t.test('callAgent publishes with every property the engine reads', async (t) => {
  const good = ok(`  start: { type: startEvent, next: agent }
  agent:
    type: callAgent
    provider: openai
    model: gpt-4o-mini
    systemPrompt: "You handle refund requests."
    prompt: "Customer {customerId} writes: {message}"
    tools:
      - ${TOOL_A}
      - { processId: ${TOOL_B}, name: ask_supervisor, description: "Asks a person" }
    schema: { type: object, required: [decision], properties: { decision: { enum: [refund, deny] } } }
    maxSteps: 10
    maxToolCalls: 20
    maxTotalTokens: 50000
    parallelToolCalls: false
    failOnToolError: true
    memory: { namespace: refunds, key: "{customerId}", window: 10 }
    timeout: 1m
    temperature: 0
    retry: { maxAttempts: 2, initialInterval: 1s }
    repairs: 1
    resultVariable: result
    next: done
    errorFlow: done
  done: { type: endEvent }`);
  t.same(problems(good), []);
  const messages = ok(`  start: { type: startEvent, next: agent }
  agent:
    type: callAgent
    messages: [{ role: system, content: Be brief. }, { role: user, content: "{message}" }]
    tools: [${TOOL_A}]
    next: done
  done: { type: endEvent }`);
  t.same(problems(messages), [], 'messages instead of a prompt');
});

t.test('callAgent: bad properties are refused where they are', async (t) => {
  const flow = (node: string) =>
    ok(
      `  start: { type: startEvent, next: x }\n  x: { type: callAgent, next: done, ${node} }\n  done: { type: endEvent }`,
    );
  const cases: Array<[string, string, Partial<Record<keyof FlowProblem, unknown>>]> = [
    [
      'a tool listed twice (once by id, once as an entry)',
      `prompt: hi, tools: [${TOOL_A}, { processId: ${TOOL_A}, name: again }]`,
      { code: 'SCHEMA', property: 'tools.1', message: /a tool of this agent already/, line: 5 },
    ],
    [
      'two tools given one name',
      `prompt: hi, tools: [{ processId: ${TOOL_A}, name: look }, { processId: ${TOOL_B}, name: look }]`,
      { code: 'SCHEMA', property: 'tools.1.name', message: /two tools are named look/ },
    ],
    [
      'neither prompt nor messages',
      `tools: [${TOOL_A}]`,
      { code: 'MISSING_PROPERTY', property: 'prompt', message: /a callAgent needs exactly one of prompt and messages/ },
    ],
    [
      'both prompt and messages',
      `prompt: hi, messages: [{ role: user, content: hi }], tools: [${TOOL_A}]`,
      { code: 'MISSING_PROPERTY', property: 'prompt' },
    ],
    [
      'an answer schema that does not compile',
      `prompt: hi, tools: [${TOOL_A}], schema: { type: object, properties: { decision: { type: strin } } }`,
      { code: 'SCHEMA', property: 'schema.properties.decision.type', message: /not a valid JSON Schema/ },
    ],
    ['no tools', 'prompt: hi', { code: 'MISSING_PROPERTY', property: 'tools' }],
    ['an empty list of tools', 'prompt: hi, tools: []', { code: 'SCHEMA', property: 'tools' }],
    [
      'a tool name a model API refuses',
      `prompt: hi, tools: [{ processId: ${TOOL_A}, name: "look up" }]`,
      { code: 'SCHEMA', property: 'tools.0' },
    ],
    ['maxSteps above 100', `prompt: hi, tools: [${TOOL_A}], maxSteps: 101`, { code: 'SCHEMA', property: 'maxSteps' }],
    ['a bad timeout', `prompt: hi, tools: [${TOOL_A}], timeout: soon`, { code: 'BAD_DURATION', property: 'timeout' }],
  ];
  for (const [name, node, want] of cases) t.match(problems(flow(node)), [{ nodeId: 'x', ...want }], name);
  t.same(
    problems(flow(`prompt: hi, tools: [{ processId: ${TOOL_A}, name: look }, { processId: ${TOOL_B}, name: Look }]`)),
    [],
    'names differing in case are two names',
  );
});

t.test('callAgent inside a loop body is checked like one at the top', async (t) => {
  const p = problems(
    ok(`  start: { type: startEvent, next: each }
  each:
    type: loopNode
    collection: "{tickets}"
    nodes:
      s: { type: startEvent, next: a }
      a: { type: callAgent, prompt: "{item}", tools: [${TOOL_A}, ${TOOL_A}], next: e }
      e: { type: endEvent }
    next: done
  done: { type: endEvent }`),
  );
  t.match(p, [{ code: 'SCHEMA', nodeId: 'each', property: 'nodes.a.tools.1', line: 10 }]);
});

t.test('voiceTask: what each operation needs and takes, and what the local engine can do', async (t) => {
  const voice = (props: string) =>
    problems(
      ok(`  start: { type: startEvent, next: v }
  v: { type: voiceTask, ${props}, next: done }
  done: { type: endEvent }
`),
    );
  t.same(voice('operation: speak, text: hi, voice: en-us, rate: 150, format: wav'), []);
  t.same(voice('operation: transcribe, audio: "{a}", language: en, vocabulary: [yes, no, thank you]'), []);
  t.same(
    voice('operation: speak, text: hi, provider: openai, model: tts-1, format: mp3, retry: { maxAttempts: 2 }'),
    [],
  );
  t.match(voice('operation: speak'), [{ code: 'MISSING_PROPERTY', nodeId: 'v', property: 'text' }]);
  t.match(voice('operation: transcribe'), [{ code: 'MISSING_PROPERTY', nodeId: 'v', property: 'audio' }]);
  t.match(voice('operation: speak, text: hi, audio: x'), [
    { code: 'SCHEMA', property: 'audio', message: /transcribe only/ },
  ]);
  t.match(voice('operation: transcribe, audio: x, voice: en'), [
    { code: 'SCHEMA', property: 'voice', message: /speak only/ },
  ]);
  t.match(voice('operation: speak, text: hi, format: mp3'), [
    { code: 'SCHEMA', property: 'format', message: /wav only/ },
  ]);
  t.match(voice('operation: transcribe, audio: x, provider: p, vocabulary: [a]'), [
    { code: 'SCHEMA', property: 'vocabulary', message: /local engine only/ },
  ]);
  t.match(voice('operation: sing, text: hi'), [{ code: 'SCHEMA', property: 'operation' }]);
  t.match(voice('operation: speak, text: hi, rate: 1000'), [{ code: 'SCHEMA', property: 'rate' }]);
  t.match(voice('operation: transcribe, audio: x, vocabulary: ["no; drop table"]'), [
    { code: 'SCHEMA', property: 'vocabulary.0' },
  ]);
});

t.test('an on-demand trigger documents a flow started by hand or API; it takes a description only', async (t) => {
  const flow = (trigger: string) => `processId: 0b7c6a3e-2f0e-4a57-9a43-3d4f1c9e8b11
name: Test
triggers:
  - ${trigger}
nodes:
  start: { type: startEvent, next: done }
  done: { type: endEvent }
`;
  t.same(problems(flow('{ type: on-demand }')), []);
  t.same(problems(flow('{ type: on-demand, description: started from the support console }')), []);
  t.match(problems(flow('{ type: on-demand, cron: "* * * * *" }')), [{ code: 'SCHEMA', property: 'triggers.0.cron' }]);
});

t.test('an execution trigger takes end states and an optional flow id', async (t) => {
  const flow = (trigger: string) => `processId: 0b7c6a3e-2f0e-4a57-9a43-3d4f1c9e8b11
name: Test
triggers:
  - ${trigger}
nodes:
  start: { type: startEvent, next: done }
  done: { type: endEvent }
`;
  t.same(problems(flow('{ type: execution, states: [FAILED] }')), []);
  t.same(
    problems(
      flow('{ type: execution, processId: 0192f0c0-0000-7000-8000-0000000000f1, states: [COMPLETED, CANCELLED] }'),
    ),
    [],
  );
  t.match(
    problems(flow('{ type: execution }')),
    [{ code: 'MISSING_PROPERTY', property: 'triggers.0.states' }],
    'states is required',
  );
  t.match(problems(flow('{ type: execution, states: [] }')), [{ code: 'SCHEMA', property: 'triggers.0.states' }]);
  t.match(problems(flow('{ type: execution, states: [DONE] }')), [{ code: 'SCHEMA', property: 'triggers.0.states.0' }]);
  t.match(problems(flow('{ type: execution, processId: orders, states: [FAILED] }')), [
    { code: 'SCHEMA', property: 'triggers.0.processId' },
  ]);
});

t.test('BAD_SCRIPT: a script is compiled, never run, and its error placed inside it', async (t) => {
  const block = ok(`  start: { type: startEvent, next: sum }
  sum:
    type: scriptTask
    script: |
      const total = vars.items.length;
      return { total };   # a YAML comment is script text here
    next: done
  done: { type: endEvent }
`);
  t.same(problems(block), [
    {
      code: 'BAD_SCRIPT',
      message: 'script does not parse: Invalid or unexpected token',
      nodeId: 'sum',
      property: 'script',
      line: 9,
      column: 27,
    },
  ]);
  const inline = ok(`  start: { type: startEvent, next: one }
  one: { type: scriptTask, script: "return { a: 1", next: done }
  done: { type: endEvent }
`);
  t.match(problems(inline), [{ code: 'BAD_SCRIPT', message: /it ends before it is complete/, line: 5, column: 50 }]);
  const fine = ok(`  start: { type: startEvent, next: one }
  one: { type: scriptTask, script: "while (true) {}", next: done }
  done: { type: endEvent }
`);
  t.same(problems(fine), [], 'a script that would never end still parses: nothing runs at validation');
  t.same(
    problems(fine.replace('while (true) {}', 'return await Promise.resolve(1)')),
    [
      {
        code: 'BAD_SCRIPT',
        message: 'script does not parse: await is only valid in async functions and the top level bodies of modules',
        nodeId: 'one',
        property: 'script',
        line: 5,
        column: 44,
      },
    ],
    'the body of a plain function, as the sandbox runs it',
  );
});

t.test('a work node whose timeout is over its ceiling is refused; waits have none', async (t) => {
  const flow = (node: string) =>
    ok(`  start: { type: startEvent, next: x }
  x: ${node}
  done: { type: endEvent }
`);
  const cases: [string, string][] = [
    ['scriptTask', '{ type: scriptTask, script: "while (true) {}", timeout: 24d, next: done }'],
    ['scriptTask', '{ type: scriptTask, script: "return 1", timeout: 30d, next: done }'],
    ['scriptTask', '{ type: scriptTask, script: "return 1", timeout: PT5M0.001S, next: done }'],
    ['serviceTask', '{ type: serviceTask, url: "http://x.test/", timeout: 30d, next: done }'],
    ['aiTask', '{ type: aiTask, prompt: hi, timeout: 2h, next: done }'],
    ['callAgent', '{ type: callAgent, prompt: hi, tools: [t], timeout: P1D, next: done }'],
    ['voiceTask', '{ type: voiceTask, operation: speak, text: hi, timeout: 61m, next: done }'],
  ];
  for (const [type, node] of cases)
    t.same(
      problems(flow(node)).map(({ message, ...p }) => ({ ...p, ceiling: /at most (5m|1h),/.test(message) })),
      [
        {
          code: 'BAD_DURATION',
          nodeId: 'x',
          property: 'timeout',
          line: 5,
          column: node.indexOf('timeout: ') + 15,
          ceiling: true,
        },
      ],
      `${type}: ${node}`,
    );

  const fine = [
    '{ type: scriptTask, script: "return 1", timeout: 5m, next: done }',
    '{ type: serviceTask, url: "http://x.test/", timeout: 1h, next: done }',
    '{ type: inputNode, inputType: textbox, timeout: 30d, next: done }',
    '{ type: userTask, fields: [{ name: a, type: text }], timeout: 365d, next: done }',
    '{ type: intermediateCatchEvent, eventType: timer, duration: 30d, next: done }',
    '{ type: domainTask, domain: d, action: a, timeout: 30d, next: done }',
  ];
  for (const node of fine) t.same(problems(flow(node)), [], node);
});

t.test("a form field's default must fit the field, unless it names a variable", async (t) => {
  const flow = (fields: string) =>
    ok(`  start: { type: startEvent, next: ask }
  ask: { type: inputNode, inputType: form, fields: ${fields}, next: done }
  done: { type: endEvent }
`);
  t.same(
    problems(
      flow(
        '[{ name: a, type: boolean, default: true }, { name: b, type: select, options: [S, M], default: M }, { name: c, type: number, default: "{n}" }]',
      ),
    ),
    [],
    'defaults that fit, and one resolved when the node is reached',
  );
  const bad = problems(
    flow('[{ name: a, type: number, default: many }, { name: b, type: select, options: [S], default: X }]'),
  );
  t.same(
    bad.map((p) => [p.code, p.nodeId, p.property]),
    [
      ['SCHEMA', 'ask', 'fields.0.default'],
      ['SCHEMA', 'ask', 'fields.1.default'],
    ],
  );
});

t.test('a mistyped name is answered with the name it most likely means, and only then', async (t) => {
  const cases: Array<[string, string, RegExp | null]> = [
    [
      'a property of a node',
      '  start: { type: startEvent, next: x }\n  x: { type: serviceTask, url: "http://127.0.0.1/", retries: 3, next: done }\n  done: { type: endEvent }',
      /unknown property "retries"; did you mean "retry"\?/,
    ],
    [
      'a node type',
      '  start: { type: startEvent, next: x }\n  x: { type: servicetask, url: "http://127.0.0.1/", next: done }\n  done: { type: endEvent }',
      /unknown node type "servicetask"; did you mean "serviceTask"\?/,
    ],
    [
      'a value of a list',
      '  start: { type: startEvent, next: x }\n  x: { type: inputNode, inputType: textbx, next: done }\n  done: { type: endEvent }',
      /must be one of: .*; did you mean "textbox"\?/,
    ],
    [
      'a property nothing is near',
      '  start: { type: startEvent, next: x }\n  x: { type: serviceTask, url: "http://127.0.0.1/", colour: red, next: done }\n  done: { type: endEvent }',
      null,
    ],
  ];
  for (const [what, nodes, expected] of cases) {
    const found = problems(ok(nodes));
    t.ok(found.length > 0, `${what}: refused`);
    const text = found.map((p) => p.message).join('\n');
    if (expected) t.match(text, expected, what);
    else t.notMatch(text, /did you mean/, `${what}: no guess`);
  }
  const top = problems(ok('  start: { type: startEvent, next: done }\n  done: { type: endEvent }') + '\ntrigers: []\n');
  t.match(top.map((p) => p.message).join('\n'), /unknown property "trigers"; did you mean "triggers"\?/);
});

t.test('a trigger whose starts the inputs always refuse is a problem at the trigger', async (t) => {
  const flow = (inputs: string, trigger: string) =>
    problems(
      `${ok('  start: { type: startEvent, next: done }\n  done: { type: endEvent }')}\ninputs: ${inputs}\ntriggers:\n  - ${trigger}\n`,
    );
  const orderId = '{ type: object, required: [orderId], properties: { orderId: { type: string } } }';
  t.match(flow(orderId, '{ type: webhook, webhook: shop }'), [
    {
      code: 'TRIGGER_INPUTS_UNMET',
      property: 'triggers.0',
      line: 8,
      message: /inputs require "orderId", but a webhook trigger starts the flow with webhookPayload, .* only/,
    },
  ]);
  t.match(flow(orderId, '{ type: schedule, cron: "0 2 * * *" }'), [
    { code: 'TRIGGER_INPUTS_UNMET', message: /scheduledTime, triggerType only/ },
  ]);
  t.same(flow(orderId, '{ type: on-demand }'), [], 'started by hand, with any data');
  t.same(
    flow(
      '{ type: object, required: [orderId], properties: { orderId: { type: string, default: none } } }',
      '{ type: webhook, webhook: shop }',
    ),
    [],
    'a default fills it in',
  );
  t.same(flow('{ type: object, required: [webhookPayload] }', '{ type: webhook, webhook: shop }'), [], 'what it gives');
  t.match(
    flow(
      '{ type: object, additionalProperties: false, properties: { scheduledTime: { type: string } } }',
      '{ type: schedule, cron: "0 2 * * *" }',
    ),
    [{ code: 'TRIGGER_INPUTS_UNMET', message: /allow no property they do not list.*"triggerType"/ }],
  );
});

t.test("nodes written as a list, and another tool's word for an input type, are said as such", async (t) => {
  const listed = problems(
    'processId: 0b7c6a3e-2f0e-4a57-9a43-3d4f1c9e8b11\nname: L\nnodes:\n  - start: { type: startEvent }\n',
  );
  t.match(listed, [{ code: 'SCHEMA', property: 'nodes', message: /a mapping of node ids to nodes, not a list/ }]);
  t.notOk(
    listed.some((p) => p.code === 'START_EVENT_COUNT'),
    'no "0 startEvents" beside it',
  );
  t.match(
    problems(
      ok(
        '  start: { type: startEvent, next: a }\n  a: { type: inputNode, inputType: dropdown, next: done }\n  done: { type: endEvent }',
      ),
    ),
    [{ code: 'SCHEMA', message: /did you mean "select"\?/ }],
  );
});
