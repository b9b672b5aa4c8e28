import '../setup/fixtures.js'; // fixtures under the OS temp dir (see there)
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { killIfAlive, wfxIn } from '../helpers/cli.js';
import { ACTORS, MATRIX_DOMAIN, MATRIX_FLOW, runMatrix, type Actor } from '../helpers/permission-matrix.js';

/** A started daemon process (real HTTP), its URL and bootstrap (system admin) key. */
async function daemon(t: Test) {
  const dataDir = join(t.testdir(), 'data');
  const res = await wfxIn(['daemon', 'start', '--port', '0', '--data-dir', dataDir, '--json']);
  if (res.code !== 0) throw new Error(res.stderr);
  const info = JSON.parse(res.stdout) as { pid: number; url: string };
  t.teardown(async () => {
    await wfxIn(['daemon', 'stop', '--data-dir', dataDir]);
    killIfAlive(info.pid);
  });
  const bootstrap = (await readFile(join(dataDir, 'bootstrap.key'), 'utf8')).trim();
  const call = async (apiKey: string | null, req: { method: string; url: string; payload?: object }) => {
    const res = await fetch(`${info.url}${req.url}`, {
      method: req.method,
      headers: {
        ...(apiKey ? { 'x-api-key': apiKey } : {}),
        ...(req.payload ? { 'content-type': 'application/json' } : {}),
      },
      body: req.payload ? JSON.stringify(req.payload) : undefined,
    });
    const text = await res.text();
    let body: Record<string, unknown> = {};
    try {
      body = JSON.parse(text) as Record<string, unknown>;
    } catch {
      body = { raw: text };
    }
    return { status: res.status, body };
  };
  return { info, bootstrap, call, dataDir };
}

t.test('permission matrix against a started daemon over real HTTP, keys made through the admin API', async (t) => {
  const d = await daemon(t);
  const whoami = await d.call(d.bootstrap, { method: 'GET', url: '/auth/whoami' });
  t.match(whoami.body, { organization: null, system: true }, 'the bootstrap key is a system admin');
  const keys = {} as Record<Actor, string>;
  const make = async (payload: object) => {
    const res = await d.call(d.bootstrap, {
      method: 'POST',
      url: '/admin/api-keys',
      payload: { name: 'matrix', ...payload },
    });
    if (res.status !== 201) throw new Error(JSON.stringify(res.body));
    return res.body.apiKey as string;
  };
  for (const role of ['viewer', 'operator', 'developer', 'admin'] as const)
    keys[role] = await make({ role, organization: 'acme' });
  keys.otherAdmin = await make({ role: 'admin', organization: 'globex' });
  keys.systemAdmin = await make({ role: 'admin', system: true });
  keys.systemViewer = await make({ role: 'viewer', system: true });
  keys.worker = await make({ role: 'worker', organization: 'acme' });
  const registered = await d.call(keys.developer, {
    method: 'PUT',
    url: '/admin/domains/billing',
    payload: MATRIX_DOMAIN,
  });
  t.equal(registered.status, 200, 'the domain is registered');
  const published = await d.call(keys.developer, {
    method: 'POST',
    url: '/admin/flows',
    payload: { source: MATRIX_FLOW },
  });
  t.match(published.body, { version: '1', organization: 'acme', created: true });
  const processId = published.body.processId as string;
  const definition = (await d.call(keys.viewer, { method: 'GET', url: `/admin/flows/${processId}` })).body
    .definition as object;
  const failures = await runMatrix(
    {
      processId,
      definition,
      waiting: async () =>
        (await d.call(keys.operator, { method: 'POST', url: '/process/exec', payload: { processId } })).body
          .processInstanceId as string,
    },
    (actor, req) => d.call(actor ? keys[actor] : null, req),
  );
  t.same(failures, [], `all ${ACTORS.length} callers x every endpoint as expected`);
});

