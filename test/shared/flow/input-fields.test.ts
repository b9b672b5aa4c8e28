import t from 'tap';
import {
  checkForm,
  checkFormValue,
  fieldOfPath,
  formInputs,
  formText,
  formValue,
  type FormInput,
} from '../../../src/shared/flow/input-fields.js';
import { checkInputs } from '../../../src/shared/flow/inputs.js';
import type { FlowDefinition } from '../../../src/shared/flow/types.js';

/*
 * The console's run form checks typed values with input-fields.ts (it cannot run Ajv under its
 * Content-Security-Policy); the daemon checks start data with checkInputs (Ajv). These hold the
 * two to the same verdict on every keyword the form checks.
 */

const flowWith = (inputs: Record<string, unknown>): FlowDefinition => ({
  processId: '0b7c6a3e-2f0e-4a57-9a43-3d4f1c9e8b11',
  name: 'Form',
  inputs,
  nodes: { start: { type: 'startEvent', next: 'done' }, done: { type: 'endEvent' } },
});

/** A property schema and values, each expected to pass (true) or not; both sides must agree. */
const CASES: [Record<string, unknown>, unknown[], unknown[]][] = [
  [{ type: 'string' }, ['', 'a'], [1, true, null, {}]],
  [{ type: 'integer' }, [0, -3, 2.0], [1.5, '1', true]],
  [{ type: 'number', minimum: 1, maximum: 5 }, [1, 5, 2.5], [0.99, 5.01, '3']],
  [{ type: 'number', exclusiveMinimum: 0, exclusiveMaximum: 10 }, [0.1, 9.9], [0, 10]],
  [{ type: 'integer', multipleOf: 5 }, [0, 10, -5], [3, 11]],
  [{ type: 'string', minLength: 2, maxLength: 3 }, ['ab', 'abc', '😀😀'], ['a', 'abcd', '😀']],
  [{ type: 'string', pattern: '^[A-Z]-\\d+$' }, ['A-1', 'B-1001'], ['a-1', 'A-', 'xA-1']],
  [{ type: 'string', pattern: '\\p{Lu}' }, ['É'], ['é']],
  [{ enum: ['low', 'high', 3, null] }, ['low', 3, null], ['LOW', '3', 4]],
  [{ const: 'x' }, ['x'], ['y']],
  [{ type: 'boolean' }, [true, false], ['true', 0]],
  [{ type: ['string', 'null'] }, ['a', null], [1]],
  [{ type: 'array', minItems: 1, maxItems: 2 }, [[1], [1, 2]], [[], [1, 2, 3], {}]],
  [{ type: 'object' }, [{}, { a: 1 }], [[], 'a']],
];

t.test('checkFormValue gives the daemon\u2019s verdict on each keyword it checks', async (t) => {
  for (const [schema, good, bad] of CASES) {
    const inputs = { type: 'object', properties: { v: schema } };
    const field = formInputs(inputs)[0]!;
    for (const [value, ok] of [...good.map((v) => [v, true] as const), ...bad.map((v) => [v, false] as const)]) {
      const daemon = checkInputs(flowWith(inputs), { v: value }) === null;
      const page = checkFormValue(field, value) === null;
      t.equal(daemon, ok, `the daemon: ${JSON.stringify(schema)} ${JSON.stringify(value)}`);
      t.equal(page, ok, `the page: ${JSON.stringify(schema)} ${JSON.stringify(value)}`);
    }
  }
});

const ORDER = {
  type: 'object',
  required: ['orderId', 'quantity', 'rush'],
  properties: {
    orderId: { type: 'string', maxLength: 6, description: 'The order id' },
    quantity: { type: 'integer', minimum: 1 },
    rush: { type: 'boolean', default: false },
    priority: { enum: ['low', 'high'], default: 'low' },
    price: { type: 'number' },
    customer: { type: 'object', properties: { id: { type: 'integer' } } },
    tags: { type: 'array', items: { type: 'string' } },
  },
};

t.test('formInputs: each property asked the way its schema says, in order', async (t) => {
  const fields = formInputs(ORDER);
  t.same(
    fields.map((f) => [f.name, f.kind, f.required]),
    [
      ['orderId', 'text', true],
      ['quantity', 'integer', true],
      ['rush', 'boolean', true],
      ['priority', 'select', false],
      ['price', 'number', false],
      ['customer', 'json', false],
      ['tags', 'json', false],
    ],
  );
  t.equal(fields[0]!.description, 'The order id');
  t.same(fields[3]!.enum, ['low', 'high']);
  t.same(formInputs(undefined), []);
  t.same(formInputs({ type: 'object' }), []);
});

t.test('formValue and formText: typed text to the value sent, and back', async (t) => {
  const [orderId, quantity, rush, priority, price, customer] = formInputs(ORDER) as FormInput[];
  t.same(formValue(orderId!, '  A-1 '), { ok: true, value: '  A-1 ' }, 'text is kept as typed');
  t.same(formValue(quantity!, ' 3 '), { ok: true, value: 3 });
  t.same(formValue(quantity!, 'three').ok, false);
  t.same(formValue(price!, '2.5'), { ok: true, value: 2.5 });
  t.same(formValue(rush!, 'true'), { ok: true, value: true });
  t.same(formValue(priority!, '"high"'), { ok: true, value: 'high' });
  t.same(formValue(priority!, '"urgent"').ok, false);
  t.same(formValue(customer!, '{"id": 4}'), { ok: true, value: { id: 4 } });
  t.same(formValue(customer!, '{id: 4}').ok, false);
  t.same(formValue(orderId!, ''), { ok: true, value: undefined }, 'empty is no value');
  for (const [f, v] of [
    [orderId!, 'A-1'],
    [quantity!, 3],
    [rush!, true],
    [priority!, 'high'],
    [customer!, { id: 4 }],
  ] as const)
    t.same(formValue(f, formText(f, v)), { ok: true, value: v }, `${f.name} round-trips`);
});

t.test('checkForm: the start data and a problem per field, as the daemon would refuse it', async (t) => {
  const fields = formInputs(ORDER);
  const bad = checkForm(fields, { orderId: 'A-123456', quantity: '0', price: 'x', customer: '[1]' });
  t.same(bad.problems, {
    orderId: 'must NOT have more than 6 characters',
    quantity: 'must be >= 1',
    price: 'must be a number',
    customer: 'must be object',
  });
  const missing = checkForm(fields, {});
  t.same(Object.keys(missing.problems), ['orderId', 'quantity'], 'required without a default; rush has one');
  t.equal(checkInputs(flowWith(ORDER), { ...missing.data }) !== null, true, 'the daemon refuses it too');
  const good = checkForm(fields, { orderId: 'A-1', quantity: '2', priority: '"high"', tags: '["a"]' });
  t.same(good.problems, {});
  t.same(good.data, { orderId: 'A-1', quantity: 2, priority: 'high', tags: ['a'] });
  t.equal(checkInputs(flowWith(ORDER), { ...good.data }), null, 'the daemon takes it');
});

t.test('fieldOfPath: the form field a daemon violation names', async (t) => {
  const names = ['orderId', 'customer', 'a.b', 'a'];
  t.equal(fieldOfPath('data.orderId', names), 'orderId');
  t.equal(fieldOfPath('data.customer.id', names), 'customer');
  t.equal(fieldOfPath('data.a.b', names), 'a.b', 'the longest name that fits');
  t.equal(fieldOfPath('data.a[2]', names), 'a');
  t.equal(fieldOfPath('data', names), null);
  t.equal(fieldOfPath('data.other', names), null);
  t.equal(fieldOfPath('data.orderIdX', names), null);
});
