import t, { type Test } from 'tap';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { callHttp } from '../../../src/daemon/engine/work/http.js';
import { DEFAULT_RETRY, type HttpCall } from '../../../src/daemon/outbound/http-request.js';

type Handler = (req: IncomingMessage, res: ServerResponse, body: string, n: number) => void;

/** A local server on 127.0.0.1; `requests` counts what it received. Closed at the test's teardown. */
async function serve(t: Test, handler: Handler): Promise<{ url: string; requests: () => number }> {
  let n = 0;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => handler(req, res, Buffer.concat(chunks).toString('utf8'), ++n));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, requests: () => n };
}

const fast = { maxAttempts: 3, initialIntervalMs: 10, backoff: 2 };

function json(res: ServerResponse, status: number, value: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', ...headers });
  res.end(JSON.stringify(value));
}

t.test('DEFAULT_RETRY', async (t) => {
  t.same(DEFAULT_RETRY, { maxAttempts: 3, initialIntervalMs: 1000, backoff: 2, maxIntervalMs: 60000 });
});

t.test('GET with query and headers; the JSON response is parsed', async (t) => {
  const srv = await serve(t, (req, res) => {
    const u = new URL(req.url!, 'http://x');
    json(
      res,
      200,
      {
        method: req.method,
        path: u.pathname,
        a: u.searchParams.getAll('a'),
        q: u.searchParams.get('q'),
        n: u.searchParams.get('n'),
        o: u.searchParams.get('o'),
        skipped: u.searchParams.has('skipped'),
        keep: u.searchParams.get('keep'),
        token: req.headers['x-token'],
      },
      { 'X-Custom': 'Yes' },
    );
  });
  const r = await callHttp({
    method: 'get',
    url: `${srv.url}/items?keep=1`,
    headers: { 'X-Token': 'secret' },
    query: { a: ['1', 2], q: 'héllo wörld&x', n: 5, o: { k: 'v' }, skipped: null },
    timeoutMs: 5000,
    retry: fast,
  });
  t.ok(r.ok, JSON.stringify(r));
  if (!r.ok) return;
  const v = r.value as { status: number; headers: Record<string, string>; body: unknown };
  t.equal(v.status, 200);
  t.equal(v.headers['x-custom'], 'Yes');
  t.match(v.headers['content-type'], /^application\/json/);
  t.same(v.body, {
    method: 'GET',
    path: '/items',
    a: ['1', '2'],
    q: 'héllo wörld&x',
    n: '5',
    o: '{"k":"v"}',
    skipped: false,
    keep: '1',
    token: 'secret',
  });
  t.match(
    r.logs,
    [/^GET http:\/\/127\.0\.0\.1:\d+\/items\?keep=1&a=1&a=2&q=h%C3%A9llo.*&n=5&o=.* → 200 in \d+ ms$/],
    'one line: method, address, status, time',
  );
  t.equal(r.logs?.length, 1);
  t.equal(srv.requests(), 1);
});

t.test('POST with a JSON body is echoed; +json is parsed too', async (t) => {
  const srv = await serve(t, (req, res, body) => {
    res.writeHead(201, { 'content-type': 'application/problem+json' });
    res.end(JSON.stringify({ got: JSON.parse(body), type: req.headers['content-type'] }));
  });
  const r = await callHttp({
    method: 'POST',
    url: `${srv.url}/echo`,
    body: { x: 1, list: [true, null] },
    timeoutMs: 5000,
    retry: fast,
  });
  t.ok(r.ok, JSON.stringify(r));
  if (!r.ok) return;
  const v = r.value as { status: number; body: unknown };
  t.equal(v.status, 201);
  t.same(v.body, { got: { x: 1, list: [true, null] }, type: 'application/json' });
});

t.test('a string body is sent as is, with the given content-type', async (t) => {
  const srv = await serve(t, (req, res, body) => json(res, 200, { body, type: req.headers['content-type'] }));
  const r = await callHttp({
    method: 'PUT',
    url: srv.url,
    headers: { 'Content-Type': 'text/csv' },
    body: 'a,b\n1,2',
    timeoutMs: 5000,
    retry: fast,
  });
  t.ok(r.ok);
  if (r.ok) t.same((r.value as { body: unknown }).body, { body: 'a,b\n1,2', type: 'text/csv' });
});

