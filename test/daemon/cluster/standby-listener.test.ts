import { createServer as createHttpServer, type IncomingMessage, type Server } from 'node:http';
import { createServer } from 'node:net';
import t, { type Test } from 'tap';
import { StandbyListener, type StandbyOptions } from '../../../src/daemon/cluster/standby-listener.js';
import { answerStandbyMetrics, standbyRegistry } from '../../../src/daemon/cluster/standby-metrics.js';
import { isWfxError } from '../../../src/shared/errors.js';
import { eventually } from '../../helpers/eventually.js';

const listen = (port = 0, reason = 'daemon d1 (pid 7 on h) holds the lease', forward?: StandbyOptions['forward']) =>
  StandbyListener.listen({ host: '127.0.0.1', port, retryAfterSeconds: 4, reason, ...(forward && { forward }) });

/** A stand-in for the serving daemon: answers with what it was asked, or streams three events when told. */
async function servingDaemon(t: Test): Promise<{ url: string; seen: IncomingMessage[]; release: () => void }> {
  const seen: IncomingMessage[] = [];
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  const server: Server = createHttpServer((request, reply) => {
    seen.push(request);
    if (request.url === '/hang') return; // answers nothing: the caller gives up first
    if (request.url === '/stream') {
      reply.writeHead(200, { 'content-type': 'text/event-stream' });
      reply.write('id: 1\ndata: first\n\n');
      // The rest only once the test has read the first event through the standby: it streams.
      void released.then(() => reply.end('id: 2\ndata: second\n\nevent: end\ndata: {}\n\n'));
      return;
    }
    let body = '';
    request.on('data', (chunk: Buffer) => (body += chunk.toString()));
    request.on('end', () => {
      const text = JSON.stringify({ method: request.method, url: request.url, headers: request.headers, body });
      reply.writeHead(201, { 'content-type': 'application/json', 'x-served-by': 'the serving daemon' });
      reply.end(text);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => {
    release();
    server.closeAllConnections();
    return new Promise<void>((resolve) => server.close(() => resolve()));
  });
  return { url: `http://127.0.0.1:${(server.address() as { port: number }).port}`, seen, release };
}

t.test('health answers 503 standby and why; every other request 503 DAEMON_STANDBY with Retry-After', async (t) => {
  const standby = await listen();
  t.teardown(() => standby.close());

  const health = await fetch(`${standby.url}/health`);
  t.equal(health.status, 503, 'a load balancer sends nothing here');
  t.match(await health.json(), {
    status: 'standby',
    version: String,
    standby: { since: /^\d{4}-\d\d-\d\dT/, reason: 'daemon d1 (pid 7 on h) holds the lease' },
  });

  const start = await fetch(`${standby.url}/process/start`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': 'wfx_whatever' },
    body: JSON.stringify({ processId: 'p', data: { big: 'x'.repeat(100_000) } }),
  });
  t.equal(start.status, 503);
  t.equal(start.headers.get('retry-after'), '4');
  const body = (await start.json()) as { error: string; message: string; retryAfter: number };
  t.equal(body.error, 'DAEMON_STANDBY');
  t.match(body.message, /stands by; .*daemon d1 \(pid 7 on h\) holds the lease/);
  t.equal(body.retryAfter, 4);

  standby.standingBy('the database cannot be reached; trying again in 2 s');
  t.match(await (await fetch(`${standby.url}/health?x=1`)).json(), {
    standby: { reason: 'the database cannot be reached; trying again in 2 s' },
  });
  const head = await fetch(`${standby.url}/health`, { method: 'HEAD' });
  t.equal(head.status, 503, 'HEAD too');
});

t.test('close frees the port at once, for the daemon that takes it over', async (t) => {
  const standby = await listen();
  const port = standby.port;
  // A connection held open (keep-alive from a client) does not keep the port.
  await fetch(`${standby.url}/health`);
  await standby.close();
  const again = await listen(port);
  t.equal(again.port, port);
  await again.close();
});

t.test('a port in use is PORT_IN_USE, as the daemon says it', async (t) => {
  const other = createServer();
  await new Promise<void>((resolve) => other.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => other.close(() => resolve())));
  const port = (other.address() as { port: number }).port;
  const err = await listen(port).catch((e: unknown) => e);
  t.ok(isWfxError(err) && err.code === 'PORT_IN_USE', 'PORT_IN_USE');
  t.match((err as Error).message, new RegExp(`127\\.0\\.0\\.1:${port}`));
});

t.test('forwards every request to the serving daemon, as it came, and its answer back as it comes', async (t) => {
  const target = await servingDaemon(t);
  const standby = await listen(0, 'daemon d1 serves', { id: 'd2', target: () => target.url });
  t.teardown(() => standby.close());

  const health = await fetch(`${standby.url}/health`);
  t.equal(health.status, 200, 'a standby that forwards is one a load balancer may send to');
  t.match(await health.json(), {
    status: 'standby',
    standby: { reason: 'daemon d1 serves', forwardingTo: target.url },
  });

  const res = await fetch(`${standby.url}/process/start?x=1`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': 'wfx_secret', 'x-forwarded-for': '10.1.2.3' },
    body: JSON.stringify({ processId: 'p', data: { n: 1 } }),
  });
  t.equal(res.status, 201, "the serving daemon's status");
  t.equal(res.headers.get('x-served-by'), 'the serving daemon', 'and headers');
  const echoed = (await res.json()) as { method: string; url: string; headers: Record<string, string>; body: string };
  t.equal(echoed.method, 'POST');
  t.equal(echoed.url, '/process/start?x=1', 'path and query as they came');
  t.equal(echoed.body, JSON.stringify({ processId: 'p', data: { n: 1 } }), 'the body');
  t.equal(echoed.headers['x-api-key'], 'wfx_secret', "the caller's credential");
  t.equal(echoed.headers['x-wfx-forwarded-by'], 'd2', 'the hop, named');
  t.equal(echoed.headers['x-forwarded-for'], '10.1.2.3, 127.0.0.1', 'and who asked');
  t.equal(echoed.headers.host, new URL(target.url).host);

  const stream = await fetch(`${standby.url}/stream`);
  const reader = stream.body!.getReader();
  const first = new TextDecoder().decode((await reader.read()).value);
  t.match(first, /data: first/, 'an event arrives while the stream is still open');
  target.release();
  let rest = '';
  for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read())
    rest += new TextDecoder().decode(chunk.value);
  t.match(rest, /data: second[\s\S]*event: end/, 'and the rest when it comes');
});

