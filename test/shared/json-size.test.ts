import t from 'tap';
import { jsonSize } from '../../src/shared/json-size.js';

t.test('jsonSize is the length of the JSON text, for values without escapes', async (t) => {
  for (const value of [
    null,
    true,
    false,
    0,
    7,
    42,
    1234567,
    -3,
    0.5,
    1e21,
    '',
    'text',
    [],
    {},
    [1, 'a', null, { b: [true, {}] }],
    { a: 1, bb: 'two', c: { d: [1, 2, 3], e: {} } },
    Array.from({ length: 1000 }, (_, i) => ({ id: i, name: `n${i}` })),
  ])
    t.equal(jsonSize(value), JSON.stringify(value).length, JSON.stringify(value).slice(0, 40));
  t.equal(jsonSize({ a: undefined, b: 1 }), JSON.stringify({ a: undefined, b: 1 }).length, 'undefined properties');
});

t.test('jsonSize stops once past its cap, and survives any depth', async (t) => {
  const big = Array.from({ length: 100_000 }, (_, i) => ({ i }));
  const capped = jsonSize(big, 1000);
  t.ok(capped > 1000, `over the cap (${capped})`);
  t.ok(capped < JSON.stringify(big).length / 2, 'and not counted to the end');
  const keys = Object.fromEntries(Array.from({ length: 1000 }, (_, i) => [`key${i}`, 'v'.repeat(100)]));
  const cappedKeys = jsonSize(keys, 500);
  t.ok(cappedKeys > 500 && cappedKeys < JSON.stringify(keys).length / 2, `an object too (${cappedKeys})`);
  let deep: unknown = 1;
  for (let i = 0; i < 100_000; i++) deep = [deep];
  t.equal(jsonSize(deep), 100_000 * 2 + 1, 'nested 100,000 deep, no stack overflow');
});