t.test('a text response is returned as text; invalid JSON too', async (t) => {
  const srv = await serve(t, (req, res) => {
    if (req.url === '/bad-json') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{not json');
    } else {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end('hello');
    }
  });
  const r = await callHttp({ method: 'GET', url: `${srv.url}/text`, timeoutMs: 5000, retry: fast });
  t.ok(r.ok);
  if (r.ok) t.equal((r.value as { body: unknown }).body, 'hello');
  const r2 = await callHttp({ method: 'GET', url: `${srv.url}/bad-json`, timeoutMs: 5000, retry: fast });
  t.ok(r2.ok);
  if (r2.ok) t.equal((r2.value as { body: unknown }).body, '{not json');
});

t.test('503 then 200: ok after 2 attempts, the retry is logged and reported', async (t) => {
  const srv = await serve(t, (_req, res, _body, n) => {
    if (n === 1) {
      res.writeHead(503, { 'content-type': 'text/plain' });
      res.end('busy');
    } else json(res, 200, { n });
  });
  const retries: { attempt: number; reason: string; delayMs: number }[] = [];
  const r = await callHttp(
    { method: 'GET', url: srv.url, timeoutMs: 5000, retry: fast },
    { onRetry: (info) => retries.push(info) },
  );
  t.ok(r.ok, JSON.stringify(r));
  t.equal(srv.requests(), 2);
  if (r.ok) t.same((r.value as { body: unknown }).body, { n: 2 });
  t.same(retries, [{ attempt: 1, reason: 'HTTP 503', delayMs: 10 }]);
  t.equal(r.logs?.[0], 'attempt 1: HTTP 503, retrying in 10ms');
  t.match(r.logs?.[1], / → 200 in \d+ ms \(attempt 2\)$/);
});

t.test('429 with Retry-After: 1 overrides the backoff delay', async (t) => {
  const srv = await serve(t, (_req, res, _body, n) => {
    if (n === 1) {
      res.writeHead(429, { 'retry-after': '1' });
      res.end('slow down');
    } else json(res, 200, { ok: true });
  });
  const delays: number[] = [];
  const r = await callHttp(
    { method: 'GET', url: srv.url, timeoutMs: 5000, retry: fast },
    { onRetry: (info) => delays.push(info.delayMs) },
  );
  t.ok(r.ok, JSON.stringify(r));
  t.same(delays, [1000]);
  t.equal(srv.requests(), 2);
});

t.test('a Retry-After HTTP date in the past means no wait', async (t) => {
  const srv = await serve(t, (_req, res, _body, n) => {
    if (n === 1) {
      res.writeHead(503, { 'retry-after': 'Wed, 21 Oct 2015 07:28:00 GMT' });
      res.end();
    } else json(res, 200, {});
  });
  const delays: number[] = [];
  const r = await callHttp(
    { method: 'GET', url: srv.url, timeoutMs: 5000, retry: { maxAttempts: 2, initialIntervalMs: 60_000, backoff: 2 } },
    { onRetry: (info) => delays.push(info.delayMs) },
  );
  t.ok(r.ok);
  t.same(delays, [0]);
});

t.test('the backoff grows exponentially and is capped by maxIntervalMs', async (t) => {
  const srv = await serve(t, (_req, res) => {
    res.writeHead(500);
    res.end();
  });
  const delays: number[] = [];
  const r = await callHttp(
    {
      method: 'GET',
      url: srv.url,
      timeoutMs: 5000,
      retry: { maxAttempts: 5, initialIntervalMs: 5, backoff: 3, maxIntervalMs: 50 },
    },
    { onRetry: (info) => delays.push(info.delayMs) },
  );
  t.notOk(r.ok);
  t.same(delays, [5, 15, 45, 50]);
});

t.test('no answer within the timeout: HTTP_TIMEOUT', async (t) => {
  const srv = await serve(t, () => {
    /* never answers */
  });
  const r = await callHttp({
    method: 'GET',
    url: srv.url,
    timeoutMs: 100,
    retry: { maxAttempts: 1, initialIntervalMs: 10, backoff: 2 },
  });
  t.notOk(r.ok);
  if (r.ok) return;
  t.equal(r.code, 'HTTP_TIMEOUT');
  t.match(r.message, /no answer within 100ms/);
  t.equal(r.logs?.length, 1);
  t.equal(srv.requests(), 1);
});

t.test('a timeout is retried', async (t) => {
  const srv = await serve(t, (_req, res, _body, n) => {
    if (n > 1) json(res, 200, { n });
  });
  const r = await callHttp({ method: 'GET', url: srv.url, timeoutMs: 100, retry: fast });
  t.ok(r.ok, JSON.stringify(r));
  t.equal(srv.requests(), 2);
  t.match(r.logs?.[0], /^attempt 1: timeout/);
});

