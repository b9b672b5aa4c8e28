import t, { type Test } from 'tap';
import type { BulkResult, BulkView } from '../../../../src/shared/api/index.js';
import { apiHarness, type ApiHarness, type TestKey } from '../../../helpers/api.js';
import { eventually } from '../../../helpers/eventually.js';

const WAITS = `processId: AUTO
name: Waits
nodes:
  start: { type: startEvent, next: ask }
  ask: { type: inputNode, inputType: textbox, next: done }
  done: { type: endEvent }
`;

async function setup(t: Test, limits: Record<string, number> = {}) {
  const h = await apiHarness(t, { engine: { limits, bulkRate: 10_000 } });
  const dev = await h.key('developer', 'acme');
  const operator = await h.key('operator', 'acme');
  const viewer = await h.key('viewer', 'acme');
  const other = await h.key('developer', 'other');
  const flow = await h.publish(WAITS, { organization: 'acme' });
  const another = await h.publish(WAITS, { organization: 'acme' });
  const theirs = await h.publish(WAITS, { organization: 'other' });
  const start = async (processId: string, n: number, organization = 'acme') => {
    const ids: string[] = [];
    for (let i = 0; i < n; i++) {
      h.clock.advance(1); // time-ordered ids, as on a real clock
      ids.push((await h.start(processId, {}, { organization })).processInstanceId);
    }
    h.clock.advance(1);
    return ids;
  };
  const post = (key: TestKey, payload: object) => h.call(key, { method: 'POST', url: '/process/bulk', payload });
  const get = (key: TestKey, url: string) => h.call(key, { method: 'GET', url });
  return { h, dev, operator, viewer, other, flow, another, theirs, start, post, get };
}

/** Waits until the operation is no longer running, reading it over the API. */
async function finished(h: ApiHarness, key: TestKey, bulkId: string): Promise<BulkView> {
  return eventually('the bulk operation finishes', async () => {
    const view = (await h.call(key, { method: 'GET', url: `/process/bulk/${bulkId}` })).json() as BulkView;
    return view.state !== 'RUNNING' && view;
  });
}

t.test('a dry run counts and samples the selection and changes nothing', async (t) => {
  const { h, dev, flow, another, start, post } = await setup(t);
  const ids = await start(flow, 5);
  await start(another, 2);
  const res = await post(dev, { operation: 'cancel', query: { processId: flow }, dryRun: true, sample: 2 });
  t.equal(res.statusCode, 200, res.body);
  const body = res.json() as { count: number; sample: Array<{ processInstanceId: string }>; maxExecutions: number };
  t.equal(body.count, 5);
  t.equal(body.maxExecutions, 100_000);
  t.same(
    body.sample.map((s) => s.processInstanceId),
    [ids[4], ids[3]],
    'the newest first',
  );
  for (const id of ids) t.equal((await h.get(id)).stateCd, 0, 'still running');
  t.same((await h.call(dev, { method: 'GET', url: '/process/bulk' })).json(), { items: [], nextCursor: null });
});

