import t from 'tap';
import { apiHarness } from '../../../helpers/api.js';

const PID = '0b7c6a3e-2f0e-4a57-9a43-3d4f1c9e8b11';
const INPUTS = {
  type: 'object',
  required: ['orderId'],
  properties: {
    orderId: { type: 'string', description: 'The order id' },
    notify: { type: 'boolean', default: true },
    lines: { type: 'array', items: { type: 'object', properties: { sku: { type: 'string' } } } },
  },
};
const source = (inputs: object | null) => `processId: ${PID}
name: Order
${inputs ? `inputs: ${JSON.stringify(inputs)}\n` : ''}nodes:
  start: { type: startEvent, next: done }
  done: { type: endEvent }
`;

t.test('GET /admin/flows and /admin/flows/{id}: each version with the inputs it declares', async (t) => {
  const h = await apiHarness(t);
  const dev = await h.key('developer', 'default');
  for (const inputs of [INPUTS, null]) {
    const res = await h.call(dev, { method: 'POST', url: '/admin/flows', payload: { source: source(inputs) } });
    t.equal(res.statusCode, 200, res.body);
  }
  const versions = [
    { version: '1', publishedAt: String, inputs: INPUTS },
    { version: '2', publishedAt: String },
  ];
  const list = await h.call(dev, { method: 'GET', url: '/admin/flows' });
  t.equal(list.statusCode, 200);
  const listed = (list.json() as { items: Array<{ processId: string; versions: object[] }> }).items;
  t.match(listed, [{ processId: PID, versions }]);
  t.same((listed[0]!.versions[0] as { inputs?: unknown }).inputs, INPUTS, 'the whole schema, nested properties too');
  t.notOk('inputs' in listed[0]!.versions[1]!, 'a version without inputs: none given');

  const one = await h.call(dev, { method: 'GET', url: `/admin/flows/${PID}?version=1` });
  t.equal(one.statusCode, 200);
  t.match(one.json(), { version: '1', versions, definition: { inputs: INPUTS } });
});

t.test('POST /admin/flows: an agent whose tool is not published is 400 FLOW_INVALID with UNKNOWN_TOOL', async (t) => {
  const h = await apiHarness(t);
  const dev = await h.key('developer', 'default');
  const res = await h.call(dev, {
    method: 'POST',
    url: '/admin/flows',
    payload: {
      source: `processId: ${PID}
name: Agent
nodes:
  start: { type: startEvent, next: agent }
  agent: { type: callAgent, prompt: hi, tools: [11111111-1111-4111-8111-111111111111], next: done }
  done: { type: endEvent }
`,
    },
  });
  t.equal(res.statusCode, 400);
  t.match(res.json(), {
    error: 'FLOW_INVALID',
    details: { problems: [{ code: 'UNKNOWN_TOOL', nodeId: 'agent', property: 'tools.0' }] },
  });
});

t.test('POST /admin/flows: a scriptTask timeout over its ceiling is 400 FLOW_INVALID at the node', async (t) => {
  const h = await apiHarness(t);
  const dev = await h.key('developer', 'default');
  const flow = (timeout: string) => `processId: ${PID}
name: Script
nodes:
  start: { type: startEvent, next: run }
  run:
    type: scriptTask
    script: "while (true) {}"
    timeout: ${timeout}
    next: done
  done: { type: endEvent }
`;
  for (const timeout of ['24d', '30d', '6m']) {
    const res = await h.call(dev, { method: 'POST', url: '/admin/flows', payload: { source: flow(timeout) } });
    t.equal(res.statusCode, 400, timeout);
    t.match(res.json(), {
      error: 'FLOW_INVALID',
      details: { problems: [{ code: 'BAD_DURATION', nodeId: 'run', property: 'timeout', line: 8, column: 14 }] },
    });
    t.equal((res.json() as { details: { problems: unknown[] } }).details.problems.length, 1);
  }
  const atCeiling = await h.call(dev, { method: 'POST', url: '/admin/flows', payload: { source: flow('5m') } });
  t.equal(atCeiling.statusCode, 200, atCeiling.body);
});
