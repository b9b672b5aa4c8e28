import t from 'tap';
import {
  DEFAULT_MAX_JSON_DEPTH,
  describeDepthExcess,
  formatJsonPath,
  jsonDepthExcess,
  jsonPointerPath,
} from '../../src/shared/json-shape.js';

/** JSON text of `{"a":{"a":...1}}`, `depth` objects deep, built as text (JSON.stringify itself would recurse). */
const deepText = (depth: number, open = '{"a":', close = '}') => `${open.repeat(depth)}1${close.repeat(depth)}`;

t.test('scalars are depth 0; objects and arrays count one level each', async (t) => {
  for (const v of [null, 1, 'x', true, undefined]) t.equal(jsonDepthExcess(v, 0), null);
  t.equal(jsonDepthExcess({}, 1), null);
  t.same(jsonDepthExcess({}, 0), { path: [], maxDepth: 0 });
  t.equal(jsonDepthExcess({ a: [1, { b: 2 }] }, 3), null);
  t.same(jsonDepthExcess({ a: [1, { b: 2 }] }, 2), { path: ['a', 1], maxDepth: 2 });
});

t.test('exactly at the limit passes, one over fails and names the path', async (t) => {
  const max = DEFAULT_MAX_JSON_DEPTH;
  t.equal(jsonDepthExcess(JSON.parse(deepText(max)), max), null, 'depth == max');
  const over = jsonDepthExcess(JSON.parse(deepText(max + 1)), max);
  t.ok(over, 'depth == max + 1');
  t.equal(over!.path.length, max, 'the path leads to the first container too deep');
  t.ok(over!.path.every((k) => k === 'a'));
  const arrays = jsonDepthExcess(JSON.parse(deepText(max + 1, '[', ']')), max);
  t.same(arrays?.path, new Array<number>(max).fill(0), 'arrays: indexes in the path');
});

t.test('input 100,000 levels deep does not throw, objects and arrays alike', async (t) => {
  for (const [open, close] of [
    ['{"a":', '}'],
    ['[', ']'],
  ] as const) {
    const value: unknown = JSON.parse(deepText(100_000, open, close));
    const excess = jsonDepthExcess(value, 64);
    t.equal(excess?.path.length, 64);
    t.equal(jsonDepthExcess(value, 200_000), null, 'and walks all of it when the limit allows');
  }
});

t.test('only own keys count; a wide flat value passes', async (t) => {
  const proto = { deep: JSON.parse(deepText(10)) as unknown };
  t.equal(jsonDepthExcess(Object.create(proto) as object, 2), null);
  const wide: Record<string, unknown> = {};
  for (let i = 0; i < 10_000; i++) wide[`k${i}`] = { v: i };
  t.equal(jsonDepthExcess(wide, 2), null);
});

t.test('paths and messages', async (t) => {
  t.equal(formatJsonPath([], 'body'), 'body');
  t.equal(formatJsonPath([]), '(root)');
  t.equal(formatJsonPath(['data', 'more', 3, 'b'], 'body'), 'body.data.more[3].b');
  t.equal(formatJsonPath([0, 'a']), '[0].a');
  t.equal(describeDepthExcess({ path: ['x'], maxDepth: 1 }, 'data'), 'nested deeper than 1 levels at data.x');
});

t.test('jsonPointerPath: names and indexes, escapes undone, the root empty', async (t) => {
  t.same(jsonPointerPath(''), []);
  t.same(jsonPointerPath('/properties/a/items/0'), ['properties', 'a', 'items', 0]);
  t.same(jsonPointerPath('/a~1b/c~0d/~01'), ['a/b', 'c~d', '~1'], '~1 is /, ~0 is ~, in that order');
});
