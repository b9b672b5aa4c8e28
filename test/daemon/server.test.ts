import t, { type Test } from 'tap';
import { buildServer } from '../../src/daemon/server.js';
import { applyRecord, type WfxRecord } from '../../src/daemon/state/records.js';
import { initialState, type WfxState } from '../../src/daemon/state/state.js';
import { Store } from '../../src/daemon/store/store.js';
import { VERSION } from '../../src/shared/version.js';

async function setup(t: Test, bodyLimit?: number) {
  const store = await Store.open<WfxState, WfxRecord>({ dir: t.testdir(), initialState, apply: applyRecord });
  const app = buildServer({ store, bodyLimit });
  app.post('/echo', async (req) => req.body);
  t.teardown(async () => {
    await app.close();
    await store.close();
  });
  return app;
}

t.test('GET /health answers ok with the version', async (t) => {
  const app = await setup(t);
  const res = await app.inject({ method: 'GET', url: '/health' });
  t.equal(res.statusCode, 200);
  t.same(res.json(), { status: 'ok', version: VERSION });
});

t.test('unknown routes answer the error body with NOT_FOUND', async (t) => {
  const app = await setup(t);
  const res = await app.inject({ method: 'GET', url: '/nope?x=1' });
  t.equal(res.statusCode, 404);
  t.match(res.json(), { error: 'NOT_FOUND', message: 'no route GET /nope', timestamp: String });
});

t.test('bad JSON is a 400 VALIDATION_ERROR without a stack', async (t) => {
  const app = await setup(t);
  const res = await app.inject({ method: 'POST', url: '/echo', headers: { 'content-type': 'application/json' }, payload: '{"a":' });
  t.equal(res.statusCode, 400);
  t.equal(res.json().error, 'VALIDATION_ERROR');
  t.notMatch(res.body, /at .*\.js:\d+/);
});

t.test('a body over the limit is a 413 PAYLOAD_TOO_LARGE', async (t) => {
  const app = await setup(t, 1024);
  const res = await app.inject({
    method: 'POST',
    url: '/echo',
    headers: { 'content-type': 'application/json' },
    payload: JSON.stringify({ big: 'x'.repeat(2048) }),
  });
  t.equal(res.statusCode, 413);
  t.equal(res.json().error, 'PAYLOAD_TOO_LARGE');
});

t.test('an unexpected error is a 500 INTERNAL_ERROR with no detail', async (t) => {
  const app = await setup(t);
  app.get('/throws', async () => {
    throw new Error('secret internals at /src/x.ts:10');
  });
  const res = await app.inject({ method: 'GET', url: '/throws' });
  t.equal(res.statusCode, 500);
  t.same(Object.keys(res.json()).sort(), ['error', 'message', 'timestamp']);
  t.equal(res.json().message, 'internal error');
});
