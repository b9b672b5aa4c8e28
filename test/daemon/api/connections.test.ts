import { once } from 'node:events';
import type { IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { connect, type Socket } from 'node:net';
import t from 'tap';
import Fastify from 'fastify';
import {
  connectionLimits,
  limitConnections,
  requestTimeoutFor,
  serverTimeouts,
} from '../../../src/daemon/api/connections.js';
import { ERROR_CODES } from '../../../src/shared/errors.js';
import { apiHarness, type ApiHarness, type TestKey } from '../../helpers/api.js';
import { eventually } from '../../helpers/eventually.js';
import { readSse } from '../../helpers/sse.js';

/** A connection to the harness's server, with everything it received and whether it closed. */
interface Conn {
  readonly socket: Socket;
  /** What came in so far. */
  text(): string;
  readonly closed: Promise<void>;
  isClosed(): boolean;
}

async function open(port: number, localAddress = '127.0.0.1'): Promise<Conn> {
  const socket = connect({ port, host: '127.0.0.1', localAddress });
  const chunks: Buffer[] = [];
  let closed = false;
  socket.on('data', (c: Buffer) => chunks.push(c));
  socket.on('error', () => undefined); // one over the cap, or one that gives way, is reset
  const done = new Promise<void>((resolve) =>
    socket.once('close', () => {
      closed = true;
      resolve();
    }),
  );
  await once(socket, 'connect');
  return { socket, text: () => Buffer.concat(chunks).toString('utf8'), closed: done, isClosed: () => closed };
}

/** A connection opened once the server has taken it in (and closed whichever gave way to it). */
async function admitted(h: ApiHarness, port: number, localAddress = '127.0.0.1'): Promise<Conn> {
  const [conn] = await Promise.all([open(port, localAddress), once(h.app.server, 'connection')]);
  return conn;
}

/** Sends GET /health on `conn` and waits for its answer's status line: 200 while the connection is served. */
async function health(conn: Conn): Promise<string> {
  const before = conn.text().length;
  conn.socket.write('GET /health HTTP/1.1\r\nHost: x\r\n\r\n');
  return eventually(
    'an answer',
    () => /^HTTP\/1\.1 (\d+)/.exec(conn.text().slice(before))?.[1] ?? (conn.isClosed() && 'closed'),
  );
}

/** A lifecycle event stream (GET /events) on a connection of its own, once its head has come. */
async function stream(port: number, key: TestKey, localAddress = '127.0.0.1'): Promise<Conn> {
  const conn = await open(port, localAddress);
  conn.socket.write(`GET /events HTTP/1.1\r\nHost: x\r\nX-API-Key: ${key.apiKey}\r\n\r\n`);
  await eventually('the stream starts', () => conn.text().includes(':connected'));
  return conn;
}

async function listening(h: ApiHarness): Promise<number> {
  await h.app.listen({ host: '127.0.0.1', port: 0 });
  return (h.app.server.address() as AddressInfo).port;
}

/** Connections the server holds now. */
const held = (h: ApiHarness) =>
  new Promise<number>((resolve, reject) => h.app.server.getConnections((err, n) => (err ? reject(err) : resolve(n))));

t.test(
  'over --max-connections with every place busy: the next few are answered TOO_MANY_CONNECTIONS, the rest reset as accepted',
  async (t) => {
    // Two served; overflowConnections(2) = 1 more answered 503.
    const h = await apiHarness(t, {
      connections: { maxConnections: 2, headersTimeoutMs: 60_000 },
      heartbeatSeconds: 3600,
    });
    const port = await listening(h);
    const key = await h.key('operator', 'default');
    // Streams: requests in progress, which never give way.
    const a = await stream(port, key);
    const b = await stream(port, key);
    await eventually('two connections held', async () => (await held(h)) === 2);
    const over = await admitted(h, port);
    // The fourth is reset as accepted (a clean close would leave fetch waiting for ever).
    const dropped = connect(port, '127.0.0.1');
    let answer = '';
    dropped.on('data', (c: Buffer) => (answer += c.toString()));
    const [err] = (await once(dropped, 'error')) as [NodeJS.ErrnoException];
    t.equal(err.code, 'ECONNRESET', 'the fourth is reset as accepted');
    t.equal(answer, '', 'without an answer');
    // Bounded: a clean close leaves fetch waiting for ever.
    const refused = await fetch(`http://127.0.0.1:${port}/health`, { signal: AbortSignal.timeout(10_000) }).then(
      () => 'answered',
      (e: Error & { cause?: { code?: string } }) => e.cause?.code,
    );
    t.equal(refused, 'ECONNRESET', 'fetch fails at once, rather than waiting');

    over.socket.write('GET /health HTTP/1.1\r\nHost: x\r\n\r\n');
    await over.closed;
    const text = over.text();
    t.match(text, /^HTTP\/1\.1 503 /, '503');
    t.match(text, /\r\nconnection: close\r\n/i, 'closes the connection');
    t.match(text, /\r\nretry-after: 1\r\n/i, 'asks to retry after a second');
    const body = JSON.parse(text.slice(text.indexOf('\r\n\r\n') + 4)) as { error: string; retryAfter: number };
    t.equal(body.error, 'TOO_MANY_CONNECTIONS');
    t.equal(ERROR_CODES.TOO_MANY_CONNECTIONS.status, 503);
    t.equal(body.retryAfter, 1);

    t.notOk(a.isClosed() || b.isClosed(), 'the streams kept their places');
    // Once one of them is gone, a new connection is served.
    b.socket.destroy();
    await eventually('b is gone', async () => (await held(h)) === 1);
    const res = await fetch(`http://127.0.0.1:${port}/health`);
    t.equal(res.status, 200, 'a new connection within the cap is served');
    a.socket.destroy();
  },
);

t.test(
  'at the cap, a new connection takes the place of the one waiting longest; a stream keeps its place',
  async (t) => {
    const h = await apiHarness(t, {
      connections: { maxConnections: 3, headersTimeoutMs: 60_000 },
      heartbeatSeconds: 3600,
    });
    const port = await listening(h);
    const key = await h.key('operator', 'default');
    const events = await stream(port, key);
    const first = await admitted(h, port);
    const second = await admitted(h, port);
    second.socket.write('GET /heal'); // half a request: it has not sent a whole one either
    const third = await admitted(h, port);
    await first.closed;
    t.equal(first.text(), '', 'the connection that sent nothing for longest is reset, unanswered');
    t.equal(await health(third), '200', 'the new one is served');
    // second (accepted before third's answer) has waited longest now.
    const fourth = await admitted(h, port);
    await second.closed;
    t.equal(await health(fourth), '200');
    t.equal(await health(third), '200', 'third, idle after its answer, was not the one to go');
    const fifth = await admitted(h, port);
    await fourth.closed;
    t.equal(await health(fifth), '200', 'then the one idle longest goes: fourth');
    t.notOk(events.isClosed(), 'the stream kept its place throughout');

    // The stream is still live: an execution's start comes on it.
    const pid = await h.publish(`processId: AUTO
name: Wait
nodes:
  start: { type: startEvent, next: ask }
  ask: { type: inputNode, inputType: textbox, next: done }
  done: { type: endEvent }
`);
    const inst = await h.engine.start({ processId: pid, organization: 'default' });
    await eventually('the start comes on the stream', () => events.text().includes(inst.processInstanceId));
    for (const c of [events, third, fifth]) c.socket.destroy();
  },
);

t.test('a flood from one address gives way to another, and gets no new place while the other is there', async (t) => {
  const h = await apiHarness(t, { connections: { maxConnections: 4, headersTimeoutMs: 60_000 } });
  const port = await listening(h);
  const flood: Conn[] = [];
  for (let i = 0; i < 4; i++) flood.push(await admitted(h, port, '127.0.0.2'));
  flood.push(await admitted(h, port, '127.0.0.2'));
  await flood[0]!.closed;
  t.pass('alone, the flood takes the place of its own oldest');
  const client = await admitted(h, port, '127.0.0.1');
  await flood[1]!.closed;
  t.pass("the flood's oldest gave way to 127.0.0.1");
  // At its share with another address there, the flood's next connection is only answered 503 ...
  const over = await admitted(h, port, '127.0.0.2');
  t.match(await health(over), '503');
  await over.closed;
  await eventually('the server let go of it', async () => (await held(h)) === 4);
  // ... and once that margin is taken, reset as it is accepted.
  const margin = await admitted(h, port, '127.0.0.2');
  const dropped = connect({ port, host: '127.0.0.1', localAddress: '127.0.0.2' });
  const [err] = (await once(dropped, 'error')) as [NodeJS.ErrnoException];
  t.equal(err.code, 'ECONNRESET', 'reset as accepted');
  t.equal(await health(client), '200', '127.0.0.1 kept its place, idle as it was');
  // A second client from 127.0.0.1 takes another of the flood's places.
  const second = await admitted(h, port, '127.0.0.1');
  await flood[2]!.closed;
  t.equal(await health(second), '200');
  t.notOk(flood[3]!.isClosed() || flood[4]!.isClosed(), 'the flood keeps its share');
  for (const c of [...flood, margin, client, second]) c.socket.destroy();
});

t.test(
  'connections never hold more sockets than the cap and its overflow, under a flood from two addresses',
  async (t) => {
    const max = 8;
    const h = await apiHarness(t, { connections: { maxConnections: max, headersTimeoutMs: 60_000 } });
    const port = await listening(h);
    // Sockets the server holds open (a socket closed to make room is destroyed, its descriptor freed, at once).
    const live = new Set<Socket>();
    let most = 0;
    h.app.server.on('connection', (socket: Socket) => {
      if (!socket.destroyed) live.add(socket);
      socket.once('close', () => live.delete(socket));
      for (const s of live) if (s.destroyed) live.delete(s);
      most = Math.max(most, live.size);
    });
    const floods = Array.from({ length: 200 }, () => open(port, '127.0.0.2').catch(() => null));
    // One at a time, each on a connection of its own, while the flood comes in.
    const answers: number[] = [];
    for (let i = 0; i < 10; i++)
      answers.push(
        await fetch(`http://127.0.0.1:${port}/health`, { headers: { connection: 'close' } }).then(
          (r) => r.status,
          () => 0,
        ),
      );
    for (const c of await Promise.all(floods)) c?.socket.destroy();
    t.ok(most <= max + 1, `at most ${most} sockets held (cap ${max}, overflow 1)`);
    t.ok(most >= max, 'the flood filled the cap');
    t.same(answers, Array(10).fill(200), '127.0.0.1 was served throughout');
  },
);

t.test('a request body that stops coming gives way; one still coming keeps its place; each is logged', async (t) => {
  const clock = { ms: 0 };
  const app = Fastify();
  let logged!: (line: string) => void;
  const line = new Promise<string>((resolve) => (logged = resolve));
  limitConnections(app, { maxConnections: 2, headersTimeoutMs: 1_000 }, logged, {
    now: () => clock.ms,
    logEveryMs: 50,
  });
  app.post('/upload', async (request) => ({ got: (request.body as { data: string }).data.length }));
  app.get('/health', async () => ({ status: 'ok' }));
  t.teardown(() => app.close());
  await app.listen({ host: '127.0.0.1', port: 0 });
  const port = (app.server.address() as AddressInfo).port;
  const body = JSON.stringify({ data: 'x'.repeat(100) });
  const head = `POST /upload HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`;
  /** Opens a connection and sends the head and the first `n` bytes of the body: the server's end of it once it has the head. */
  const upload = async (n: number) => {
    const conn = await open(port);
    const requested = once(app.server, 'request') as Promise<[IncomingMessage]>;
    conn.socket.write(head + body.slice(0, n));
    const [request] = await requested;
    return { conn, server: request.socket };
  };
  const moving = await upload(10);
  const stuck = await upload(10);
  const taken = () => once(app.server, 'connection');

  // Both bodies are looked at for the first time: neither has stopped yet, so the next is over the cap.
  const [over] = await Promise.all([open(port), taken()]);
  over.socket.write('GET /health HTTP/1.1\r\nHost: x\r\n\r\n');
  await over.closed;
  t.match(over.text(), /^HTTP\/1\.1 503 .*TOO_MANY_CONNECTIONS/s);

  clock.ms = 1_500;
  const before = moving.server.bytesRead;
  moving.conn.socket.write(body.slice(10, 20));
  await eventually('the server reads more of the moving body', () => moving.server.bytesRead > before);
  const [next] = await Promise.all([open(port), taken()]);
  await stuck.conn.closed;
  t.equal(stuck.conn.text(), '', 'the body that brought nothing for the headers timeout gave way, unanswered');
  t.equal(await health(next), '200', 'to the new connection');
  moving.conn.socket.write(body.slice(20));
  await eventually('the upload is answered', () => moving.conn.text().includes('"got":100'));
  t.notOk(moving.conn.isClosed(), 'the body still coming kept its place');
  t.match(
    await line,
    /1 closed to make room \(0 had sent no whole request, 0 idle after an answer, 1 with a request body that stopped coming\)/,
  );
  for (const c of [moving.conn, next]) c.socket.destroy();
});

t.test(
  'timeouts: a silent connection is closed without an answer, slow headers get 408, a stream in progress is kept',
  async (t) => {
    const h = await apiHarness(t, {
      connections: { headersTimeoutMs: 200, keepAliveTimeoutMs: 200 },
      heartbeatSeconds: 3600,
    });
    const port = await listening(h);
    const key = await h.key('operator', 'default');
    const pid = await h.publish(`processId: AUTO
name: Wait
nodes:
  start: { type: startEvent, next: ask }
  ask: { type: inputNode, inputType: textbox, next: done }
  done: { type: endEvent }
`);
    const inst = await h.engine.start({ processId: pid, organization: 'default' });
    // A log stream that follows the execution: a request in progress, idle on the wire.
    const stream = await fetch(`http://127.0.0.1:${port}/process/instance/${inst.processInstanceId}/logs?follow=true`, {
      headers: { 'x-api-key': key.apiKey },
    });
    t.equal(stream.status, 200);
    const events = readSse(stream);

    const silent = await open(port);
    const slow = await open(port);
    slow.socket.write('GET /health HTTP/1.1\r\nHost: x\r\n');
    const kept = await open(port);
    kept.socket.write('GET /health HTTP/1.1\r\nHost: x\r\n\r\n');
    await eventually('the keep-alive connection is answered', () => /^HTTP\/1\.1 200 /.test(kept.text()));

    await silent.closed;
    t.equal(silent.text(), '', 'a connection that sent nothing is closed without an answer');
    await slow.closed;
    t.match(slow.text(), /^HTTP\/1\.1 408 /, 'headers that never end: 408');
    t.match(JSON.parse(slow.text().slice(slow.text().indexOf('\r\n\r\n') + 4)), { error: 'REQUEST_TIMEOUT' });
    await kept.closed;
    t.match(
      kept.text(),
      /^HTTP\/1\.1 200 /,
      'a keep-alive connection idle past its timeout is closed after its answer',
    );

    // The stream outlived those timeouts: a live entry still arrives on it.
    await h.call(key, {
      method: 'POST',
      url: '/process/task',
      payload: {
        processInstanceId: inst.processInstanceId,
        nodeId: 'ask',
        action: 'COMPLETE',
        data: { inputValue: 'x' },
      },
    });
    let ended = false;
    for await (const ev of events) {
      if (ev.event === 'end') {
        ended = true;
        break;
      }
    }
    t.ok(ended, 'the stream ran to its end');
  },
);

t.test(
  'connectionLimits: the cap from the open-files limit, a warning when a cap given leaves no reserve',
  async (t) => {
    const warnings: string[] = [];
    const warn = (line: string) => warnings.push(line);
    t.same(connectionLimits({}, 256, warn), {
      maxConnections: 120,
      headersTimeoutMs: 5_000,
      requestTimeoutMs: 300_000,
    });
    t.equal(connectionLimits({ maxConnections: 50, headersTimeoutMs: 1_000 }, 256, warn).maxConnections, 50);
    t.same(warnings, [], 'no warning while the reserve is left');
    t.equal(connectionLimits({ maxConnections: 200 }, 256, warn).maxConnections, 200, 'a cap given is kept');
    t.equal(warnings.length, 1, 'but warned about');
    t.match(warnings[0], /--max-connections 200/);
    t.equal(connectionLimits({ maxConnections: 5_000 }, null, warn).maxConnections, 5_000);
    t.equal(warnings.length, 1, 'no warning where the limit is unknown');
    t.equal(requestTimeoutFor(25 * 1024 * 1024), 300_000, '5 minutes for the default upload limit');
    t.equal(requestTimeoutFor(4096 * 1024 * 1024), 41_944_000, 'longer for a larger one: 100 KiB/s');
    t.same(serverTimeouts({ headersTimeoutMs: 1_000 }), {
      http: { headersTimeout: 1_000, connectionsCheckingInterval: 250 },
      keepAliveTimeout: 5_000,
      requestTimeout: 300_000,
    });
    t.same(
      serverTimeouts({ headersTimeoutMs: 600_000, requestTimeoutMs: 60_000 }).http,
      {
        headersTimeout: 60_000,
        connectionsCheckingInterval: 1_000,
      },
      'the headers timeout never over the request timeout (Node refuses it)',
    );
  },
);
