import t from 'tap';
import { compileJsonSchema, describeSchemaError } from '../../../src/shared/flow/json-schema.js';

t.test('schemas that compile: draft-07 by default, 2020-12 when $schema says so', async (t) => {
  for (const schema of [
    { type: 'object', required: ['a'], properties: { a: { type: 'integer', minimum: 0 } } },
    { $schema: 'http://json-schema.org/draft-07/schema#', type: 'string', format: 'email' },
    { $schema: 'https://json-schema.org/draft/2020-12/schema', type: 'array', prefixItems: [{ type: 'string' }] },
    { type: ['string', 'null'] },
  ])
    t.ok(compileJsonSchema(schema).ok, JSON.stringify(schema));
});

t.test('schemas that do not compile say where and why, and never throw', async (t) => {
  const cases: Array<[unknown, readonly (string | number)[], RegExp]> = [
    [[], [], /must be an object/],
    [{ type: 'object', properties: { a: { type: 'strin' } } }, ['properties', 'a', 'type'], /not a valid JSON Schema/],
    [{ type: 'object', proprties: {} }, [], /unknown keyword: "proprties"/],
    [{ $ref: '#/definitions/missing' }, [], /can't resolve reference/],
    [{ $schema: 'http://json-schema.org/draft-04/schema#' }, ['$schema'], /version this daemon reads/],
  ];
  for (const [schema, path, message] of cases) {
    const r = compileJsonSchema(schema);
    t.match(r, { ok: false, path, message }, JSON.stringify(schema));
  }
});

t.test('describeSchemaError names the first violation with its path', async (t) => {
  const r = compileJsonSchema({
    type: 'object',
    required: ['category'],
    additionalProperties: false,
    properties: { category: { enum: ['bug', 'billing'] } },
  });
  if (!r.ok) throw new Error('compiles');
  t.notOk(r.validate({ category: 'other' }));
  t.equal(describeSchemaError(r.validate.errors), '/category: must be one of: bug, billing');
  t.notOk(r.validate({ category: 'bug', extra: 1 }));
  t.equal(describeSchemaError(r.validate.errors), '(the answer): unknown property "extra"');
  t.notOk(r.validate('text'));
  t.equal(describeSchemaError(r.validate.errors), '(the answer): must be object');
});

t.test('compilations share nothing: one $id in two schemas, one schema twice, defaults apart', async (t) => {
  const a = { $id: 'https://example.com/order', type: 'object', required: ['a'] };
  const b = { $id: 'https://example.com/order', type: 'object', required: ['b'] };
  const [va, vb] = [compileJsonSchema(a), compileJsonSchema(b)];
  t.ok(va.ok && vb.ok, 'the same $id in schemas of two flows');
  if (va.ok && vb.ok) t.same([va.validate({ a: 1 }), vb.validate({ a: 1 })], [true, false]);
  const nested = { $defs: { n: { $id: 'https://example.com/n', type: 'number' } }, $ref: 'https://example.com/n' };
  const twice = { type: 'object', properties: { n: { type: 'integer' } } };
  for (let i = 0; i < 3; i++) {
    t.ok(compileJsonSchema(nested).ok, `an $id inside, compile ${i + 1}`);
    const c = compileJsonSchema(twice);
    t.ok(c.ok && c.validate({ n: 1 }) && !c.validate({ n: 'x' }), `the same object, compile ${i + 1}`);
  }
  const refersAway = compileJsonSchema({ $ref: 'https://example.com/order' });
  t.match(refersAway, { ok: false, message: /can't resolve reference/ }, 'no schema compiled before is in reach');
  const withDefault = { type: 'object', properties: { n: { type: 'number', default: 3 } } };
  const filled = compileJsonSchema(withDefault, { useDefaults: true });
  const plain = compileJsonSchema(withDefault);
  const [x, y] = [{}, {}];
  if (filled.ok && plain.ok) {
    filled.validate(x);
    plain.validate(y);
  }
  t.same([x, y], [{ n: 3 }, {}], 'useDefaults fills in only where asked');
});
