import t, { type Test } from 'tap';
import { apiHarness, type ApiHarness } from '../../../helpers/api.js';

/** Commits an entry as a memoryAction would (`ttlMs` from the harness's clock). */
async function remember(
  h: ApiHarness,
  organization: string,
  namespace: string,
  key: string,
  value: unknown,
  ttlMs?: number,
) {
  const now = h.clock.now();
  await h.store.commit({
    type: 'memory.written',
    organization,
    namespace,
    key,
    entry: {
      value,
      updatedAt: now.toISOString(),
      expiresAt: ttlMs === undefined ? null : new Date(now.getTime() + ttlMs).toISOString(),
    },
  });
}

async function setup(t: Test) {
  const h = await apiHarness(t);
  const admin = await h.key('admin', 'acme');
  const other = await h.key('admin', 'other');
  const get = (url: string, key = admin) => h.call(key, { method: 'GET', url });
  return { h, admin, other, get };
}

t.test('list: live entries by namespace then key, with their size, never their values', async (t) => {
  const { h, get } = await setup(t);
  await remember(h, 'acme', 'chat', 'customer-2', [{ role: 'user', content: 'hé' }]);
  await remember(h, 'acme', 'chat', 'customer-1', 'x', 60_000);
  await remember(h, 'acme', 'a-first', 'k', { n: 1 });
  await remember(h, 'other', 'chat', 'theirs', 1);
  const res = await get('/admin/memory');
  t.equal(res.statusCode, 200, res.body);
  t.same(res.json(), {
    items: [
      { namespace: 'a-first', key: 'k', size: 7, updatedAt: '2026-11-21T10:00:00.000Z', expiresAt: null },
      {
        namespace: 'chat',
        key: 'customer-1',
        size: 3,
        updatedAt: '2026-11-21T10:00:00.000Z',
        expiresAt: '2026-11-21T10:01:00.000Z',
      },
      {
        namespace: 'chat',
        key: 'customer-2',
        size: Buffer.byteLength('[{"role":"user","content":"hé"}]'),
        updatedAt: '2026-11-21T10:00:00.000Z',
        expiresAt: null,
      },
    ],
    nextCursor: null,
  });
  t.same(
    (await get('/admin/memory?namespace=chat&prefix=customer-2')).json().items.map((i: { key: string }) => i.key),
    ['customer-2'],
  );
  t.same((await get('/admin/memory?namespace=nothing')).json(), { items: [], nextCursor: null });
  h.clock.advance(60_000);
  t.same(
    (await get('/admin/memory?namespace=chat')).json().items.map((i: { key: string }) => i.key),
    ['customer-2'],
    'an entry past its TTL is not listed',
  );
});

