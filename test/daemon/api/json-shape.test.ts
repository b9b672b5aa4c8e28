import t from 'tap';
import { apiHarness } from '../../helpers/api.js';
import { ALIAS_BOMB } from '../../fixtures/alias-bomb.js';

const deep = (depth: number) => `${'['.repeat(depth)}${']'.repeat(depth)}`;

t.test(
  'a JSON body nested past the limit is 400 VALIDATION_ERROR on every kind of route, before its handler',
  async (t) => {
    const h = await apiHarness(t);
    const admin = await h.key('admin', 'default');
    const routes = [
      {
        method: 'POST',
        url: '/process/exec',
        body: `{"processId":"x","data":{"v":${deep(100)}}}`,
        path: 'body.data.v',
      },
      { method: 'POST', url: '/admin/api-keys', body: `{"name":"k","role":"viewer","x":${deep(100)}}`, path: 'body.x' },
      {
        method: 'POST',
        url: '/admin/flows',
        body: `{"source":"x","definition":${deep(100)}}`,
        path: 'body.definition',
      },
      { method: 'PUT', url: '/admin/environments/PRODUCTION/variables/X', body: deep(5000), path: '' },
    ] as const;
    for (const r of routes) {
      const res = await h.call(admin, {
        method: r.method,
        url: r.url,
        payload: r.body,
        headers: { 'content-type': 'application/json' },
      });
      t.equal(res.statusCode, 400, `${r.method} ${r.url}`);
      const body = res.json() as { error: string; details: { path: string; maxDepth: number } };
      t.equal(body.error, 'VALIDATION_ERROR');
      t.equal(body.details.maxDepth, 64);
      t.ok(body.details.path.startsWith(r.path === '' ? 'body' : r.path), `${r.url}: the path (${body.details.path})`);
    }
  },
);

t.test('a YAML alias bomb published over the API is 400 FLOW_INVALID with its position', async (t) => {
  const h = await apiHarness(t);
  const dev = await h.key('developer', 'default');
  const res = await h.call(dev, { method: 'POST', url: '/admin/flows', payload: { source: ALIAS_BOMB } });
  t.equal(res.statusCode, 400);
  t.match(res.json(), { error: 'FLOW_INVALID', details: { problems: [{ line: 4, column: 8 }] } });
});
