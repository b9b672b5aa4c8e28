import t from 'tap';
import { COUNTED_BY, DAEMON_CALL, HopSigner } from '../../../src/daemon/cluster/request-signing.js';

// A request counted by the daemon that passed it on says so with a signature only a daemon of
// the same database can make: the one it reaches does not count it again.

t.test('a signature holds for its request, its database and a minute', async (t) => {
  let now = 1_000_000;
  const signer = new HopSigner('secret of the database', () => now);
  const signed = { [COUNTED_BY]: signer.sign('post', '/process/task') };
  t.ok(signer.counted(signed, 'POST', '/process/task'), 'the request signed');
  t.notOk(signer.counted(signed, 'POST', '/process/event'), 'another URL');
  t.notOk(signer.counted(signed, 'GET', '/process/task'), 'another method');
  t.notOk(new HopSigner('another database', () => now).counted(signed, 'POST', '/process/task'), 'another secret');
  t.notOk(signer.counted({}, 'POST', '/process/task'), 'no header');
  for (const forged of ['garbage', `${now}.`, `${now}.zz`, `x.${'0'.repeat(64)}`, `${now}.${'0'.repeat(64)}`])
    t.notOk(signer.counted({ [COUNTED_BY]: forged }, 'POST', '/process/task'), `forged: ${forged.slice(0, 20)}`);
  now += 60_000;
  t.ok(signer.counted(signed, 'POST', '/process/task'), 'a minute later');
  now += 1;
  t.notOk(signer.counted(signed, 'POST', '/process/task'), 'not after');
});

t.test("a daemon's own call names its organization, and nothing else passes for one", async (t) => {
  let now = 1_000_000;
  const signer = new HopSigner('secret of the database', () => now);
  const call = { [DAEMON_CALL]: signer.signCall('POST', '/process/event', 'acme') };
  t.equal(signer.caller(call, 'POST', '/process/event'), 'acme');
  t.equal(signer.caller(call, 'POST', '/process/task'), null, 'another URL');
  t.equal(new HopSigner('another', () => now).caller(call, 'POST', '/process/event'), null, 'another database');
  const [at, , mac] = call[DAEMON_CALL].split('.');
  const otherOrg = `${at}.${Buffer.from('globex').toString('base64url')}.${mac}`;
  t.equal(signer.caller({ [DAEMON_CALL]: otherOrg }, 'POST', '/process/event'), null, 'another organization');
  const counted = signer.sign('POST', '/process/event');
  t.equal(signer.caller({ [DAEMON_CALL]: counted }, 'POST', '/process/event'), null, 'a counted mark is no call');
  t.notOk(signer.counted({ [COUNTED_BY]: call[DAEMON_CALL] }, 'POST', '/process/event'), 'nor the reverse');
  now += 60_001;
  t.equal(signer.caller(call, 'POST', '/process/event'), null, 'not after a minute');
});
