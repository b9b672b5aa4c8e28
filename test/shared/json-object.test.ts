import t from 'tap';
import { cloneData, extensibleCopy, parseJsonObject } from '../../src/shared/json-object.js';
import { WfxError } from '../../src/shared/errors.js';

t.test('cloneData copies deeply: no change on either side reaches the other', async (t) => {
  const data = { a: 1, s: 'x', n: null, b: true, list: [1, { deep: [2, 3] }], nested: { inner: { v: 'y' } } };
  const copy = cloneData(data);
  t.same(copy, data, 'equal');
  t.not(copy, data);
  t.not(copy.list, data.list);
  t.not(copy.list[1], data.list[1]);
  t.not(copy.nested.inner, data.nested.inner);
  (data.nested.inner as { v: string }).v = 'changed';
  (data.list[1] as { deep: number[] }).deep.push(4);
  t.equal(copy.nested.inner.v, 'y', 'a change to the original does not reach the copy');
  t.same((copy.list[1] as { deep: number[] }).deep, [2, 3]);
});

t.test('cloneData hands back primitives, and copies other objects as structuredClone does', async (t) => {
  t.equal(cloneData(5), 5);
  t.equal(cloneData('s'), 's');
  t.equal(cloneData(null), null);
  const when = new Date('2026-11-21T10:00:00Z');
  const copy = cloneData({ when, bare: Object.assign(Object.create(null) as object, { k: 1 }) });
  t.ok(copy.when instanceof Date, 'a Date stays a Date');
  t.not(copy.when, when, 'and is a copy');
  t.equal(copy.when.getTime(), when.getTime());
  t.same({ ...copy.bare }, { k: 1 }, 'an object without a prototype is copied too');
});

t.test('cloneData keeps an own "__proto__" key as a key, as structuredClone does', async (t) => {
  const data = JSON.parse('{"__proto__":{"polluted":true},"a":1}') as Record<string, unknown>;
  const copy = cloneData(data);
  t.equal(Object.getPrototypeOf(copy), Object.prototype, 'the prototype is not replaced');
  t.same(Object.keys(copy), ['__proto__', 'a']);
  t.equal(JSON.stringify(copy), '{"__proto__":{"polluted":true},"a":1}', 'the key is journaled as it came');
  t.equal(({} as Record<string, unknown>).polluted, undefined);
});

t.test('parseJsonObject takes a JSON object and names what is wrong otherwise', async (t) => {
  t.same(parseJsonObject('{"a":1}', '--data'), { a: 1 });
  t.throws(
    () => parseJsonObject('[1]', '--data'),
    new WfxError('USAGE_ERROR', '--data must be a JSON object, not an array'),
  );
  t.throws(() => parseJsonObject('{', '--data'), { code: 'USAGE_ERROR' });
});

t.test(
  'extensibleCopy gives what the spread of its arguments gives: keys, order, values, later ones winning',
  async (t) => {
    const vars = { kind: 'task', amount: 3, nested: { a: 1 } };
    const copy = extensibleCopy(vars);
    t.not(copy, vars, 'a new object');
    t.equal(copy.nested, vars.nested, 'shallow: what it holds is shared');
    t.same(Object.entries(copy), Object.entries({ ...vars }));
    (copy as Record<string, unknown>).added = true;
    t.notOk('added' in vars, 'adding to the copy leaves the source alone');

    const merged = extensibleCopy(vars, { amount: 4, inputValue: 'ok' }, { inputNodeAction: 'COMPLETE' });
    t.same(
      Object.entries(merged),
      Object.entries({ ...vars, ...{ amount: 4, inputValue: 'ok' }, inputNodeAction: 'COMPLETE' }),
      'an overridden key keeps its place, new keys follow in order',
    );
    t.same(Object.keys(extensibleCopy({})), []);
  },
);

t.test(
  'extensibleCopy keeps an own "__proto__" key a key, as a spread does, and never sets the prototype',
  async (t) => {
    const source = JSON.parse('{"a":1,"__proto__":{"polluted":true},"b":2}') as Record<string, unknown>;
    for (const copy of [extensibleCopy(source), extensibleCopy({}, source), extensibleCopy({ z: 0 }, source)]) {
      t.equal(Object.getPrototypeOf(copy), Object.prototype, 'the prototype is untouched');
      t.notOk('polluted' in copy, 'nothing inherited from the data');
      t.ok(Object.hasOwn(copy, '__proto__'), 'the key is an own property');
      t.same(
        Object.keys(copy).filter((k) => k !== 'z'),
        ['a', '__proto__', 'b'],
        'in its place',
      );
    }
    t.notOk('polluted' in {}, 'Object.prototype is untouched');
  },
);
