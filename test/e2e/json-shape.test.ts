import '../setup/fixtures.js'; // fixtures under the OS temp dir (see there)
import { once } from 'node:events';
import { readFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import t from 'tap';
import { killIfAlive, startDaemon, wfxIn } from '../helpers/cli.js';

// One real daemon over real HTTP for every case: untrusted JSON nested too deep never stops it
// and never leaves an execution stuck (issue #34, items 1, 2 and 9).

/** JSON text `depth` objects deep, `{"a":{"a":...}}`, built as text (JSON.stringify would recurse). */
const deepJson = (depth: number) => `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;

const FLOWS = {
  'poison.yaml': `processId: a1a1a1a1-0000-4000-8000-000000000001
name: Poison
nodes:
  start: { type: startEvent, next: ask }
  ask: { type: inputNode, inputType: textbox, formTitle: "More?", next: wrap }
  wrap: { type: setVariable, variables: { w: "{more}" }, next: done }
  done: { type: endEvent }
`,
  'call.yaml': `processId: a1a1a1a1-0000-4000-8000-000000000002
name: Deep call
nodes:
  start: { type: startEvent, next: call }
  call: { type: serviceTask, url: "{env.BASE}/deep", retry: { maxAttempts: 1 }, next: done }
  done: { type: endEvent }
`,
  'script.yaml': `processId: a1a1a1a1-0000-4000-8000-000000000003
name: Deep script
nodes:
  start: { type: startEvent, next: run }
  run: { type: scriptTask, script: "let o = 1; for (let i = 0; i < 5000; i++) o = { a: o }; return { o };", timeout: 20s, next: done }
  done: { type: endEvent }
`,
  'grow.yaml': `processId: a1a1a1a1-0000-4000-8000-000000000004
name: Grow
nodes:
  start: { type: startEvent, next: init }
  init: { type: setVariable, variables: { w: 0 }, next: grow }
  grow: { type: setVariable, variables: { w: { a: "{w}" } }, next: again }
  again: { type: ifElse, condition: "\${true}", then: grow, else: done }
  done: { type: endEvent }
`,
};

const cwd = t.testdir(FLOWS);
const info = await startDaemon(t, { cwd });
const run = (args: string[]) => wfxIn(args, { cwd });
const bootstrap = (await readFile(join(cwd, '.wfx', 'bootstrap.key'), 'utf8')).trim();

/** A request to the daemon with a raw JSON body; the answer's status and parsed body. */
async function call(apiKey: string, method: string, url: string, body?: string) {
  const res = await fetch(`${info.url}${url}`, {
    method,
    headers: { 'x-api-key': apiKey, ...(body !== undefined && { 'content-type': 'application/json' }) },
    body,
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

const healthy = async () => (await fetch(`${info.url}/health`)).status;

for (const file of Object.keys(FLOWS)) {
  const res = await run(['flow', 'publish', file]);
  if (res.code !== 0) throw new Error(`publish ${file}: ${res.stderr}`);
}
const makeKey = async (role: string) => {
  const res = await call(
    bootstrap,
    'POST',
    '/admin/api-keys',
    JSON.stringify({ name: role, role, organization: 'default' }),
  );
  if (res.status !== 201) throw new Error(JSON.stringify(res.body));
  return res.body.apiKey as string;
};
const operator = await makeKey('operator');

t.test(
  'a task answer nested 4,100 deep: 400 VALIDATION_ERROR naming the path; the daemon stays up and the node waits',
  async (t) => {
    const pid = 'a1a1a1a1-0000-4000-8000-000000000001';
    const started = await call(operator, 'POST', '/process/exec', JSON.stringify({ processId: pid }));
    t.equal(started.status, 200, JSON.stringify(started.body));
    const id = started.body.processInstanceId as string;
    const poison = `{"processInstanceId":${JSON.stringify(id)},"nodeId":"ask","action":"COMPLETE","data":{"inputValue":"x","more":${deepJson(4100)}}}`;
    for (let i = 0; i < 2; i++) {
      const answered = await call(operator, 'POST', '/process/task', poison);
      t.equal(answered.status, 400, `attempt ${i + 1}: 400`);
      t.match(answered.body, {
        error: 'VALIDATION_ERROR',
        details: { path: /^body\.data\.more(\.a)+$/, maxDepth: 64 },
      });
      t.equal(await healthy(), 200, `attempt ${i + 1}: the daemon is healthy`);
    }
    const inst = await call(operator, 'GET', `/process/instance/${id}`);
    t.match(
      inst.body,
      { stateCd: 0, nodes: [{ nodeId: 'start' }, { nodeId: 'ask', statusCd: 1 }] },
      'the node still waits',
    );
    const fine = await call(
      operator,
      'POST',
      '/process/task',
      JSON.stringify({
        processInstanceId: id,
        nodeId: 'ask',
        action: 'COMPLETE',
        data: { inputValue: 'x', more: { b: [1, { c: 2 }] } },
      }),
    );
    t.equal(fine.status, 200, 'an answer of ordinary shape is taken');
    t.match((await call(operator, 'GET', `/process/instance/${id}`)).body, {
      stateCd: 1,
      data: { w: { b: [1, { c: 2 }] } },
    });
  },
);

t.test('start data and event data nested too deep: 400 VALIDATION_ERROR', async (t) => {
  const start = await call(
    operator,
    'POST',
    '/process/exec',
    `{"processId":"a1a1a1a1-0000-4000-8000-000000000001","data":{"x":${deepJson(4100)}}}`,
  );
  t.match(start, { status: 400, body: { error: 'VALIDATION_ERROR', details: { path: /^body\.data\.x/ } } });
  const event = await call(
    operator,
    'POST',
    '/process/event',
    `{"eventType":"order.paid","correlationKey":"k","data":{"x":${deepJson(4100)}},"ttlSeconds":60}`,
  );
  t.match(event, { status: 400, body: { error: 'VALIDATION_ERROR', details: { path: /^body\.data\.x/ } } });
  const justOver = await call(
    operator,
    'POST',
    '/process/exec',
    `{"processId":"a1a1a1a1-0000-4000-8000-000000000001","data":{"x":${deepJson(63)}}}`,
  );
  t.match(
    justOver,
    { status: 400, body: { error: 'VALIDATION_ERROR', details: { maxDepth: 64 } } },
    'one level past 64 is refused',
  );
  const atLimit = await call(
    operator,
    'POST',
    '/process/exec',
    `{"processId":"a1a1a1a1-0000-4000-8000-000000000001","data":{"x":${deepJson(62)}}}`,
  );
  t.equal(atLimit.status, 200, 'a body exactly 64 deep is taken');
  t.equal(await healthy(), 200);
});

t.test(
  'a serviceTask answered with JSON 5,000 deep: the node fails HTTP_RESPONSE_INVALID, the execution Failed',
  async (t) => {
    const srv = createServer((_req, res) =>
      res.writeHead(200, { 'content-type': 'application/json' }).end(deepJson(5000)),
    );
    srv.listen(0, '127.0.0.1');
    await once(srv, 'listening');
    t.teardown(() => srv.close());
    t.equal((await run(['env', 'set', 'BASE', `http://127.0.0.1:${(srv.address() as AddressInfo).port}`])).code, 0);
    const res = await run(['run', 'a1a1a1a1-0000-4000-8000-000000000002', '--wait', '--json']);
    t.equal(res.code, 1, 'Failed');
    const inst = JSON.parse(res.stdout) as { processInstanceId: string };
    t.match(inst, { stateCd: 2, data: { error: { code: 'HTTP_RESPONSE_INVALID', nodeId: 'call' } } });
    const logs = await run(['logs', inst.processInstanceId]);
    t.match(logs.stdout, /ERROR .*HTTP_RESPONSE_INVALID/, 'the failure is in the execution log');
    t.equal(await healthy(), 200);
  },
);

