import { once } from 'node:events';
import { Agent, request, type IncomingMessage } from 'node:http';
import { connect, type AddressInfo, type Socket } from 'node:net';
import t from 'tap';
import { buildServer } from '../../../src/daemon/api/server.js';
import { WebhookReceiver } from '../../../src/daemon/triggers/webhooks.js';
import { apiHarness } from '../../helpers/api.js';
import { engineHarness } from '../../helpers/engine.js';
import { eventually } from '../../helpers/eventually.js';
import { registerDomain } from '../../helpers/jobs.js';

/** Writes `request` on `socket` and resolves with the first whole answer (status and JSON body; Content-Length framed). */
function exchange(socket: Socket, request: string): Promise<{ status: number; body: unknown }> {
  return new Promise((resolve, reject) => {
    let text = '';
    const onData = (c: Buffer): void => {
      text += c.toString('utf8');
      const at = text.indexOf('\r\n\r\n');
      const length = Number(/\r\ncontent-length: (\d+)/i.exec(text)?.[1] ?? -1);
      if (at < 0 || length < 0 || Buffer.byteLength(text.slice(at + 4)) < length) return;
      socket.off('data', onData);
      resolve({ status: Number(text.slice(9, 12)), body: JSON.parse(text.slice(at + 4)) });
    };
    socket.on('data', onData);
    socket.once('error', reject);
    socket.write(request);
  });
}

t.test('a request arriving while the server closes gets SERVICE_UNAVAILABLE in the error body', async (t) => {
  const h = await engineHarness(t);
  const webhooks = new WebhookReceiver({ store: h.store, engine: h.engine, now: h.clock.now });
  const app = buildServer({ store: h.store, engine: h.engine, webhooks, now: h.clock.now });
  // Holds the close open after wfx's own preClose hooks ran, until the request below has its answer.
  let closingStarted!: () => void;
  const started = new Promise<void>((resolve) => (closingStarted = resolve));
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  app.addHook('preClose', async () => {
    closingStarted();
    await gate;
  });
  await app.listen({ host: '127.0.0.1', port: 0 });
  const port = (app.server.address() as { port: number }).port;
  const socket = connect(port, '127.0.0.1');
  t.teardown(() => socket.destroy());
  const get = 'GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: keep-alive\r\n\r\n';
  t.equal((await exchange(socket, get)).status, 200, 'served before the close');
  const closed = app.close();
  await started;
  const answer = await exchange(socket, get);
  release();
  await closed;
  t.equal(answer.status, 503);
  t.match(answer.body, { error: 'SERVICE_UNAVAILABLE', message: String, timestamp: String });
});

t.test('closing waits for no client: answers close their connection, silent connections are ended', async (t) => {
  const h = await apiHarness(t);
  await registerDomain(h);
  const key = await h.key('worker', 'default');
  await h.app.listen({ port: 0, host: '127.0.0.1' });
  const { port } = h.app.server.address() as AddressInfo;
  // A connection that sends nothing (fetch opens one ahead, or keeps one after an abort).
  const silent = connect(port, '127.0.0.1');
  t.teardown(() => silent.destroy());
  await once(silent, 'connect');
  const silentEnded = once(silent, 'close');
  // A client that keeps its connections for reuse (as fetch does), waiting in a long poll.
  const agent = new Agent({ keepAlive: true });
  t.teardown(() => agent.destroy());
  const answered = new Promise<IncomingMessage>((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        path: '/jobs/activate',
        method: 'POST',
        agent,
        headers: { 'content-type': 'application/json', 'x-api-key': key.apiKey },
      },
      resolve,
    );
    req.on('error', reject);
    req.end(JSON.stringify({ domain: 'billing', worker: 'w1', requestTimeout: 60_000 }));
  });
  await eventually('the long poll waits', () => h.app.jobBoard.health('default')[0]?.workers[0]?.polling);
  const closed = h.app.close(); // the long poll is answered as the server closes
  const res = await answered;
  t.equal(res.headers.connection, 'close', 'the answer closes its connection');
  t.same(JSON.parse(await text(res)), { jobs: [] });
  t.equal(await within(silentEnded, 10_000), 'settled', 'the silent connection is ended');
  t.equal(await within(closed, 10_000), 'settled', 'the server closed');
});

/** 'settled' once `p` settles, or 'still pending' after `ms` (a failure shows as such, not as a hang). */
async function within(p: Promise<unknown>, ms: number): Promise<string> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<string>((resolve) => (timer = setTimeout(() => resolve('still pending'), ms)));
  try {
    return await Promise.race([p.then(() => 'settled'), late]);
  } finally {
    clearTimeout(timer);
  }
}

/** The body of an answer. */
async function text(res: IncomingMessage): Promise<string> {
  let body = '';
  for await (const chunk of res) body += String(chunk);
  return body;
}