t.test('a bulk cancel by query touches exactly what it selects, with a result per execution', async (t) => {
  const { h, dev, viewer, other, flow, another, theirs, start, post, get } = await setup(t);
  const ids = await start(flow, 7);
  const spared = await start(another, 2);
  const foreign = await start(theirs, 2, 'other');
  const res = await post(dev, { operation: 'cancel', query: { processId: flow, state: 'RUNNING' } });
  t.equal(res.statusCode, 202, res.body);
  const created = res.json() as BulkView;
  t.match(created, { operation: 'cancel', state: 'RUNNING', total: 7, organization: 'acme' });
  t.match(created.by, /^key:/);
  t.same(created.query, { processId: flow, state: 'RUNNING' }, 'the query as given');
  t.equal(created.params, null);
  const later = await start(flow, 1); // after the selection: never touched
  const view = await finished(h, viewer, created.bulkId);
  t.match(view, { state: 'COMPLETED', total: 7, done: 7, skipped: 0, pending: 0 });
  for (const id of ids) t.equal((await h.get(id)).stateCd, 3, `${id} cancelled`);
  for (const id of [...spared, ...foreign, ...later]) t.equal((await h.get(id)).stateCd, 0, `${id} untouched`);

  const seen: BulkResult[] = [];
  let cursor: string | null = null;
  for (let page = 0; page < 10; page++) {
    const url: string = `/process/bulk/${created.bulkId}/results?limit=3${cursor ? `&cursor=${cursor}` : ''}`;
    const body = (await get(viewer, url)).json() as { items: BulkResult[]; nextCursor: string | null };
    seen.push(...body.items);
    cursor = body.nextCursor;
    if (cursor === null) break;
  }
  t.same(
    seen.map((r) => r.processInstanceId),
    [...ids].reverse(),
    'each selected execution once, newest first',
  );
  t.ok(
    seen.every((r) => r.outcome === 'DONE' && r.code === null),
    'all done',
  );

  const list = (await get(viewer, '/process/bulk')).json() as { items: BulkView[] };
  t.same(
    list.items.map((b) => b.bulkId),
    [created.bulkId],
  );
  t.equal((await get(other, `/process/bulk/${created.bulkId}`)).json().error, 'BULK_NOT_FOUND', "not another's");
  t.equal((await get(other, '/process/bulk')).json().items.length, 0);
  const again = await h.call(dev, { method: 'POST', url: `/process/bulk/${created.bulkId}/cancel` });
  t.equal(again.statusCode, 409);
  t.equal(again.json().error, 'BULK_NOT_RUNNING');
});

t.test('permissions and organizations', async (t) => {
  const { dev, operator, viewer, flow, theirs, post } = await setup(t);
  const body = { operation: 'cancel', query: { processId: flow } };
  for (const key of [operator, viewer]) {
    const res = await post(key, body);
    t.equal(res.statusCode, 403, `${key.role} may not`);
    t.equal(res.json().error, 'FORBIDDEN');
  }
  const named = await post(dev, { operation: 'cancel', query: { organization: 'other' } });
  t.equal(named.json().error, 'FORBIDDEN', 'an organization key acts in its own organization');
  const foreignFlow = await post(dev, { operation: 'cancel', query: { processId: theirs } });
  t.equal(foreignFlow.json().error, 'PROCESS_NOT_FOUND', "another organization's flow is not found");
});

t.test('the body is validated per operation', async (t) => {
  const { dev, post } = await setup(t);
  for (const payload of [
    { operation: 'cancel', query: {}, params: { data: {} } },
    { operation: 'explode', query: {} },
    { operation: 'cancel' },
    { operation: 'cancel', query: { limit: 5 } },
    { operation: 'cancel', query: {}, sample: 0 },
  ]) {
    const res = await post(dev, payload);
    t.equal(res.statusCode, 400, JSON.stringify(payload));
    t.equal(res.json().error, 'VALIDATION_ERROR');
  }
});

t.test('limits: executions per operation', async (t) => {
  const { dev, flow, start, post } = await setup(t, { bulkExecutions: 3 });
  await start(flow, 4);
  const dry = (await post(dev, { operation: 'cancel', query: { processId: flow }, dryRun: true })).json();
  t.match(dry, { count: 4, maxExecutions: 3 }, 'a dry run says it is past the limit');
  const big = await post(dev, { operation: 'cancel', query: { processId: flow } });
  t.equal(big.statusCode, 422);
  t.equal(big.json().error, 'BULK_TOO_LARGE');
});

t.test('a system key may name an organization, or span them all', async (t) => {
  const { h, flow, theirs, start, post } = await setup(t);
  const system = await h.key('admin', null);
  const mine = await start(flow, 2);
  const foreign = await start(theirs, 2, 'other');
  const dry = (await post(system, { operation: 'cancel', query: {}, dryRun: true })).json();
  t.equal(dry.count, 4, 'every organization');
  const named = (await post(system, { operation: 'cancel', query: { organization: 'other' }, dryRun: true })).json();
  t.equal(named.count, 2);
  const res = await post(system, { operation: 'cancel', query: { organization: 'other' } });
  t.equal(res.statusCode, 202);
  await finished(h, system, (res.json() as BulkView).bulkId);
  for (const id of foreign) t.equal((await h.get(id)).stateCd, 3);
  for (const id of mine) t.equal((await h.get(id)).stateCd, 0);
});
