import t from 'tap';
import { apiHarness } from '../../helpers/api.js';
import { eventually } from '../../helpers/eventually.js';

const FLOW = (id: string, fail: boolean) => `processId: ${id}
name: M
nodes:
  s: { type: startEvent, next: ${fail ? 'boom' : 'e'} }
${fail ? '  boom: { type: scriptTask, script: \'throw new Error("no")\', next: e }\n' : ''}  e: { type: endEvent }
`;
const TASK_FLOW = `processId: 4d6e8f70-0c1e-4b5c-8f70-8192a3b4c5d6
name: T
nodes:
  s: { type: startEvent, next: ask }
  ask: { type: userTask, next: e }
  e: { type: endEvent }
`;
const OK = '0c1e2f3a-4b5c-4d6e-8f70-8192a3b4c5d6';
const BAD = '1c1e2f3a-4b5c-4d6e-8f70-8192a3b4c5d6';

/** The value of series `name{labels}` in an exposition, or null when absent. */
function series(text: string, name: string, labels: Record<string, string> = {}): number | null {
  for (const line of text.split('\n')) {
    if (!line.startsWith(name) || line.startsWith('#')) continue;
    const m = /^([a-z_]+)(?:\{(.*)\})? (.+)$/.exec(line);
    if (!m || m[1] !== name) continue;
    const got = Object.fromEntries([...(m[2] ?? '').matchAll(/(\w+)="([^"]*)"/g)].map((x) => [x[1], x[2]]));
    if (Object.entries(labels).every(([k, v]) => got[k] === v)) return Number(m[3]);
  }
  return null;
}

t.test('GET /metrics: a system admin reads it; others are refused with their codes', async (t) => {
  const h = await apiHarness(t, { metrics: {} });
  const system = await h.key('admin', null);
  const orgAdmin = await h.key('admin', 'default');
  const viewer = await h.key('viewer', null);
  const ok = await h.call(system, { method: 'GET', url: '/metrics' });
  t.equal(ok.statusCode, 200);
  t.match(ok.headers['content-type'], /^text\/plain; version=0\.0\.4/);
  t.notMatch(ok.body, /wfx_trace_/, 'no trace exporter series while tracing is off');
  t.match(ok.body, /# TYPE wfx_executions_started_total counter/);
  t.notMatch(ok.body, /^process_cpu/m, 'not the global registry of prom-client');
  t.equal((await h.call(null, { method: 'GET', url: '/metrics' })).json().error, 'UNAUTHORIZED');
  t.equal((await h.call(orgAdmin, { method: 'GET', url: '/metrics' })).json().error, 'FORBIDDEN');
  t.equal((await h.call(viewer, { method: 'GET', url: '/metrics' })).json().error, 'FORBIDDEN');
  const bearer = await h.call(null, {
    method: 'GET',
    url: '/metrics',
    headers: { authorization: 'Bearer x'.repeat(3) },
  });
  t.equal(bearer.json().error, 'UNAUTHORIZED', 'no scraper token configured: a bearer is no way in');
});

t.test('GET /metrics: a scraper token opens it to that token only; --metrics-open to anyone', async (t) => {
  const token = 'scraper-token-0123456789';
  const h = await apiHarness(t, { metrics: { token } });
  const good = await h.call(null, { method: 'GET', url: '/metrics', headers: { authorization: `Bearer ${token}` } });
  t.equal(good.statusCode, 200);
  const bad = await h.call(null, { method: 'GET', url: '/metrics', headers: { authorization: `Bearer ${token}x` } });
  t.equal(bad.statusCode, 401);
  t.equal(bad.json().error, 'UNAUTHORIZED');
  t.equal((await h.call(null, { method: 'GET', url: '/metrics' })).statusCode, 401);
  const open = await apiHarness(t, { metrics: { open: true } });
  t.equal((await open.call(null, { method: 'GET', url: '/metrics' })).statusCode, 200);
  const none = await apiHarness(t);
  const admin = await none.key('admin', null);
  t.equal((await none.call(admin, { method: 'GET', url: '/metrics' })).statusCode, 404, 'no metrics given: no route');
});

t.test('series move as executions run: started, completed, failed by code, tasks, nodes, HTTP by route', async (t) => {
  const h = await apiHarness(t, { metrics: {} });
  const system = await h.key('admin', null);
  const admin = await h.key('admin', 'default');
  for (const [id, fail] of [
    [OK, false],
    [BAD, true],
  ] as const)
    t.equal(
      (await h.call(admin, { method: 'POST', url: '/admin/flows', payload: { source: FLOW(id, fail) } })).statusCode,
      200,
    );
  t.equal(
    (await h.call(admin, { method: 'POST', url: '/admin/flows', payload: { source: TASK_FLOW } })).statusCode,
    200,
  );
  for (let i = 0; i < 3; i++)
    await h.call(admin, { method: 'POST', url: '/process/exec', payload: { processId: OK, data: {} } });
  for (let i = 0; i < 2; i++)
    await h.call(admin, { method: 'POST', url: '/process/exec', payload: { processId: BAD, data: {} } });
  await h.call(admin, {
    method: 'POST',
    url: '/process/exec',
    payload: { processId: '4d6e8f70-0c1e-4b5c-8f70-8192a3b4c5d6', data: {} },
  });
  const read = async () => (await h.call(system, { method: 'GET', url: '/metrics' })).body;
  await eventually('the executions counted', async () => {
    const text = await read();
    return series(text, 'wfx_executions_completed_total', { flow: OK }) === 3 &&
      series(text, 'wfx_executions_failed_total', { flow: BAD }) === 2
      ? text
      : null;
  });
  const text = await read();
  t.equal(series(text, 'wfx_executions_started_total', { flow: OK }), 3);
  t.equal(series(text, 'wfx_executions_started_total', { flow: BAD }), 2);
  t.equal(series(text, 'wfx_executions_failed_total', { flow: BAD, code: 'SCRIPT_ERROR' }), 2, 'by failure code');
  t.equal(series(text, 'wfx_node_failures_total', { type: 'scriptTask' }), 2);
  t.equal(series(text, 'wfx_tasks_waiting'), 1);
  t.equal(series(text, 'wfx_executions_running', { flow: '4d6e8f70-0c1e-4b5c-8f70-8192a3b4c5d6', waiting: 'true' }), 1);
  t.ok((series(text, 'wfx_node_duration_seconds_count', { type: 'endEvent' }) ?? 0) >= 3);
  t.ok((series(text, 'wfx_journal_commit_seconds_count') ?? 0) > 0);
  t.equal(series(text, 'wfx_http_requests_total', { route: '/process/exec', method: 'POST', status: '200' }), 6);
  t.notMatch(text, /instance\//, 'no raw URL, no execution id');
});