t.test('a request forwarded already is not forwarded again: one hop', async (t) => {
  const target = await servingDaemon(t);
  const standby = await listen(0, 'daemon d1 serves', { id: 'd2', target: () => target.url });
  t.teardown(() => standby.close());
  const res = await fetch(`${standby.url}/process/list`, { headers: { 'x-wfx-forwarded-by': 'd3' } });
  t.equal(res.status, 503);
  t.match(await res.json(), { error: 'DAEMON_STANDBY', message: /forwarded to it already/ });
  t.equal(target.seen.length, 0, 'the serving daemon was not asked');
});

t.test('a serving daemon that cannot be reached: 503 DAEMON_STANDBY, and it is looked up again', async (t) => {
  // A port that was free a moment ago: nothing listens there.
  const gone = createServer();
  await new Promise<void>((resolve) => gone.listen(0, '127.0.0.1', resolve));
  const port = (gone.address() as { port: number }).port;
  await new Promise<void>((resolve) => gone.close(() => resolve()));
  const unreachable: string[] = [];
  const standby = await listen(0, 'daemon d1 serves', {
    id: 'd2',
    target: () => `http://127.0.0.1:${port}`,
    unreachable: (url) => unreachable.push(url),
  });
  t.teardown(() => standby.close());
  const res = await fetch(`${standby.url}/process/list`);
  t.equal(res.status, 503);
  t.equal(res.headers.get('retry-after'), '4');
  t.match(await res.json(), {
    error: 'DAEMON_STANDBY',
    message: new RegExp(`127\\.0\\.0\\.1:${port}, cannot be reached`),
  });
  t.same(unreachable, [`http://127.0.0.1:${port}`]);
});