t.test('a script returning an object 5,000 deep: the node fails SCRIPT_RESULT_INVALID', async (t) => {
  const res = await run(['run', 'a1a1a1a1-0000-4000-8000-000000000003', '--wait', '--json']);
  t.equal(res.code, 1, 'Failed');
  t.match(JSON.parse(res.stdout), { stateCd: 2, data: { error: { code: 'SCRIPT_RESULT_INVALID', nodeId: 'run' } } });
  t.equal(await healthy(), 200);
});

t.test('a loop nesting a variable in itself fails its node with DATA_TOO_DEEP; the daemon keeps running', async (t) => {
  const res = await run(['run', 'a1a1a1a1-0000-4000-8000-000000000004', '--wait', '--json']);
  t.equal(res.code, 1, 'Failed');
  t.match(JSON.parse(res.stdout), { stateCd: 2, data: { error: { code: 'DATA_TOO_DEEP', nodeId: 'grow' } } });
  t.equal(await healthy(), 200);
  const again = await call(
    operator,
    'POST',
    '/process/exec',
    JSON.stringify({ processId: 'a1a1a1a1-0000-4000-8000-000000000001' }),
  );
  t.equal(again.status, 200, 'and starts the next execution');
});

t.test('--max-json-depth sets the limit; a value that is not a whole number from 1 is a usage error', async (t) => {
  const dataDir = join(t.testdir(), 'data');
  const bad = await wfxIn(['daemon', 'start', '--port', '0', '--data-dir', dataDir, '--max-json-depth', '0']);
  t.equal(bad.code, 2, 'exit 2 (usage)');
  const started = await wfxIn([
    'daemon',
    'start',
    '--port',
    '0',
    '--data-dir',
    dataDir,
    '--json',
    '--max-json-depth',
    '3',
  ]);
  t.equal(started.code, 0, started.stderr);
  const small = JSON.parse(started.stdout) as { pid: number; url: string };
  t.teardown(async () => {
    await wfxIn(['daemon', 'stop', '--data-dir', dataDir]);
    killIfAlive(small.pid);
  });
  const key = (await readFile(join(dataDir, 'bootstrap.key'), 'utf8')).trim();
  const post = async (body: string) => {
    const res = await fetch(`${small.url}/admin/api-keys`, {
      method: 'POST',
      headers: { 'x-api-key': key, 'content-type': 'application/json' },
      body,
    });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  };
  t.match(
    await post('{"name":"k","role":"viewer","organization":"default","x":[[[1]]]}'),
    { status: 400, body: { error: 'VALIDATION_ERROR', details: { path: 'body.x[0][0]', maxDepth: 3 } } },
    '4 deep: refused',
  );
  t.match(
    await post('{"name":"k","role":"viewer","organization":"default","x":[[1]]}'),
    { status: 400, body: { error: 'VALIDATION_ERROR', details: { problems: Array } } },
    '3 deep: on to the schema, which refuses the unknown field',
  );
});