t.test('404: HTTP_404 without a retry, with an excerpt of the body', async (t) => {
  const srv = await serve(t, (_req, res) => {
    res.writeHead(404, { 'content-type': 'text/plain' });
    res.end(`no such thing ${'x'.repeat(1000)}`);
  });
  const r = await callHttp({ method: 'delete', url: `${srv.url}/things/1?token=secret`, timeoutMs: 5000, retry: fast });
  t.notOk(r.ok);
  if (r.ok) return;
  t.equal(r.code, 'HTTP_404');
  t.match(r.message, `DELETE ${srv.url}/things/1`);
  t.notMatch(r.message, /secret/);
  t.match(r.message, /no such thing x/);
  t.ok(r.message.length < 400, 'the body excerpt is short');
  t.equal(srv.requests(), 1);
  t.equal(r.logs?.length, 1);
});

t.test('500 every time: HTTP_500 after exactly maxAttempts requests', async (t) => {
  const srv = await serve(t, (_req, res) => {
    res.writeHead(500);
    res.end('boom');
  });
  const r = await callHttp({ method: 'GET', url: srv.url, timeoutMs: 5000, retry: fast });
  t.notOk(r.ok);
  if (r.ok) return;
  t.equal(r.code, 'HTTP_500');
  t.match(r.message, /boom/);
  t.equal(srv.requests(), 3);
  t.same(r.logs, [
    'attempt 1: HTTP 500, retrying in 10ms',
    'attempt 2: HTTP 500, retrying in 20ms',
    'attempt 3: HTTP 500, giving up',
  ]);
});

t.test('acceptStatus [404] makes a 404 ok (and a 200 not)', async (t) => {
  const srv = await serve(t, (req, res) => json(res, req.url === '/missing' ? 404 : 200, { url: req.url }));
  const r = await callHttp({
    method: 'GET',
    url: `${srv.url}/missing`,
    timeoutMs: 5000,
    retry: fast,
    acceptStatus: [404],
  });
  t.ok(r.ok);
  if (r.ok)
    t.same(r.value, { status: 404, headers: (r.value as { headers: unknown }).headers, body: { url: '/missing' } });
  const r2 = await callHttp({
    method: 'GET',
    url: `${srv.url}/here`,
    timeoutMs: 5000,
    retry: fast,
    acceptStatus: [404],
  });
  t.notOk(r2.ok);
  if (!r2.ok) t.equal(r2.code, 'HTTP_200');
});

t.test('an accepted 3xx is returned instead of followed', async (t) => {
  const srv = await serve(t, (req, res) => {
    if (req.url === '/old') {
      res.writeHead(302, { location: '/new' });
      res.end();
    } else json(res, 200, { url: req.url });
  });
  const followed = await callHttp({ method: 'GET', url: `${srv.url}/old`, timeoutMs: 5000, retry: fast });
  t.ok(followed.ok);
  if (followed.ok) t.same((followed.value as { body: unknown }).body, { url: '/new' });
  const kept = await callHttp({
    method: 'GET',
    url: `${srv.url}/old`,
    timeoutMs: 5000,
    retry: fast,
    acceptStatus: ['2xx', '3xx'],
  });
  t.ok(kept.ok);
  if (kept.ok) {
    const v = kept.value as { status: number; headers: Record<string, string> };
    t.equal(v.status, 302);
    t.equal(v.headers.location, '/new');
  }
});

t.test('connection refused: HTTP_NETWORK after maxAttempts', async (t) => {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  const retries: number[] = [];
  const r = await callHttp(
    {
      method: 'GET',
      url: `http://127.0.0.1:${port}/x`,
      timeoutMs: 5000,
      retry: { maxAttempts: 3, initialIntervalMs: 1, backoff: 1 },
    },
    { onRetry: (info) => retries.push(info.attempt) },
  );
  t.notOk(r.ok);
  if (r.ok) return;
  t.equal(r.code, 'HTTP_NETWORK');
  t.match(r.message, /ECONNREFUSED/);
  t.same(retries, [1, 2]);
  t.equal(r.logs?.length, 3);
});

t.test('a connection reset is a network error', async (t) => {
  const srv = await serve(t, (req) => req.socket.destroy());
  const r = await callHttp({
    method: 'GET',
    url: srv.url,
    timeoutMs: 5000,
    retry: { maxAttempts: 2, initialIntervalMs: 1, backoff: 1 },
  });
  t.notOk(r.ok);
  if (!r.ok) t.equal(r.code, 'HTTP_NETWORK');
  t.equal(srv.requests(), 2);
});

