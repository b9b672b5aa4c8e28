import t from 'tap';
import { checkInputs, inputFields, inputsProblem } from '../../../src/shared/flow/inputs.js';
import type * as InputsModule from '../../../src/shared/flow/inputs.js';
import * as jsonSchema from '../../../src/shared/flow/json-schema.js';
import type { FlowDefinition } from '../../../src/shared/flow/types.js';

const at = (path: string) => new URL(path, import.meta.url).href;

/** A flow whose start data `inputs` describes (undefined: it declares none). */
const flowWith = (inputs?: Record<string, unknown>): FlowDefinition => ({
  processId: '0b7c6a3e-2f0e-4a57-9a43-3d4f1c9e8b11',
  name: 'Order',
  ...(inputs !== undefined && { inputs }),
  nodes: { start: { type: 'startEvent', next: 'done' }, done: { type: 'endEvent' } },
});

const ORDER = {
  type: 'object',
  required: ['orderId'],
  additionalProperties: false,
  properties: {
    orderId: { type: 'string', maxLength: 20, description: 'The order id, such as A-1001' },
    notify: { type: 'boolean', default: true, description: 'Tell the customer' },
    priority: { enum: ['low', 'high'], default: 'low' },
    customer: {
      type: 'object',
      required: ['id'],
      properties: { id: { type: 'integer' }, tags: { type: 'array', items: { type: 'string' } } },
    },
    items: {
      type: 'array',
      items: { type: 'object', required: ['sku'], properties: { sku: { type: 'string' }, qty: { type: 'integer' } } },
    },
  },
};

t.test('inputsProblem: an object schema that compiles is fine, anything else says where and why', async (t) => {
  t.equal(inputsProblem(ORDER), null, 'a draft-07 object schema');
  t.equal(inputsProblem({ properties: { a: { type: 'string' } } }), null, 'no type at all: read as an object');
  t.equal(
    inputsProblem({
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      type: 'object',
      properties: { pair: { type: 'array', prefixItems: [{ type: 'string' }, { type: 'integer' }] } },
      $defs: { unused: { type: 'string' } },
    }),
    null,
    'a 2020-12 schema (prefixItems, $defs)',
  );
  for (const notAMapping of [null, 'object', 3, [], [{ type: 'object' }]])
    t.match(
      inputsProblem(notAMapping),
      { path: [], message: /must be a JSON Schema \(a mapping\)/ },
      `${JSON.stringify(notAMapping)} is no schema`,
    );
  t.match(inputsProblem({ type: 'string' }), { path: ['type'], message: /type object/ }, 'start data is an object');
  t.match(inputsProblem({ type: ['object', 'null'] }), { path: ['type'] }, 'a union with null is not an object');
  t.match(
    inputsProblem({ type: 'object', proprties: { a: { type: 'string' } } }),
    { path: [], message: /unknown keyword: "proprties"/ },
    'a misspelt keyword is refused, not ignored',
  );
  t.match(
    inputsProblem({ type: 'object', properties: { a: { type: 'strin' } } }),
    { path: ['properties', 'a', 'type'], message: /not a valid JSON Schema/ },
    'a bad type is located inside the schema',
  );
  t.match(inputsProblem({ $schema: 'http://json-schema.org/draft-04/schema#', type: 'object' }), {
    path: ['$schema'],
    message: /version this daemon reads/,
  });
});

t.test('checkInputs: the first violation, with its path from data and a message', async (t) => {
  const flow = flowWith(ORDER);
  const cases: Array<[string, Record<string, unknown>, { path: string; message: string | RegExp }]> = [
    ['a required input missing', {}, { path: 'data.orderId', message: 'is required' }],
    [
      'an input the flow does not declare',
      { orderId: 'A1', orderid: 'typo' },
      { path: 'data.orderid', message: 'is not an input of the flow' },
    ],
    [
      'a value outside an enum',
      { orderId: 'A1', priority: 'urgent' },
      { path: 'data.priority', message: 'must be one of: "low", "high"' },
    ],
    ['a wrong type', { orderId: 7 }, { path: 'data.orderId', message: 'must be string' }],
    ['a string too long', { orderId: 'x'.repeat(21) }, { path: 'data.orderId', message: /must NOT have more than 20/ }],
    [
      'a required property of a nested object',
      { orderId: 'A1', customer: {} },
      { path: 'data.customer.id', message: 'is required' },
    ],
    [
      'a wrong type deep in an array',
      { orderId: 'A1', customer: { id: 1, tags: ['a', 2] } },
      { path: 'data.customer.tags[1]', message: 'must be string' },
    ],
    [
      'a required property of an array item',
      { orderId: 'A1', items: [{ sku: 'a' }, { sku: 'b' }, { qty: 1 }] },
      { path: 'data.items[2].sku', message: 'is required' },
    ],
  ];
  for (const [name, data, want] of cases) t.match(checkInputs(flow, data), want, name);
});

