/**
 * The physical neighbours of the HTTP benchmarks: a bare Fastify route on the same Node that
 * parses the same JSON body and answers a small JSON object, nothing else. Whatever is served
 * over HTTP on this machine cannot beat it; wfx's figures are given as a fraction of it.
 *
 * With a directory as its argument it also serves the durable neighbour, POST /durable: the same
 * route, plus one durable append of the body it parsed before it answers, with the group commit
 * and O_DSYNC writes of wfx's journal (AppendFile). No durable answer served over HTTP here can
 * come sooner: it is the floor under the resume figures' latency.
 *
 * Prints `listening <port>` on stdout.
 */
import { join } from 'node:path';
import Fastify from 'fastify';
import { AppendFile } from '../src/daemon/store/append-file.js';

const dir = process.argv[2];
const file = dir === undefined ? null : new AppendFile(join(dir, 'durable.log'), 0, { preallocate: true });

const app = Fastify({ logger: false });
let n = 0;
app.post('/process/start', async (request) => {
  const body = request.body as { processId?: string };
  return { processInstanceId: String(++n), processId: body.processId ?? '', status: 'started' };
});
if (file) {
  app.post('/durable', async (request) => {
    const id = ++n;
    await file.append(Buffer.from(`${JSON.stringify({ id, body: request.body })}\n`)).durable;
    return { id, status: 'durable' };
  });
}
await app.listen({ host: '127.0.0.1', port: 0 });
const address = app.server.address() as { port: number };
console.log(`listening ${address.port}`);
process.on(
  'SIGTERM',
  () =>
    void app
      .close()
      .then(() => file?.close())
      .then(() => process.exit(0)),
);
