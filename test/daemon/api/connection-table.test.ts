import t from 'tap';
import { addressKey, ConnectionTable, type Admission } from '../../../src/daemon/api/connection-table.js';
import { prng } from '../../helpers/prng.js';

/** A socket as the table sees it: its bytes received, set by the test. */
class FakeSocket {
  bytesRead = 0;
  constructor(readonly name: string) {}
}

/** A request as the table sees it: whether its body has all come, set by the test. */
class FakeRequest {
  complete = false;
}

/** A table of `max` places (overflow 1, stall 1000 ms) on a clock the test moves. */
function table(max: number) {
  const clock = { ms: 0 };
  const tbl = new ConnectionTable<FakeSocket>({ maxConnections: max, overflow: 1, stallMs: 1000 }, () => clock.ms);
  const admit = (name: string, address = '127.0.0.1') => {
    const socket = new FakeSocket(name);
    return { socket, admission: tbl.admit(socket, address) };
  };
  return { tbl, clock, admit };
}

/** The name of the connection that gave way, or the admission's kind. */
const outcome = (a: Admission<FakeSocket>) =>
  a.kind !== 'served' ? a.kind : a.victim === null ? 'room' : `${a.victim.socket.name} (${a.victim.why})`;

t.test('at the cap, the connection that has waited longest gives way, then over, then refused', async (t) => {
  const { tbl, admit } = table(3);
  t.equal(outcome(admit('a').admission), 'room');
  t.equal(outcome(admit('b').admission), 'room');
  const c = admit('c');
  t.equal(outcome(admit('d').admission), 'a (no-request)', 'the oldest that sent nothing');
  t.equal(outcome(admit('e').admission), 'b (no-request)');
  // c has a request in progress (its body all came): it keeps its place.
  t.ok(tbl.requested(c.socket, Object.assign(new FakeRequest(), { complete: true })));
  t.equal(outcome(admit('f').admission), 'd (no-request)', 'c is passed over');
  t.equal(tbl.served, 3);
  t.equal(tbl.over, 0);
});

t.test('a connection idle after its answer gives way in the order it became idle', async (t) => {
  const { tbl, admit } = table(2);
  const a = admit('a');
  const b = admit('b');
  const req = new FakeRequest();
  tbl.requested(a.socket, req);
  req.complete = true;
  tbl.answered(a.socket);
  // b has waited since it was accepted; a since its answer, later.
  t.equal(outcome(admit('c').admission), 'b (no-request)');
  t.equal(outcome(admit('d').admission), 'a (idle)');
  t.notOk(tbl.requested(b.socket, req), 'a connection gone is not served');
});

t.test('a request in progress never gives way: with all of them busy, the next is over, then refused', async (t) => {
  const { tbl, admit } = table(2);
  for (const name of ['a', 'b']) {
    const { socket } = admit(name);
    tbl.requested(socket, Object.assign(new FakeRequest(), { complete: true }));
  }
  const over = admit('c');
  t.equal(outcome(over.admission), 'over');
  t.ok(tbl.isOver(over.socket));
  t.equal(outcome(admit('d').admission), 'refused');
  tbl.closed(over.socket);
  t.equal(tbl.over, 0, 'an over connection that closes frees its place in the overflow');
  t.equal(outcome(admit('e').admission), 'over');
});

t.test('pipelined requests: busy until the last answer', async (t) => {
  const { tbl, admit } = table(1);
  const a = admit('a');
  tbl.requested(a.socket, new FakeRequest());
  tbl.requested(a.socket, new FakeRequest()); // the first one's body has all come
  t.equal(outcome(admit('b').admission), 'over');
  tbl.answered(a.socket);
  t.equal(outcome(admit('c').admission), 'refused', 'one answer of two: still busy');
  tbl.answered(a.socket);
  const d = admit('d');
  t.equal(outcome(d.admission), 'a (idle)');
});

t.test('a body still coming keeps its place; one that brought nothing for stallMs gives way', async (t) => {
  const { tbl, clock, admit } = table(2);
  const up = admit('upload');
  const stuck = admit('stuck');
  tbl.requested(up.socket, new FakeRequest());
  tbl.requested(stuck.socket, new FakeRequest());
  // First look: both seen now, neither has stalled yet.
  const x = admit('x');
  t.equal(outcome(x.admission), 'over');
  tbl.closed(x.socket);
  clock.ms = 999;
  up.socket.bytesRead += 4096;
  t.equal(outcome(admit('y').admission), 'over', 'not yet stalled');
  clock.ms = 1999;
  up.socket.bytesRead += 4096;
  t.equal(outcome(admit('z').admission), 'stuck (stalled)', 'nothing for a second: gives way');
  clock.ms = 5000;
  up.socket.bytesRead += 4096;
  t.equal(outcome(admit('w').admission), 'z (no-request)', 'the upload still moving is passed over');
  clock.ms = 10_000;
  t.equal(outcome(admit('v').admission), 'upload (stalled)', 'once it stops, the upload too');
});

