import t from 'tap';
import { commitRecord, cowRecord } from '../../../../src/daemon/state/draft/cow-record.js';
import { deepFreeze } from '../../../helpers/frozen-state.js';

t.test('reads fall through, writes and deletes stay in the overlay; the frozen base is unchanged', async (t) => {
  const base = deepFreeze({ a: 1, b: { deep: [1, 2] }, c: 3 } as Record<string, unknown>);
  const cow = cowRecord(base);
  cow.d = 4;
  delete cow.a;
  (cow.b as { deep: number[] }).deep.push(3);
  t.equal(cow.a, undefined);
  t.notOk('a' in cow);
  t.ok('d' in cow);
  t.same(Object.keys(cow), ['b', 'c', 'd']);
  t.same(JSON.parse(JSON.stringify(cow)), { b: { deep: [1, 2, 3] }, c: 3, d: 4 }, 'serialized as it reads');
  t.same(base, { a: 1, b: { deep: [1, 2] }, c: 3 });
  const seen: string[] = [];
  for (const key in cow) seen.push(key);
  t.same(seen, ['b', 'c', 'd'], 'for-in sees the overlay');
});

t.test('the commit writes the changes into the base in place, nested objects into theirs', async (t) => {
  const nested = { deep: [1, 2], keep: true };
  const base: Record<string, unknown> = { a: 1, b: nested, c: 3 };
  const cow = cowRecord(base);
  cow.d = 4;
  delete cow.a;
  (cow.b as { deep: number[] }).deep.push(3);
  t.equal(base.a, 1, 'nothing changed before the commit');
  commitRecord(cow);
  t.same(base, { b: { deep: [1, 2, 3], keep: true }, c: 3, d: 4 });
  t.equal(base.b, nested, 'a nested object is changed in place, not replaced');
});

t.test('a key from a request never reaches what a plain object inherits', async (t) => {
  const cow = cowRecord({} as Record<string, unknown>);
  t.notOk(Object.hasOwn(cow, 'constructor'));
  cow.__proto__ = { x: 1 };
  const base: Record<string, unknown> = {};
  const other = cowRecord(base);
  other.__proto__ = 'a key';
  commitRecord(other);
  t.ok(Object.hasOwn(base, '__proto__'), 'an own key');
  t.equal(Object.getPrototypeOf(base), Object.prototype, 'the prototype untouched');
});
