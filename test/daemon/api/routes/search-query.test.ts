import t from 'tap';
import { apiHarness } from '../../../helpers/api.js';

// SPEC section 11: GET /process/instances?search.NAME=VALUE and a bulk query's `search`, the
// same filter as `where=NAME=VALUE`, and together with it.

const ORDER = `processId: AUTO
name: Order
search: { orderId: "{orderId}", customer: "{customer}" }
nodes:
  start: { type: startEvent, next: ask }
  ask: { type: inputNode, inputType: textbox, next: done }
  done: { type: endEvent }
`;

t.test('search.NAME=VALUE selects as where=NAME=VALUE does, in lists and bulk queries', async (t) => {
  const h = await apiHarness(t);
  const operator = await h.key('operator', 'default');
  const admin = await h.key('admin', 'default'); // bulk operations need WORKFLOW_PUBLISH
  const pid = await h.publish(ORDER);
  const ids: string[] = [];
  for (const [orderId, customer] of [
    ['A-1', 'Ada'],
    ['A-2', 'Bob'],
    ['A-3', 'Ada'],
  ]) {
    ids.push((await h.start(pid, { orderId, customer })).processInstanceId);
    h.clock.advance(1000);
  }
  await h.rest();
  const list = async (query: string) => {
    const res = await h.call(operator, { method: 'GET', url: `/process/instances?${query}` });
    t.equal(res.statusCode, 200, `${query}: ${res.body}`);
    return (res.json() as { items: Array<{ processInstanceId: string }> }).items.map((i) => i.processInstanceId);
  };
  t.same(await list('search.orderId=A-2'), [ids[1]]);
  t.same(await list('search.customer=Ada'), [ids[2], ids[0]], 'newest first');
  t.same(await list('search.customer=Ada&search.orderId=A-1'), [ids[0]], 'every one must hold');
  t.same(await list('search.customer=Ada&where=orderId=A-3'), [ids[2]], 'with where');
  t.same(await list('search.customer=Eve'), []);

  for (const query of [
    'search.1st=x',
    'search.=x',
    'search=x',
    `search.note=${'x'.repeat(300)}`,
    Array.from({ length: 17 }, (_, i) => `search.a${i}=1`).join('&'),
    [
      ...Array.from({ length: 9 }, (_, i) => `search.a${i}=1`),
      ...Array.from({ length: 8 }, (_, i) => `where=b${i}=1`),
    ].join('&'),
  ]) {
    const res = await h.call(operator, { method: 'GET', url: `/process/instances?${query}` });
    t.equal(res.statusCode, 400, query.slice(0, 60));
    t.equal(res.json().error, 'VALIDATION_ERROR', query.slice(0, 60));
  }

  const dry = async (query: Record<string, unknown>) =>
    h.call(admin, { method: 'POST', url: '/process/bulk', payload: { operation: 'cancel', query, dryRun: true } });
  const selected = await dry({ search: { customer: 'Ada' }, where: ['orderId=A-3'] });
  t.equal(selected.statusCode, 200, selected.body);
  t.match(selected.json(), { count: 1, sample: [{ processInstanceId: ids[2] }] });
  t.match((await dry({ search: { customer: 'Ada' } })).json(), { count: 2 });
  for (const bad of [{ search: { '1st': 'x' } }, { search: { a: 1 } }, { search: 'customer=Ada' }]) {
    const res = await dry(bad);
    t.equal(res.statusCode, 400, JSON.stringify(bad));
    t.equal(res.json().error, 'VALIDATION_ERROR');
  }
});
