import t from 'tap';
import { commitCow, CowMap } from '../../../../src/daemon/state/draft/cow-map.js';
import { deepFreeze } from '../../../helpers/frozen-state.js';

t.test('reads see the base under the changes; the base is left as it was', async (t) => {
  const base = deepFreeze(
    new Map([
      ['a', 1],
      ['b', 2],
      ['c', 3],
    ]),
  );
  const cow = new CowMap(base);
  cow.set('b', 20); // in place: keeps its position
  cow.delete('a');
  cow.set('d', 4);
  t.equal(cow.get('a'), undefined);
  t.equal(cow.has('a'), false);
  t.equal(cow.get('b'), 20);
  t.equal(cow.get('c'), 3);
  t.same(
    [...cow],
    [
      ['b', 20],
      ['c', 3],
      ['d', 4],
    ],
    'in the order a Map changed in place would give',
  );
  t.equal(cow.size, 3);
  t.same(
    [...base],
    [
      ['a', 1],
      ['b', 2],
      ['c', 3],
    ],
    'the base is unchanged',
  );
});

t.test('a key deleted and set again goes last, as in a Map; the commit keeps that order', async (t) => {
  const plain = new Map([
    ['a', 1],
    ['b', 2],
    ['c', 3],
  ]);
  const base = new Map(plain);
  const cow = new CowMap(base);
  for (const m of [plain, cow]) {
    m.delete('a');
    m.set('a', 10);
    m.set('c', 30);
    m.set('e', 5);
    m.delete('e');
    m.delete('b');
  }
  t.same([...cow], [...plain], 'reads in the order of a plain Map given the same changes');
  commitCow(cow);
  t.same([...base], [...plain], 'committed: the base is that Map');
});

t.test('nested: a Map value read from the base is a CowMap of its own, committed into its base', async (t) => {
  const inner = new Map([['x', 1]]);
  const base = new Map([['q', inner]]);
  const frozen = new Map(base);
  const cow = new CowMap<string, Map<string, number>>(frozen, 'nested');
  const q = cow.get('q')!;
  t.ok(q instanceof CowMap);
  q.set('y', 2);
  q.delete('x');
  t.same([...inner], [['x', 1]], 'the base inner map is unchanged before the commit');
  t.same([...cow.get('q')!], [['y', 2]]);
  commitCow(cow);
  t.same([...inner], [['y', 2]], 'committed in place');
  t.equal(frozen.get('q'), inner, 'the same inner map object');
});

t.test('copy: an array value read from the base is copied, so a change in place stays in the draft', async (t) => {
  const pair: [number, number] = [1, 2];
  const base = new Map([['f', pair]]);
  const cow = new CowMap(base, 'copy');
  cow.get('f')![0]++;
  t.same(pair, [1, 2], 'the base pair is unchanged');
  t.same(cow.get('f'), [2, 2]);
  commitCow(cow);
  t.same(base.get('f'), [2, 2]);
});