t.test('list pages with an opaque cursor, across namespaces; a cursor it did not make is refused', async (t) => {
  const { h, get } = await setup(t);
  for (const ns of ['n1', 'n2']) for (const k of ['a', 'b', 'c']) await remember(h, 'acme', ns, k, k);
  const seen: string[] = [];
  let cursor: string | null = null;
  for (let page = 0; page < 10; page++) {
    const res = await get(`/admin/memory?limit=4${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
    const body = res.json() as { items: Array<{ namespace: string; key: string }>; nextCursor: string | null };
    seen.push(...body.items.map((i) => `${i.namespace}/${i.key}`));
    cursor = body.nextCursor;
    if (!cursor) break;
  }
  t.same(seen, ['n1/a', 'n1/b', 'n1/c', 'n2/a', 'n2/b', 'n2/c']);
  const exact = (await get('/admin/memory?limit=6')).json();
  t.equal(exact.nextCursor, null, 'a page that holds the last entry has no next');
  for (const bad of ['nope', Buffer.from('{"x":1}').toString('base64url')]) {
    const res = await get(`/admin/memory?cursor=${bad}`);
    t.equal(res.statusCode, 400);
    t.equal(res.json().error, 'VALIDATION_ERROR');
  }
  t.equal((await get('/admin/memory?limit=0')).json().error, 'VALIDATION_ERROR');
});

t.test('get and delete one entry; keys with / : and spaces; TTL; the entry removed for good', async (t) => {
  const { h, get, admin } = await setup(t);
  const key = 'customer:42/history of it';
  await remember(h, 'acme', 'chat/v1', key, [{ role: 'user', content: 'hello' }], 30_000);
  const url = `/admin/memory/${encodeURIComponent('chat/v1')}/${encodeURIComponent(key)}`;
  const res = await get(url);
  t.equal(res.statusCode, 200, res.body);
  t.same(res.json(), {
    namespace: 'chat/v1',
    key,
    value: [{ role: 'user', content: 'hello' }],
    updatedAt: '2026-11-21T10:00:00.000Z',
    expiresAt: '2026-11-21T10:00:30.000Z',
  });
  const deleted = await h.call(admin, { method: 'DELETE', url });
  t.same(deleted.json(), { namespace: 'chat/v1', key, deleted: true });
  t.same(h.store.state.memory, {}, 'gone from the state');
  t.equal((await get(url)).json().error, 'NOT_FOUND');
  t.equal((await h.call(admin, { method: 'DELETE', url })).statusCode, 404, 'a second delete finds nothing');

  await remember(h, 'acme', 'ns', 'short', 1, 1000);
  h.clock.advance(1000);
  t.equal((await get('/admin/memory/ns/short')).json().error, 'NOT_FOUND', 'expired reads as missing');
  const long = 'k'.repeat(512);
  await remember(h, 'acme', 'ns', long, 1);
  t.equal((await get(`/admin/memory/ns/${long}`)).statusCode, 200, 'the longest key');
  t.equal((await get(`/admin/memory/ns/${long}k`)).json().error, 'VALIDATION_ERROR', 'one over it');
});

t.test("another organization's memory is 404 and never listed; permission ADMIN", async (t) => {
  const { h, get, other, admin } = await setup(t);
  const system = await h.key('admin', null);
  const viewer = await h.key('viewer', 'acme');
  await remember(h, 'acme', 'chat', 'c1', 'secret history');
  t.same((await get('/admin/memory', other)).json(), { items: [], nextCursor: null });
  t.equal((await get('/admin/memory/chat/c1', other)).statusCode, 404);
  t.equal((await h.call(other, { method: 'DELETE', url: '/admin/memory/chat/c1' })).statusCode, 404);
  t.equal((await get('/admin/memory/chat/c1?organization=acme', other)).json().error, 'FORBIDDEN');
  t.equal((await get('/admin/memory', viewer)).json().error, 'FORBIDDEN');
  t.equal((await get('/admin/memory/chat/c1', system)).statusCode, 404, "a system admin acts in 'default'");
  t.equal((await get('/admin/memory/chat/c1?organization=acme', system)).statusCode, 200);
  t.equal((await get('/admin/memory/chat/c1', admin)).json().value, 'secret history', 'still there');
});

t.test('namespaces: live entries counted and sized per namespace, in its organization only; ADMIN', async (t) => {
  const { h, get, other } = await setup(t);
  const viewer = await h.key('viewer', 'acme');
  await remember(h, 'acme', 'chat', 'c1', 'ab');
  await remember(h, 'acme', 'chat', 'c2', { n: 1 });
  await remember(h, 'acme', 'a-first', 'k', 1, 1000);
  await remember(h, 'other', 'theirs', 'k', 1);
  const res = await get('/admin/memory/namespaces');
  t.equal(res.statusCode, 200, res.body);
  t.same(res.json(), {
    items: [
      { namespace: 'a-first', entries: 1, bytes: 1 },
      { namespace: 'chat', entries: 2, bytes: 4 + 7 },
    ],
  });
  h.clock.advance(1000);
  t.same(
    (await get('/admin/memory/namespaces')).json().items.map((n: { namespace: string }) => n.namespace),
    ['chat'],
    'a namespace whose entries all expired is not listed',
  );
  t.same((await get('/admin/memory/namespaces', other)).json(), {
    items: [{ namespace: 'theirs', entries: 1, bytes: 1 }],
  });
  t.equal((await get('/admin/memory/namespaces?organization=acme', other)).json().error, 'FORBIDDEN');
  t.equal((await get('/admin/memory/namespaces', viewer)).json().error, 'FORBIDDEN');
});