t.test(
  'a run end to end over HTTP: start, wait, answer, completed, read from history; fuzz leaves it healthy',
  async (t) => {
    const d = await daemon(t);
    const key = (
      await d.call(d.bootstrap, {
        method: 'POST',
        url: '/admin/api-keys',
        payload: { name: 'op', role: 'developer', organization: 'default' },
      })
    ).body.apiKey as string;
    const pid = (await d.call(key, { method: 'POST', url: '/admin/flows', payload: { source: MATRIX_FLOW } })).body
      .processId as string;
    const started = await d.call(key, {
      method: 'POST',
      url: '/process/exec',
      payload: { processId: pid, correlationKey: 'order-1', data: { n: 1 } },
    });
    t.match(started.body, { processInstanceId: String, processId: pid, status: 'started', startTime: String });
    const id = started.body.processInstanceId as string;
    const waiting = await d.call(key, { method: 'GET', url: `/process/instance/${id}` });
    const listedWaiting = await d.call(key, { method: 'GET', url: `/process/${pid}/instances?stateCd=0` });
    t.match(
      listedWaiting.body,
      { items: [{ processInstanceId: id, waitingNodeIds: ['ask'] }] },
      'the list says where a running execution waits',
    );
    t.match(waiting.body, {
      stateCd: 0,
      correlationKey: 'order-1',
      data: { n: 1 },
      nodes: [
        { nodeId: 'start', statusCd: 2 },
        { nodeId: 'ask', statusCd: 1, wait: { kind: 'input', inputType: 'textbox' } },
      ],
    });
    const answered = await d.call(key, {
      method: 'POST',
      url: '/process/task',
      payload: { processInstanceId: id, nodeId: 'ask', action: 'COMPLETE', data: { inputValue: 'yes' } },
    });
    t.same(answered.body, { processInstanceId: id, status: 'resumed' });
    let done = await d.call(key, { method: 'GET', url: `/process/instance/${id}` });
    t.match(done.body, { stateCd: 1, endTime: String, data: { inputValue: 'yes', inputNodeAction: 'COMPLETE' } });
    const listed = await d.call(key, { method: 'GET', url: `/process/${pid}/instances?stateCd=1` });
    t.match(listed.body, { items: [{ processInstanceId: id, stateCd: 1, waitingNodeIds: [] }], nextCursor: null });
    // A burst of malformed requests over real HTTP, then the daemon still answers.
    for (let i = 0; i < 300; i++) {
      const res = await fetch(`${d.info.url}/process/${i % 2 ? 'exec' : 'task'}`, {
        method: 'POST',
        headers: { 'x-api-key': key, 'content-type': i % 3 ? 'application/json' : 'text/plain' },
        body: ['{', '[]', 'null', '{"processId":{}}', `{"processId":"${'x'.repeat(5000)}"}`][i % 5],
      });
      if (res.status >= 500) t.fail(`5xx on malformed request ${i}`);
      await res.arrayBuffer();
    }
    done = await d.call(key, { method: 'GET', url: `/process/instance/${id}` });
    t.equal(done.status, 200, 'still serving after the burst');
    t.equal((await d.call(null, { method: 'GET', url: '/health' })).status, 200);
    // Every authenticated request is in the daemon log with its key id and outcome, never the secret.
    t.equal((await wfxIn(['daemon', 'stop', '--data-dir', d.dataDir])).code, 0, 'stopped (which flushes the log)');
    const log = await readFile(join(d.dataDir, 'logs', 'daemon.log'), 'utf8');
    const keyId = key.slice('apk_'.length, 'apk_'.length + 16);
    const lines = log
      .split('\n')
      .filter((l) => l.includes('"msg":"request"'))
      .map(
        (l) =>
          JSON.parse(l) as {
            keyId?: string;
            status: number;
            route: string;
            level: number;
            reqId: string;
            method: string;
            ms: number;
            time: number;
            pid: number;
          },
      );
    t.ok(
      lines.some((l) => l.keyId === keyId && l.route === '/process/task' && l.status === 200),
      'a request line with key id, route and status',
    );
    const one = lines[0]!;
    t.match(
      one,
      { level: 30, reqId: /^req-/, method: /^[A-Z]+$/, ms: Number, time: Number, pid: Number },
      'each line as pino writes them: level, time, pid, request id',
    );
    t.equal(new Set(lines.map((l) => l.reqId)).size, lines.length, 'every request has its own id');
    t.ok(
      lines.some((l) => l.keyId === keyId && l.status === 400),
      'refused requests are logged too',
    );
    t.notMatch(log, key.slice('apk_'.length + 17), 'no secret in the log');
  },
);
