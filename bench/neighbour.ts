/**
 * The physical neighbour of the HTTP benchmarks: a bare Fastify route on the same Node that
 * parses the same JSON body and answers a small JSON object, nothing else. Whatever is served
 * over HTTP on this machine cannot beat it; wfx's figures are given as a fraction of it.
 * Prints `listening <port>` on stdout.
 */
import Fastify from 'fastify';

const app = Fastify({ logger: false });
let n = 0;
app.post('/process/start', async (request) => {
  const body = request.body as { processId?: string };
  return { processInstanceId: String(++n), processId: body.processId ?? '', status: 'started' };
});
await app.listen({ host: '127.0.0.1', port: 0 });
const address = app.server.address() as { port: number };
console.log(`listening ${address.port}`);
process.on('SIGTERM', () => void app.close().then(() => process.exit(0)));
