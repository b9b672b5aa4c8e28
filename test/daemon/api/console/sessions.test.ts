import t from 'tap';
import { SessionStore, type SessionIdentity } from '../../../../src/daemon/api/console/sessions.js';

const key = (keyId: string, organization: string | null = 'acme'): SessionIdentity => ({
  kind: 'apiKey',
  keyId,
  organization,
});

t.test('a session is found by its cookie, never by its public id', async (t) => {
  const store = new SessionStore();
  const { cookie, session } = store.open('apiKey', key('k1'));
  t.equal(store.find(cookie)?.id, session.id);
  t.equal(store.find(session.id), null);
  t.not(cookie, session.id);
});

t.test('idle and lifetime limits end sessions', async (t) => {
  let now = 0;
  const store = new SessionStore({ maxSessions: 10, maxPerIdentity: 10, idleMs: 100, lifetimeMs: 250 }, () => now);
  const { cookie, session } = store.open('apiKey', key('k1'));
  now = 99;
  t.ok(store.find(cookie), 'used within the idle time');
  now = 198;
  t.ok(store.find(cookie));
  now = 250;
  t.equal(store.find(cookie), null, 'past its lifetime, however used');
  t.notOk(store.isOpen(session.id));
  const idle = store.open('apiKey', key('k2'));
  now += 100;
  t.equal(store.find(idle.cookie), null, 'idle too long');
  t.equal(store.size, 0);
});

t.test('sessions are bounded per identity and overall, least recently used first', async (t) => {
  const store = new SessionStore({ maxSessions: 4, maxPerIdentity: 2, idleMs: 1e9, lifetimeMs: 1e9 });
  const a1 = store.open('apiKey', key('a'));
  const a2 = store.open('apiKey', key('a'));
  t.ok(store.find(a1.cookie), 'a1 used: a2 is now the least recent');
  const a3 = store.open('apiKey', key('a'));
  t.ok(store.find(a1.cookie));
  t.equal(store.find(a2.cookie), null, "a's least recently used ended");
  t.ok(store.find(a3.cookie));
  const others = ['b', 'c', 'd'].map((id) => store.open('apiKey', key(id)));
  t.equal(store.size, 4);
  t.equal(store.find(a1.cookie), null, 'the least recently used overall ended');
  for (const o of others) t.ok(store.find(o.cookie));
});

t.test('list is scoped by organization', async (t) => {
  const store = new SessionStore();
  store.open('apiKey', key('a', 'acme'));
  store.open('apiKey', key('g', 'globex'));
  store.open('link', key('s', null));
  t.same(
    store.list('acme').map((s) => s.identity.organization),
    ['acme'],
  );
  t.equal(store.list(null).length, 3);
});
