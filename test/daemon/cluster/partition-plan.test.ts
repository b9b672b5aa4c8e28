import t from 'tap';
import { joinShare, planShare, type ShareView } from '../../../src/daemon/cluster/partition-plan.js';

/** A view of 16 partitions: `held` lists each member's partitions. */
function view(held: Record<string, number[]>, members = Object.keys(held)): ShareView {
  const holders = new Map<number, string>();
  for (const [id, ps] of Object.entries(held)) for (const p of ps) holders.set(p, id);
  return { count: 16, members, holders };
}
const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);

t.test('a daemon alone takes every free partition, partition 0 too', async (t) => {
  t.same(planShare('a', view({}, [])), { drop: [], take: range(1, 15), takeCatalogue: true });
  t.same(joinShare('a', view({}, [])), range(0, 15));
});

t.test(
  'a daemon joining: the holder gives up to the floor first, then the newcomer takes up to the ceiling',
  async (t) => {
    const joined = view({ a: range(0, 15), b: [] });
    t.same(planShare('a', joined), { drop: range(8, 15), take: [], takeCatalogue: false });
    t.same(planShare('b', joined), { drop: [], take: [], takeCatalogue: false }, 'nothing free yet');
    const given = view({ a: range(0, 7), b: [] });
    t.same(planShare('b', given).take, range(8, 15));
    t.same(joinShare('b', given), range(8, 15));
    const settled = view({ a: range(0, 7), b: range(8, 15) });
    for (const id of ['a', 'b'])
      t.same(planShare(id, settled), { drop: [], take: [], takeCatalogue: false }, `${id} stays`);
  },
);

t.test('shares converge and stay, whatever order the daemons move in', async (t) => {
  for (const n of [2, 3, 4, 5, 6, 15]) {
    const ids = Array.from({ length: n }, (_, i) => `d${i}`);
    const holders = new Map<number, string>(range(0, 15).map((p) => [p, 'd0']));
    let moves = 0;
    for (let round = 0; round < 20; round++) {
      // One daemon at a time, a different order each round.
      for (const id of [...ids].sort(() => (round % 2 ? 1 : -1))) {
        const plan = planShare(id, { count: 16, members: ids, holders });
        for (const p of plan.drop) holders.delete(p);
        for (const p of plan.take) holders.set(p, id);
        moves += plan.drop.length + plan.take.length;
      }
    }
    const counts = ids.map((id) => [...holders].filter(([p, h]) => p > 0 && h === id).length);
    t.ok(Math.max(...counts) - Math.min(...counts) <= 1, `${n} daemons: shares ${counts.join(', ')}`);
    t.equal(
      counts.reduce((x, y) => x + y, 0),
      15,
      `${n} daemons: every partition held`,
    );
    const still = ids.every((id) => {
      const plan = planShare(id, { count: 16, members: ids, holders });
      return plan.drop.length === 0 && plan.take.length === 0;
    });
    t.ok(still, `${n} daemons: no further moves (${moves} moves to get there)`);
  }
});

t.test('a departed daemon: its partitions, once free, go to the rest, and partition 0 is taken', async (t) => {
  const left = view({ b: range(8, 15) }, ['b', 'c']);
  t.same(planShare('b', left), { drop: [], take: [], takeCatalogue: true }, 'b is at its ceiling of 8');
  t.same(planShare('c', left).take, range(1, 7));
  t.same(joinShare('c', left), range(0, 7), 'a restart takes partition 0 with the free ones');
});

t.test('a restart under the same id keeps what it held within its share', async (t) => {
  const back = view({ a: [0, 1, 2, 3], b: range(8, 15) });
  t.same(joinShare('a', back), [0, 1, 2, 3, 4, 5, 6, 7]);
});
