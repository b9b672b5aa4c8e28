import '../setup/fixtures.js'; // fixtures under the OS temp dir (see there)
import { once } from 'node:events';
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import t from 'tap';
import { callDaemon, startDaemon, wfxIn } from '../helpers/cli.js';
import { eventually } from '../helpers/eventually.js';
import { POSTGRES_SKIP, startPostgres } from '../helpers/postgres.js';
import { needlesOf, scanBytes, scanDir } from '../helpers/secret-scan.js';

/*
 * Secrets for flows, end to end on a real daemon: a value set with `wfx secrets set` (sealed at
 * once), named `{secret.TOKEN}` in a serviceTask's header and body, reaches a local server as the
 * call goes out; what comes back holds `[secret TOKEN]` where the server echoed it; a value a
 * caller sends cannot pull the secret into a request; an environment without the value fails
 * the node with SECRET_NOT_FOUND; a flow that would copy a secret into variables is refused at
 * publish. After all that, no answer, log line, history file, journal or snapshot holds the
 * value, in any encoding; on PostgreSQL, no table and no dump. Mounted secret files
 * (`--secrets-dir`) back the values too, read at each use.
 */

const ORDERS = '5e6f7a8b-9c0d-4e1f-8a2b-3c4d5e6f7a8b';
const FLOW = `processId: ${ORDERS}
name: Reserve stock
nodes:
  start: { type: startEvent, next: reserve }
  reserve:
    type: serviceTask
    method: POST
    url: "{env.WAREHOUSE}/reserve"
    headers: { Authorization: "Bearer {secret.TOKEN}" }
    body: { note: "{note}", check: "{secret.TOKEN}" }
    resultVariable: reply
    next: done
  done: { type: endEvent }
`;

