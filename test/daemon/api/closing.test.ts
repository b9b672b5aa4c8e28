import { connect, type Socket } from 'node:net';
import t from 'tap';
import { buildServer } from '../../../src/daemon/server.js';
import { WebhookReceiver } from '../../../src/daemon/triggers/webhooks.js';
import { engineHarness } from '../../helpers/engine.js';

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
