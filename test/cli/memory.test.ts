import '../setup/fixtures.js'; // fixtures under the OS temp dir (see there)
import t from 'tap';
import type { ApiHarness } from '../helpers/api.js';
import { served } from '../helpers/served.js';

/** Seeds an entry as a memoryAction's step would commit it. */
async function remember(
  h: ApiHarness,
  namespace: string,
  key: string,
  value: unknown,
  expiresAt: string | null = null,
) {
  await h.store.commit({
    type: 'memory.written',
    organization: 'acme',
    namespace,
    key,
    entry: { value, updatedAt: h.clock.now().toISOString(), expiresAt },
  });
}

t.test('wfx memory list, get, delete: scoped to the organization', async (t) => {
  const { h, wfx, wfxAs } = await served(t);
  const wfxOther = await wfxAs('other');
  await remember(h, 'chat', 'customer-1', [{ role: 'user', content: 'Where is my order?' }]);
  await remember(h, 'chat', 'customer-2', 'x', '2026-11-22T10:00:00.000Z');
  await remember(h, 'tickets', 'T-1', { priority: 'high' });

  const list = await wfx(['memory', 'list']);
  t.equal(list.code, 0, list.stderr);
  t.match(list.stdout, /^NAMESPACE\s+KEY\s+SIZE\s+UPDATED\s+EXPIRES\n/);
  t.match(list.stdout, /chat\s+customer-1\s+\d+ B\s+2026-11-21T10:00:00.000Z\s+never\n/);
  t.match(list.stdout, /chat\s+customer-2\s+3 B\s+\S+\s+2026-11-22T10:00:00.000Z\n/);
  t.match(list.stdout, /tickets\s+T-1/);
  const json = JSON.parse(
    (await wfx(['memory', 'list', '--namespace', 'chat', '--prefix', 'customer-2', '--json'])).stdout,
  );
  t.match(json, [{ namespace: 'chat', key: 'customer-2', size: 3 }]);
  t.equal(json.length, 1);

  const limited = await wfx(['memory', 'list', '--limit', '2']);
  t.equal(limited.stdout.trim().split('\n').length, 3, 'a header and two entries');
  t.match(limited.stderr, /more than 2 entries/);

  const namespaces = await wfx(['memory', 'namespaces']);
  t.equal(namespaces.code, 0, namespaces.stderr);
  t.match(namespaces.stdout, /^NAMESPACE\s+ENTRIES\s+SIZE\n/);
  t.match(namespaces.stdout, /chat\s+2\s+\d+ B\n/);
  t.match(namespaces.stdout, /tickets\s+1\s+19 B\n/);
  t.same(JSON.parse((await wfxOther(['memory', 'namespaces', '--json'])).stdout), [], 'none in another organization');

  const got = await wfx(['memory', 'get', 'chat', 'customer-1']);
  t.same(JSON.parse(got.stdout), [{ role: 'user', content: 'Where is my order?' }], 'the value');
  t.match(JSON.parse((await wfx(['memory', 'get', 'chat', 'customer-1', '--json'])).stdout), {
    namespace: 'chat',
    key: 'customer-1',
    expiresAt: null,
  });

  const theirs = await wfxOther(['memory', 'get', 'chat', 'customer-1']);
  t.equal(theirs.code, 1);
  t.match(theirs.stderr, /^NOT_FOUND: /, "another organization's memory is not found");
  t.same(JSON.parse((await wfxOther(['memory', 'list', '--json'])).stdout), []);

  const deleted = await wfx(['memory', 'delete', 'chat', 'customer-1']);
  t.equal(deleted.code, 0);
  t.match(deleted.stdout, /chat customer-1 deleted/);
  const again = await wfx(['memory', 'delete', 'chat', 'customer-1']);
  t.equal(again.code, 1);
  t.match(again.stderr, /^NOT_FOUND: /);
  t.equal((await wfx(['memory', 'list', '--limit', '0'])).code, 2, 'a usage error');
});