t.test('bad requests: no attempt made', async (t) => {
  const base: HttpCall = { method: 'GET', url: 'http://127.0.0.1:1/', timeoutMs: 1000, retry: fast };
  const cases: [string, Partial<HttpCall>][] = [
    ['not a URL', { url: 'not a url' }],
    ['ftp scheme', { url: 'ftp://example.com/file' }],
    ['file scheme', { url: 'file:///etc/passwd' }],
    ['bad method', { method: 'GE T' }],
    ['bad header name', { headers: { 'bad header': 'x' } }],
    ['GET with a body', { body: { a: 1 } }],
    ['bad acceptStatus', { acceptStatus: ['2xy'] }],
    ['bad timeout', { timeoutMs: 0 }],
    ['bad maxAttempts', { retry: { maxAttempts: 0, initialIntervalMs: 1, backoff: 1 } }],
    ['unserialisable body', { method: 'POST', body: { n: 1n } }],
  ];
  for (const [name, change] of cases) {
    let retried = false;
    const r = await callHttp({ ...base, ...change }, { onRetry: () => (retried = true) });
    t.notOk(r.ok, name);
    if (!r.ok) t.equal(r.code, 'HTTP_BAD_REQUEST', `${name}: ${r.message}`);
    t.notOk(retried, `${name}: not retried`);
  }
});

t.test('a response larger than 10 MiB: HTTP_RESPONSE_TOO_LARGE', async (t) => {
  const chunk = Buffer.alloc(1024 * 1024, 'a');
  const srv = await serve(t, (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/plain' }); // chunked: no content-length to go by
    let sent = 0;
    const more = (): void => {
      while (sent < 11) {
        sent++;
        if (!res.write(chunk)) return void res.once('drain', more);
      }
      res.end();
    };
    more();
  });
  const r = await callHttp({ method: 'GET', url: srv.url, timeoutMs: 10_000, retry: fast });
  t.notOk(r.ok);
  if (!r.ok) t.equal(r.code, 'HTTP_RESPONSE_TOO_LARGE');
  t.equal(srv.requests(), 1, 'not retried');
});

t.test('abort during a backoff wait: CANCELLED promptly', async (t) => {
  t.setTimeout(20_000);
  const srv = await serve(t, (_req, res) => {
    res.writeHead(503);
    res.end();
  });
  const ac = new AbortController();
  const r = await callHttp(
    { method: 'GET', url: srv.url, timeoutMs: 5000, retry: { maxAttempts: 3, initialIntervalMs: 60_000, backoff: 2 } },
    // abort once the wait has begun (a minute long: the test would time out if it were not abortable)
    { signal: ac.signal, onRetry: () => setImmediate(() => ac.abort()) },
  );
  t.notOk(r.ok);
  if (!r.ok) {
    t.equal(r.code, 'CANCELLED');
    t.same(r.logs, ['attempt 1: HTTP 503, retrying in 60s']);
  }
  t.equal(srv.requests(), 1);
});

t.test('abort during a hanging request: CANCELLED promptly', async (t) => {
  t.setTimeout(20_000);
  const ac = new AbortController();
  const srv = await serve(t, () => ac.abort(new Error('node cancelled')));
  const r = await callHttp({ method: 'GET', url: srv.url, timeoutMs: 60_000, retry: fast }, { signal: ac.signal });
  t.notOk(r.ok);
  if (!r.ok) {
    t.equal(r.code, 'CANCELLED');
    t.match(r.message, /node cancelled/);
  }
  t.equal(srv.requests(), 1);
});

t.test('an already aborted signal: CANCELLED without a request', async (t) => {
  const srv = await serve(t, (_req, res) => json(res, 200, {}));
  const r = await callHttp(
    { method: 'GET', url: srv.url, timeoutMs: 5000, retry: fast },
    { signal: AbortSignal.abort() },
  );
  t.notOk(r.ok);
  if (!r.ok) t.equal(r.code, 'CANCELLED');
  t.equal(srv.requests(), 0);
});

t.test('a body that stops half way: HTTP_TIMEOUT (the timeout covers the body)', async (t) => {
  const srv = await serve(t, (_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.write('{"partial":');
  });
  const r = await callHttp({
    method: 'GET',
    url: srv.url,
    timeoutMs: 100,
    retry: { maxAttempts: 1, initialIntervalMs: 10, backoff: 2 },
  });
  t.notOk(r.ok);
  if (!r.ok) t.equal(r.code, 'HTTP_TIMEOUT');
});