t.test('checkInputs: matching data passes and gets the declared defaults it left out', async (t) => {
  const flow = flowWith(ORDER);
  const data: Record<string, unknown> = { orderId: 'A1', priority: 'high' };
  t.equal(checkInputs(flow, data), null);
  t.same(data, { orderId: 'A1', priority: 'high', notify: true }, 'notify filled in, priority kept as given');
  const explicit: Record<string, unknown> = { orderId: 'A1', notify: false };
  t.equal(checkInputs(flow, explicit), null);
  t.equal(explicit.notify, false, 'a value given is never replaced by the default');
  t.same(
    ORDER.properties.notify,
    { type: 'boolean', default: true, description: 'Tell the customer' },
    'the schema is untouched',
  );
});

t.test('checkInputs: defaults are filled in before required is checked, nested ones too', async (t) => {
  const flow = flowWith({
    type: 'object',
    required: ['mode'],
    properties: {
      mode: { enum: ['fast', 'safe'], default: 'safe' },
      customer: { type: 'object', properties: { tier: { type: 'string', default: 'basic' } } },
    },
  });
  const data: Record<string, unknown> = { customer: {} };
  t.equal(checkInputs(flow, data), null, 'a required input with a default may be left out');
  t.same(data, { customer: { tier: 'basic' }, mode: 'safe' }, 'a default inside an object given is filled in');
  const none: Record<string, unknown> = {};
  t.equal(checkInputs(flow, none), null);
  t.same(none, { mode: 'safe' }, 'an object left out is not made up to hold a default');
});

t.test('checkInputs: a 2020-12 schema is validated with its own semantics', async (t) => {
  const flow = flowWith({
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    type: 'object',
    required: ['pair'],
    properties: { pair: { type: 'array', prefixItems: [{ type: 'string' }, { type: 'integer' }] } },
  });
  t.equal(checkInputs(flow, { pair: ['a', 1] }), null);
  t.match(checkInputs(flow, { pair: ['a', 'b'] }), { path: 'data.pair[1]', message: 'must be integer' });
});

t.test('checkInputs: a flow without inputs accepts any object, unchanged', async (t) => {
  const data = { anything: [1, { deep: true }], at: 'all' };
  t.equal(checkInputs(flowWith(), data), null);
  t.same(data, { anything: [1, { deep: true }], at: 'all' });
  t.equal(checkInputs(flowWith(), {}), null);
});

t.test(
  'checkInputs: inputs that do not compile (published before the check) are a violation, not a throw',
  async (t) => {
    t.match(checkInputs(flowWith({ type: 'object', proprties: {} }), {}), {
      path: 'data',
      message: /the flow's inputs cannot be used: .*proprties/,
    });
  },
);

t.test('checkInputs: the validator is compiled once per definition', async (t) => {
  let compiled = 0;
  const { checkInputs: counted } = await t.mockImport<typeof InputsModule>(at('../../../src/shared/flow/inputs.js'), {
    [at('../../../src/shared/flow/json-schema.js')]: {
      ...jsonSchema,
      compileJsonSchema: (...args: Parameters<typeof jsonSchema.compileJsonSchema>) => {
        compiled++;
        return jsonSchema.compileJsonSchema(...args);
      },
    },
  });
  const flow = flowWith(ORDER);
  for (let i = 0; i < 5; i++) t.equal(counted(flow, { orderId: `A${i}` }), null);
  t.match(counted(flow, {}), { path: 'data.orderId' });
  t.equal(compiled, 1, 'six checks, one compilation');
  counted(flowWith(structuredClone(ORDER)), { orderId: 'B' });
  t.equal(compiled, 2, 'another definition (another version) compiles its own');
  const broken = flowWith({ type: 'object', proprties: {} });
  counted(broken, {});
  counted(broken, {});
  t.equal(compiled, 3, 'a schema that does not compile is remembered too');
});

t.test('inputFields: the top-level properties in schema order, with what a form needs', async (t) => {
  t.same(inputFields(ORDER), [
    { name: 'orderId', type: 'string', required: true, description: 'The order id, such as A-1001' },
    { name: 'notify', type: 'boolean', required: false, description: 'Tell the customer', default: true },
    { name: 'priority', type: 'any', required: false, default: 'low', enum: ['low', 'high'] },
    { name: 'customer', type: 'object', required: false },
    { name: 'items', type: 'array', required: false },
  ]);
  t.same(
    inputFields({
      type: 'object',
      required: ['b'],
      properties: { b: { type: ['string', 'null'], default: null }, a: true },
    }),
    [
      { name: 'b', type: 'string|null', required: true, default: null },
      { name: 'a', type: 'any', required: false },
    ],
    'a union type, a null default, a property that is `true`',
  );
  t.same(inputFields(undefined), [], 'no inputs: no fields');
  t.same(inputFields({ type: 'object' }), [], 'no properties: no fields');
});