t.test('one address holds no more than half while others hold places', async (t) => {
  const { tbl, admit } = table(4);
  const flood = ['f1', 'f2', 'f3', 'f4'].map((n) => admit(n, '127.0.0.2'));
  t.ok(
    flood.every((f) => outcome(f.admission) === 'room'),
    'alone, an address takes every place',
  );
  t.same(tbl.crowded(), [{ address: '127.0.0.2', held: 4 }]);
  t.equal(outcome(admit('f5', '127.0.0.2').admission), 'f1 (no-request)', 'alone, it takes its own places');
  t.equal(outcome(admit('c1').admission), 'f2 (no-request)', 'another address: the flood gives way');
  const over = admit('f6', '127.0.0.2');
  t.equal(outcome(over.admission), 'over', 'with another address there, the flood gets no new place');
  t.equal(outcome(admit('f7', '127.0.0.2').admission), 'refused');
  tbl.closed(over.socket);
  t.equal(outcome(admit('c2').admission), 'f3 (no-request)');
  // Two each now: at its share, 127.0.0.1 gets no new place either, while the flood is there.
  t.equal(outcome(admit('c3').admission), 'over');
  // A third address, under its share, takes a place from one holding half.
  t.match(outcome(admit('o1', '127.0.0.3').admission), /^(c1|f4|f5) /);
  t.equal(tbl.served, 4);
});

t.test('an address under its share whose others are all busy still gets a place of another', async (t) => {
  const { tbl, admit } = table(4);
  for (const n of ['f1', 'f2', 'f3']) {
    const { socket } = admit(n, '127.0.0.2');
    tbl.requested(socket, Object.assign(new FakeRequest(), { complete: true }));
  }
  admit('c1');
  t.equal(
    outcome(admit('c2').admission),
    'c1 (no-request)',
    'the flood has nothing to give: the first of all that may',
  );
  const [c3] = [admit('c3')];
  t.equal(outcome(c3.admission), 'c2 (no-request)');
});

t.test('never more served than the cap nor more over than the overflow, whatever happens', async (t) => {
  const random = prng(81);
  const max = 16;
  const { tbl, clock, admit } = table(max);
  const live: Array<{ socket: FakeSocket; req: FakeRequest | null }> = [];
  let violations = 0;
  let evicted = 0;
  for (let i = 0; i < 20_000; i++) {
    clock.ms += Math.floor(random() * 100);
    const roll = random();
    if (roll < 0.4) {
      const { socket, admission } = admit(`s${i}`, `10.0.0.${Math.floor(random() * 4)}`);
      if (admission.kind === 'served') {
        live.push({ socket, req: null });
        if (admission.victim) {
          evicted++;
          const gone = live.findIndex((l) => l.socket === admission.victim!.socket);
          if (gone < 0 || live[gone]!.req?.complete === true) violations++; // a busy one gave way
          live.splice(gone, 1);
        }
      } else if (admission.kind === 'over') tbl.closed(socket);
    } else if (live.length > 0) {
      const at = Math.floor(random() * live.length);
      const one = live[at]!;
      if (roll < 0.55) {
        tbl.closed(one.socket);
        live.splice(at, 1);
      } else if (roll < 0.7 && one.req === null) {
        one.req = new FakeRequest();
        tbl.requested(one.socket, one.req);
      } else if (roll < 0.85 && one.req !== null) {
        one.req.complete = true;
      } else if (one.req?.complete) {
        tbl.answered(one.socket);
        one.req = null;
      } else one.socket.bytesRead += 1;
    }
    if (tbl.served > max || tbl.over > 1 || tbl.served !== live.length) violations++;
  }
  t.equal(violations, 0, 'the bounds held, and no request in progress gave way');
  t.ok(evicted > 100, `connections gave way (${evicted})`);
});

t.test('addressKey: IPv4 as it is, IPv4-mapped as IPv4, IPv6 as its /64', async (t) => {
  t.equal(addressKey('127.0.0.2'), '127.0.0.2');
  t.equal(addressKey('::ffff:127.0.0.2'), '127.0.0.2');
  t.equal(addressKey('2001:db8:1:2:aaaa::1'), '2001:db8:1:2::/64');
  t.equal(addressKey('2001:db8:1:2:bbbb:cccc:dddd:eeee'), '2001:db8:1:2::/64', 'one /64, one share');
  t.equal(addressKey('2001:0db8::1'), '2001:db8:0:0::/64');
  t.equal(addressKey('::1'), '0:0:0:0::/64');
  t.equal(addressKey('fe80::1%eth0'), 'fe80:0:0:0::/64');
  t.equal(addressKey(undefined), '');
});