t.test('with no daemon to forward to, health is 503 and calls are DAEMON_STANDBY', async (t) => {
  let target: string | null = null;
  const served = await servingDaemon(t);
  const standby = await listen(0, 'a takeover is under way', { id: 'd2', target: () => target });
  t.teardown(() => standby.close());
  t.equal((await fetch(`${standby.url}/health`)).status, 503);
  t.equal((await fetch(`${standby.url}/process/list`)).status, 503);
  target = served.url;
  t.equal((await fetch(`${standby.url}/process/list`)).status, 201, 'forwarded once one serves');
});

t.test('a caller that gives up ends its forwarded request, and is not taken for an unreachable daemon', async (t) => {
  const target = await servingDaemon(t);
  const unreachable: string[] = [];
  const standby = await listen(0, 'daemon d1 serves', {
    id: 'd2',
    target: () => target.url,
    unreachable: (url) => unreachable.push(url),
  });
  t.teardown(() => standby.close());
  const caller = new AbortController();
  const asked = fetch(`${standby.url}/hang`, { signal: caller.signal }).catch((err: Error) => err);
  const upstream = await eventually('the serving daemon has the request', () => target.seen[0]);
  // Its 'aborted' error is how the standby ends it: only the close is waited for.
  upstream.on('error', () => undefined);
  let ended = false;
  upstream.once('close', () => (ended = true));
  caller.abort();
  await eventually('the forwarded request ends with its caller', () => ended);
  t.match(await asked, { name: 'AbortError' });
  t.same(unreachable, [], 'the serving daemon is not looked up again');
});

t.test("GET /metrics is the standby's own, for the scraper token only; the rest is forwarded", async (t) => {
  const serving = await servingDaemon(t);
  let behind: number | null = null;
  const registry = standbyRegistry({ behindEntries: () => behind });
  const token = 'scraper-token-0123456789';
  const standby = await StandbyListener.listen({
    host: '127.0.0.1',
    port: 0,
    retryAfterSeconds: 4,
    reason: 'standing by',
    forward: { id: 'd2', target: () => serving.url },
    metrics: (request, reply) => answerStandbyMetrics(registry, { open: false, token }, request, reply),
  });
  t.teardown(() => standby.close());
  const scrape = (authorization?: string) =>
    fetch(`${standby.url}/metrics`, { headers: authorization === undefined ? {} : { authorization } });

  for (const [what, authorization] of [
    ['no credential', undefined],
    ['a wrong token', 'Bearer scraper-token-wrong-0000'],
    ['a key', undefined],
  ] as const) {
    const res =
      what === 'a key'
        ? await fetch(`${standby.url}/metrics`, { headers: { 'x-api-key': 'wfx_k' } })
        : await scrape(authorization);
    t.equal(res.status, 401, what);
    t.equal(((await res.json()) as { error: string }).error, 'UNAUTHORIZED', `${what}: its code`);
  }
  const unknown = await scrape(`Bearer ${token}`);
  t.equal(unknown.status, 200);
  const text = await unknown.text();
  t.match(text, /^wfx_pg_replay_lag_entries nan$/im, 'NaN before the copy is registered');
  t.match(text, /^wfx_store_lease_held 0$/m);
  t.match(text, /^wfx_store_partitions_held 0$/m);
  behind = 42;
  t.match(await (await scrape(`Bearer ${token}`)).text(), /^wfx_pg_replay_lag_entries 42$/m, 'read when scraped');
  t.equal(serving.seen.length, 0, 'no scrape reached the serving daemon');
  t.equal((await fetch(`${standby.url}/process/list`)).status, 201, 'other requests are forwarded');
});