t.test('a serviceTask sends {secret.TOKEN}; nothing the daemon keeps or answers holds it', async (t) => {
  const token = `tok-${randomBytes(16).toString('hex')}`;
  const received: Array<{ authorization: string | undefined; body: string }> = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      received.push({ authorization: req.headers.authorization, body });
      // A server that echoes what it got: the token comes back in the answer.
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ echoed: req.headers.authorization, body: JSON.parse(body) as unknown }));
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const warehouse = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  const cwd = t.testdir({ 'reserve.yaml': FLOW });
  const { url } = await startDaemon(t, { cwd });
  const key = (await readFile(join(cwd, '.wfx', 'bootstrap.key'), 'utf8')).trim();
  const api = (method: string, path: string, body?: object) => callDaemon(url, key, method, path, body);
  const run = (args: string[], stdin?: string) => wfxIn(args, { cwd, ...(stdin !== undefined && { stdin }) });

  t.equal((await run(['env', 'set', 'WAREHOUSE', warehouse])).code, 0);
  t.equal((await run(['env', 'set', 'WAREHOUSE', warehouse, '--env', 'DEVELOPMENT'])).code, 0);
  const set = await run(['secrets', 'set', 'TOKEN', '--stdin'], `${token}\n`);
  t.equal(set.code, 0, set.stderr);
  t.equal(set.stdout, 'secret TOKEN set in PRODUCTION\n');
  const asArgument = await run(['secrets', 'set', 'TOKEN']);
  t.equal(asArgument.code, 2, 'no value: refused');
  t.match(asArgument.stderr, /--stdin, --from-file FILE or --from-env VAR \(never as an argument\)/);
  t.equal((await run(['flow', 'publish', 'reserve.yaml'])).code, 0);
  t.equal((await run(['flow', 'publish', 'reserve.yaml', '--env', 'DEVELOPMENT'])).code, 0);

  const ended = async (environment: string, data: object) => {
    const started = await api('POST', `/process/start?environment=${environment}`, { processId: ORDERS, data });
    t.equal(started.status, 200, JSON.stringify(started.body));
    const id = started.body.processInstanceId as string;
    let inst: Record<string, unknown> = {};
    await eventually(`${id} ended`, async () => {
      inst = (await api('GET', `/process/instance/${id}`)).body;
      return inst.state !== 'RUNNING';
    });
    return { id, inst };
  };

  // A caller's data that looks like a reference stays text: it cannot pull the secret in.
  const done = await ended('PRODUCTION', { note: '{secret.TOKEN}' });
  t.equal(done.inst.state, 'COMPLETED', JSON.stringify(done.inst));
  t.same(received, [
    { authorization: `Bearer ${token}`, body: JSON.stringify({ note: '{secret.TOKEN}', check: token }) },
  ]);
  t.match(
    (done.inst.data as { reply: unknown }).reply,
    {
      status: 200,
      body: { echoed: 'Bearer [secret TOKEN]', body: { note: '{secret.TOKEN}', check: '[secret TOKEN]' } },
    },
    'what came back holds the name where the server echoed the value',
  );

  const missing = await ended('DEVELOPMENT', { note: 'x' });
  t.equal(missing.inst.state, 'FAILED');
  t.match((missing.inst.data as { error: unknown }).error, {
    code: 'SECRET_NOT_FOUND',
    message: /secret TOKEN has no value in DEVELOPMENT/,
  });
  t.equal(received.length, 1, 'not attempted');

  await writeFile(join(cwd, 'dev-token'), 'dev-token-value\n');
  t.equal((await run(['secrets', 'set', 'TOKEN', '--env', 'DEVELOPMENT', '--from-file', 'dev-token'])).code, 0);
  const listed = await run(['secrets', 'list', '--json']);
  t.same(
    (JSON.parse(listed.stdout) as Array<Record<string, unknown>>).map(({ updatedAt: _at, ...rest }) => rest),
    [
      { name: 'TOKEN', organization: 'default', environment: 'PRODUCTION' },
      { name: 'TOKEN', organization: 'default', environment: 'DEVELOPMENT' },
    ],
    'names, never values, of both environments',
  );
  const development = JSON.parse(
    (await run(['secrets', 'list', '--env', 'DEVELOPMENT', '--json'])).stdout,
  ) as unknown[];
  t.equal(development.length, 1, 'one environment asked: its own');

  // Another organization's admin sees none of these, and sets only its own.
  const globex = (await api('POST', '/admin/api-keys', { name: 'g', role: 'admin', organization: 'globex' })).body
    .apiKey as string;
  const asGlobex = (method: string, path: string, body?: object) => callDaemon(url, globex, method, path, body);
  t.same((await asGlobex('GET', '/admin/secrets/values')).body.items, [], "another organization's: none listed");
  t.equal((await asGlobex('DELETE', '/admin/secrets/values/TOKEN')).status, 404, 'nor removed');
  const elsewhere = await asGlobex('PUT', '/admin/secrets/values/TOKEN', { value: 'x', organization: 'default' });
  t.equal(elsewhere.body.error, 'FORBIDDEN', 'nor set in another organization');
  const viewer = (await api('POST', '/admin/api-keys', { name: 'v', role: 'viewer', organization: 'default' })).body
    .apiKey as string;
  t.equal(
    (await callDaemon(url, viewer, 'GET', '/admin/secrets/values')).body.error,
    'FORBIDDEN',
    'a viewer reads none',
  );

  const copying = FLOW.replace(
    'next: done\n  done:',
    'next: copy\n  copy: { type: setVariable, variables: { t: "{secret.TOKEN}" }, next: done }\n  done:',
  );
  const refused = await api('POST', '/admin/flows', { source: copying });
  t.equal(refused.status, 400);
  t.match(refused.body, {
    error: 'FLOW_INVALID',
    details: { problems: [{ code: 'SECRET_NOT_ALLOWED', nodeId: 'copy', property: 'variables.t', line: 13 }] },
  });

  // Every answer about the run, then everything the daemon wrote.
  const answers = [
    JSON.stringify((await api('GET', `/process/instance/${done.id}`)).body),
    JSON.stringify((await api('GET', '/admin/audit')).body),
    JSON.stringify((await api('GET', '/admin/secrets/values')).body),
    // The execution's log, as its stream gives it.
    await (
      await fetch(`${url}/process/instance/${done.id}/logs?follow=false`, { headers: { 'x-api-key': key } })
    ).text(),
  ];
  t.match(answers[3], /reserve/, 'the log was read');
  for (const a of answers) t.notOk(a.includes(token), 'no answer holds the value');
  const gone = await run(['secrets', 'delete', 'TOKEN']);
  t.equal(gone.code, 0, gone.stderr);
  t.equal((await run(['daemon', 'stop'])).code, 0);
  const { findings, files } = scanDir(join(cwd, '.wfx'), needlesOf([token]));
  t.ok(files > 3, `${files} files of the data directory, its log, history and audit trail read`);
  t.same(findings, [], 'no file holds the value, in any encoding');
});

