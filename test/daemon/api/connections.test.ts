import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { connect, type Socket } from 'node:net';
import t from 'tap';
import { connectionLimits, requestTimeoutFor, serverTimeouts } from '../../../src/daemon/api/connections.js';
import { ERROR_CODES } from '../../../src/shared/errors.js';
import { apiHarness, type ApiHarness } from '../../helpers/api.js';
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

async function open(port: number): Promise<Conn> {
  const socket = connect(port, '127.0.0.1');
  const chunks: Buffer[] = [];
  let closed = false;
  socket.on('data', (c: Buffer) => chunks.push(c));
  socket.on('error', () => undefined); // one over the cap is reset as accepted
  const done = once(socket, 'close').then(() => {
    closed = true;
  });
  await once(socket, 'connect');
  return { socket, text: () => Buffer.concat(chunks).toString('utf8'), closed: done, isClosed: () => closed };
}

async function listening(h: ApiHarness): Promise<number> {
  await h.app.listen({ host: '127.0.0.1', port: 0 });
  return (h.app.server.address() as AddressInfo).port;
}

/** Connections the server holds now. */
const held = (h: ApiHarness) =>
  new Promise<number>((resolve, reject) => h.app.server.getConnections((err, n) => (err ? reject(err) : resolve(n))));

t.test(
  'over --max-connections: the next few are answered TOO_MANY_CONNECTIONS, the rest reset as accepted',
  async (t) => {
    // Two served; overflowConnections(2) = 1 more answered 503.
    const h = await apiHarness(t, { connections: { maxConnections: 2, headersTimeoutMs: 60_000 } });
    const port = await listening(h);
    const a = await open(port);
    const b = await open(port);
    await eventually('two connections held', async () => (await held(h)) === 2);
    const over = await open(port);
    await eventually('the third held too', async () => (await held(h)) === 3);
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

    // The connections within the cap are served meanwhile.
    a.socket.write('GET /health HTTP/1.1\r\nHost: x\r\n\r\n');
    await eventually('a is answered', () => /^HTTP\/1\.1 200 /.test(a.text()));
    // Once one of them is gone, a new connection is served.
    b.socket.destroy();
    await eventually('b is gone', async () => (await held(h)) === 1);
    const res = await fetch(`http://127.0.0.1:${port}/health`);
    t.equal(res.status, 200, 'a new connection within the cap is served');
    a.socket.destroy();
  },
);

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
