import Fastify, { type FastifyInstance } from 'fastify';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import t, { type Test } from 'tap';
import { eventually } from '../../helpers/eventually.js';
import {
  installPartitionRouting,
  type PartitionRoutingOptions,
} from '../../../src/daemon/cluster/partition-routing.js';
import { partitionOf } from '../../../src/daemon/state/ids.js';

/*
 * Requests among daemons sharing a database (decision 041): served here when this daemon holds
 * what they name, forwarded one hop to the holder otherwise, 503 PARTITION_MOVING when no daemon
 * serves it now. Over real HTTP: a Fastify app with the routing, and a stand-in for the holder.
 */

const PARTITIONS = 16;
const ID = '0190a0b1-c2d3-7e4f-8a5b-6c7d8e9f0a1b';
const OTHER = partitionOf(ID, PARTITIONS);

/** The other daemon: answers what it was asked, with its own header. */
async function holder(t: Test): Promise<{ url: string; seen: { request: IncomingMessage; body: string }[] }> {
  const seen: { request: IncomingMessage; body: string }[] = [];
  const server: Server = createServer((request, reply) => {
    let body = '';
    request.on('data', (chunk: Buffer) => (body += chunk.toString()));
    request.on('end', () => {
      seen.push({ request, body });
      const status = request.url === '/process/instance/moved' ? 503 : 200;
      // A directory write says where it is in partition 0's journal.
      const seq = request.url === '/admin/flows' ? { 'x-wfx-directory-seq': '42' } : {};
      reply.writeHead(status, { 'content-type': 'application/json', 'x-served-by': 'holder', ...seq });
      reply.end(JSON.stringify({ url: request.url, body }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return { url: `http://127.0.0.1:${(server.address() as { port: number }).port}`, seen };
}

/** This daemon: the routes, answering `here` when served locally; `held` the partitions it serves. */
async function daemon(
  t: Test,
  held: readonly number[],
  holderUrl: string | null,
  /** Where the holder is once who holds what is read again (refresh). */
  readAgain: string | null = holderUrl,
  catalogueAt?: (seq: number) => Promise<void>,
): Promise<{ app: FastifyInstance; stale: { count: number }; refreshed: { count: number } }> {
  const stale = { count: 0 };
  const refreshed = { count: 0 };
  let known = holderUrl;
  const options: PartitionRoutingOptions = {
    self: 'd1',
    partitionOf: (id) => partitionOf(id, PARTITIONS),
    serves: (p) => held.includes(p),
    holder: () => known,
    stale: () => void stale.count++,
    refresh: async () => {
      refreshed.count++;
      known = readAgain;
    },
    retryAfterSeconds: 2,
    catalogueSeq: () => 7,
    ...(catalogueAt && { catalogueAt }),
  };
  const app = Fastify();
  installPartitionRouting(app, options);
  const here = async () => ({ served: 'here' });
  app.get('/process/instance/:id', here);
  app.post('/process/instance/:id/cancel', here);
  app.post('/process/task', here);
  app.post('/process/event', here);
  app.post('/process/start', here);
  app.post('/jobs/:key/complete', here);
  app.post('/admin/flows', here);
  app.put('/admin/memory/:namespace/:key', here);
  app.get('/admin/flows', here);
  await app.listen({ host: '127.0.0.1', port: 0 });
  t.teardown(() => app.close());
  return { app, stale, refreshed };
}

const urlOf = (app: FastifyInstance) => `http://127.0.0.1:${(app.server.address() as { port: number }).port}`;

t.test('what this daemon holds is served here; what another holds is forwarded there', async (t) => {
  const other = await holder(t);
  const { app } = await daemon(
    t,
    [0, ...Array.from({ length: 15 }, (_, i) => i + 1).filter((p) => p !== OTHER)],
    other.url,
  );
  const url = urlOf(app);
  const local = await fetch(`${url}/process/start`, {
    method: 'POST',
    body: '{}',
    headers: { 'content-type': 'application/json' },
  });
  t.same(await local.json(), { served: 'here' }, 'a start is served where it arrives');
  t.same(await (await fetch(`${url}/admin/flows`)).json(), { served: 'here' }, 'a directory read too');

  const read = await fetch(`${url}/process/instance/${ID}?x=1`, { headers: { 'x-api-key': 'apk_k_s' } });
  t.equal(read.headers.get('x-served-by'), 'holder', 'an execution another daemon holds: its answer');
  t.same(await read.json(), { url: `/process/instance/${ID}?x=1`, body: '' });
  const seen = other.seen.at(-1)!.request;
  t.equal(seen.headers['x-api-key'], 'apk_k_s', 'with the credential, which the holder checks');
  t.equal(seen.headers['x-wfx-forwarded-by'], 'd1', 'marked as forwarded once');

  const answer = { processInstanceId: ID, nodeId: 'ask', action: 'COMPLETE', data: { inputValue: 'é' } };
  const task = await fetch(`${url}/process/task`, {
    method: 'POST',
    body: JSON.stringify(answer),
    headers: { 'content-type': 'application/json' },
  });
  t.equal(task.headers.get('x-served-by'), 'holder', 'a task answer goes where its execution is');
  t.same(JSON.parse(other.seen.at(-1)!.body), answer, 'with its body as sent');

  const job = await fetch(`${url}/jobs/${ID}.n3/complete`, {
    method: 'POST',
    body: '{}',
    headers: { 'content-type': 'application/json' },
  });
  t.equal(job.headers.get('x-served-by'), 'holder', 'a job key names its execution');
  const memory = await fetch(`${url}/admin/memory/ns/k`, {
    method: 'PUT',
    body: '{}',
    headers: { 'content-type': 'application/json' },
  });
  t.same(await memory.json(), { served: 'here' }, 'memory is shared: written anywhere');

  // An event with a message id goes to the holder of the id's partition; without one, it is
  // delivered from here (fan-out.ts asks the others).
  const event = (body: object) =>
    fetch(`${url}/process/event`, {
      method: 'POST',
      body: JSON.stringify(body),
      headers: { 'content-type': 'application/json' },
    });
  const messageId = ID; // default|<ID> hashes to the other daemon's partition (checked below)
  t.equal(partitionOf(`default|${messageId}`, PARTITIONS), OTHER);
  const withId = await event({ eventType: 'go', messageId, ttlSeconds: 60 });
  t.equal(withId.headers.get('x-served-by'), 'holder', 'taken in by one daemon, whichever it reached');
  t.same(await (await event({ eventType: 'go' })).json(), { served: 'here' });
});

t.test('an absolute URL as the request target is refused, never passed on to the host it names', async (t) => {
  const other = await holder(t);
  const named = await holder(t);
  const { app } = await daemon(t, [0], other.url);
  const { request } = await import('node:http');
  const port = (app.server.address() as { port: number }).port;
  const status = await new Promise<number>((resolve, reject) => {
    // Absolute-form (RFC 9112 section 3.2.2): `GET http://host/path HTTP/1.1`.
    const req = request({ host: '127.0.0.1', port, path: `${named.url}/process/instance/${ID}` }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('error', reject);
    req.end();
  });
  t.equal(status, 400);
  t.equal(named.seen.length + other.seen.length, 0, 'no daemon nor the named host was asked');
});

t.test('a directory write goes to partition 0 holder', async (t) => {
  const other = await holder(t);
  const { app } = await daemon(t, [1, 2], other.url);
  const res = await fetch(`${urlOf(app)}/admin/flows`, {
    method: 'POST',
    body: '{"source":"x"}',
    headers: { 'content-type': 'application/json' },
  });
  t.equal(res.headers.get('x-served-by'), 'holder');
  t.equal(other.seen.at(-1)!.body, '{"source":"x"}', 'the body streamed through as it came');
});

t.test('a directory write is answered once this daemon has read it', async (t) => {
  const other = await holder(t);
  const asked: number[] = [];
  let caughtUp!: () => void;
  const copy = new Promise<void>((resolve) => (caughtUp = resolve));
  const { app } = await daemon(t, [1], other.url, other.url, (seq) => (asked.push(seq), copy));
  let answered = false;
  const res = fetch(`${urlOf(app)}/admin/flows`, {
    method: 'POST',
    body: '{"source":"x"}',
    headers: { 'content-type': 'application/json' },
  }).then((r) => ((answered = true), r));
  await eventually('the copy is asked to come to the write', () => asked.length === 1);
  t.same(asked, [42], "to the entry partition 0's holder named");
  t.notOk(answered, 'not answered before');
  caughtUp();
  t.equal((await res).status, 200, 'answered after');

  // As partition 0's holder: a write another daemon forwarded says where it is.
  const directory = await daemon(t, [0], null);
  const write = (headers: Record<string, string>) =>
    fetch(`${urlOf(directory.app)}/admin/flows`, { method: 'POST', headers });
  t.equal((await write({ 'x-wfx-forwarded-by': 'd2' })).headers.get('x-wfx-directory-seq'), '7');
  t.equal((await write({})).headers.get('x-wfx-directory-seq'), null, 'not to a caller of its own');
});

t.test('no daemon serving it now: 503 PARTITION_MOVING with Retry-After', async (t) => {
  const other = await holder(t);
  const { app, stale, refreshed } = await daemon(t, [0], null);
  const res = await fetch(`${urlOf(app)}/process/instance/${ID}`);
  t.equal(res.status, 503);
  t.equal(res.headers.get('retry-after'), '2');
  t.match(await res.json(), { error: 'PARTITION_MOVING', retryAfter: 2 });
  t.equal(refreshed.count, 1, 'after reading who holds what again');

  // Not known as last read, known once read again (it just moved): forwarded, not refused.
  const moved = await daemon(t, [0], null, other.url);
  const found = await fetch(`${urlOf(moved.app)}/process/instance/${ID}`);
  t.equal(found.status, 200);
  t.equal(found.headers.get('x-served-by'), 'holder', 'the new holder answers');
  t.equal(moved.refreshed.count, 1);
  other.seen.length = 0;

  // Forwarded here already (one hop): not passed on again, whoever holds it.
  const forwarding = await daemon(t, [0], other.url);
  const hop = await fetch(`${urlOf(forwarding.app)}/process/instance/${ID}`, {
    headers: { 'x-wfx-forwarded-by': 'd2' },
  });
  t.equal(hop.status, 503, 'a forwarded request is never forwarded again');
  t.equal(other.seen.length, 0);

  // The holder says it moved on: the answer passes back, and who holds what is read again.
  const movedOn = await fetch(`${urlOf(forwarding.app)}/process/instance/moved`);
  t.equal(movedOn.status, 503);
  t.equal(forwarding.stale.count, 1, 'a 503 from the holder makes it read the holders again');
  t.equal(stale.count, 0);
});

t.test('a holder that cannot be reached: 503, and the holders are read again', async (t) => {
  const gone = createServer();
  await new Promise<void>((resolve) => gone.listen(0, '127.0.0.1', resolve));
  const deadUrl = `http://127.0.0.1:${(gone.address() as { port: number }).port}`;
  await new Promise<void>((resolve) => gone.close(() => resolve()));
  const { app, stale } = await daemon(t, [0], deadUrl);
  const res = await fetch(`${urlOf(app)}/process/instance/${ID}/cancel`, { method: 'POST' });
  t.equal(res.status, 503);
  t.equal(res.headers.get('retry-after'), '2');
  t.match(await res.json(), { error: 'PARTITION_MOVING', message: /cannot be reached/ });
  t.equal(stale.count, 1);
});