t.test('--secrets-dir: mounted files back the secrets, read at each use', async (t) => {
  const got: string[] = [];
  const server = createServer((req, res) => {
    got.push(req.headers.authorization ?? '');
    req.resume();
    res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const warehouse = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  const cwd = t.testdir({
    'reserve.yaml': FLOW,
    mounted: { TOKEN: 'dir-token-1\n', DEVELOPMENT: { TOKEN: 'dev-token' } },
  });
  const { url } = await startDaemon(t, { cwd, args: ['--secrets-dir', 'mounted'] });
  const key = (await readFile(join(cwd, '.wfx', 'bootstrap.key'), 'utf8')).trim();
  const api = (method: string, path: string, body?: object) => callDaemon(url, key, method, path, body);
  const run = (args: string[], stdin?: string) => wfxIn(args, { cwd, ...(stdin !== undefined && { stdin }) });
  for (const env of ['PRODUCTION', 'DEVELOPMENT']) {
    t.equal((await run(['env', 'set', 'WAREHOUSE', warehouse, '--env', env])).code, 0);
    t.equal((await run(['flow', 'publish', 'reserve.yaml', '--env', env])).code, 0);
  }
  const completed = async (environment: string) => {
    const started = await api('POST', `/process/start?environment=${environment}`, { processId: ORDERS, data: {} });
    const id = started.body.processInstanceId as string;
    let inst: Record<string, unknown> = {};
    await eventually(`${id} ended`, async () => {
      inst = (await api('GET', `/process/instance/${id}`)).body;
      return inst.state !== 'RUNNING';
    });
    t.equal(inst.state, 'COMPLETED', JSON.stringify(inst.data));
  };

  await completed('PRODUCTION');
  await writeFile(join(cwd, 'mounted', 'TOKEN'), 'dir-token-2\n'); // the platform rotates it
  await completed('PRODUCTION');
  await completed('DEVELOPMENT');
  t.equal((await run(['secrets', 'set', 'TOKEN', '--from-env', 'SET_TOKEN'], undefined)).code, 2, 'no such variable');
  const set = await wfxIn(['secrets', 'set', 'TOKEN', '--from-env', 'SET_TOKEN'], {
    cwd,
    env: { ...process.env, SET_TOKEN: 'api-token' },
  });
  t.equal(set.code, 0, set.stderr);
  await completed('PRODUCTION');
  t.same(
    got,
    ['Bearer dir-token-1', 'Bearer dir-token-2', 'Bearer dev-token', 'Bearer api-token'],
    'a value set over the API comes first',
  );
});

t.test('on PostgreSQL: no table and no dump holds the value, in any encoding', { skip: POSTGRES_SKIP }, async (t) => {
  const db = await startPostgres(t);
  const token = `tok-pg-${randomBytes(16).toString('hex')}`;
  const got: string[] = [];
  const server = createServer((req, res) => {
    got.push(req.headers.authorization ?? '');
    req.resume();
    res
      .writeHead(200, { 'content-type': 'application/json' })
      .end(JSON.stringify({ echoed: req.headers.authorization }));
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const cwd = t.testdir({ 'reserve.yaml': FLOW });
  const { url } = await startDaemon(t, { cwd, args: ['--store', db.url] });
  const key = (await readFile(join(cwd, '.wfx', 'bootstrap.key'), 'utf8')).trim();
  const api = (method: string, path: string, body?: object) => callDaemon(url, key, method, path, body);
  const run = (args: string[], stdin?: string) => wfxIn(args, { cwd, ...(stdin !== undefined && { stdin }) });
  t.equal(
    (await run(['env', 'set', 'WAREHOUSE', `http://127.0.0.1:${(server.address() as AddressInfo).port}`])).code,
    0,
  );
  t.equal((await run(['secrets', 'set', 'TOKEN', '--stdin'], token)).code, 0);
  t.equal((await run(['flow', 'publish', 'reserve.yaml'])).code, 0);
  const started = await api('POST', '/process/start', { processId: ORDERS, data: {} });
  const id = started.body.processInstanceId as string;
  await eventually(
    `${id} completed`,
    async () => (await api('GET', `/process/instance/${id}`)).body.state === 'COMPLETED',
  );
  t.same(got, [`Bearer ${token}`], 'the server got the value');
  t.equal((await run(['daemon', 'stop'])).code, 0);

  const needles = needlesOf([token]);
  const tables = await db.query<{ tablename: string }>(
    "SELECT tablename FROM pg_tables WHERE schemaname = 'public' ORDER BY tablename",
  );
  let sealed = 0;
  for (const { tablename } of tables) {
    const all = await db.query<{ row: string }>(`SELECT t::text AS row FROM ${tablename} t`);
    const text = Buffer.from(all.map((r) => r.row).join('\n'));
    sealed += (text.toString().match(/wfxenc:v1:/g) ?? []).length;
    t.same(scanBytes(text, tablename, needles), [], `${tablename}: no value`);
  }
  t.ok(sealed >= 1, 'the value is in the database, sealed');
  const dump = execFileSync('pg_dump', ['--dbname', db.url], { maxBuffer: 256 << 20 });
  t.same(scanBytes(dump, 'pg_dump', needles), [], 'pg_dump: no value');
  t.same(scanDir(join(cwd, '.wfx'), needles).findings, [], 'the data directory: no value');
});
