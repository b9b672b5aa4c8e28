import t, { type Test } from 'tap';
import Fastify, { type FastifyInstance } from 'fastify';
import type { AuditEntry } from '../../../src/shared/api/index.js';
import { installDurableReplies } from '../../../src/daemon/api/durable-reply.js';
import { installAudit } from '../../../src/daemon/api/audit-recorder.js';
import { apiHarness } from '../../helpers/api.js';
import type { Caller } from '../../../src/daemon/api/caller.js';
import type { AuditTrail } from '../../../src/daemon/store/audit-trail.js';
import { deferred } from '../../helpers/deferred.js';

/** True when `p` has not settled after a few turns of the event loop (every hook and write in reach has run). */
async function stillPending(p: Promise<unknown>): Promise<boolean> {
  let settled = false;
  p.then(
    () => (settled = true),
    () => (settled = true),
  );
  for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
  return !settled;
}

const CALLER: Caller = {
  kind: 'apiKey',
  keyId: 'k1',
  subject: null,
  organization: 'default',
  system: false,
  permissions: new Set(['WORKFLOW_EXECUTE']),
};

/** An app whose POST /change hands `durable` over (when given) and answers at once; the audit trail when given. */
async function app(
  t: Test,
  durable: () => Promise<unknown> | undefined,
  trail?: AuditTrail,
  closing: () => boolean = () => false,
) {
  const fastify: FastifyInstance = Fastify();
  t.teardown(() => fastify.close());
  fastify.addHook('onRequest', async (request) => {
    request.caller = CALLER;
  });
  if (trail) installAudit(fastify, { trail });
  installDurableReplies(fastify, closing);
  let handled = 0;
  fastify.post('/change', { config: { auth: { permission: 'WORKFLOW_EXECUTE' } } }, async (request) => {
    handled++;
    const d = durable();
    if (d) request.durable = d;
    return { processInstanceId: 'p1', status: 'resumed' };
  });
  await fastify.ready();
  return { fastify, handled: () => handled };
}

t.test('an answer whose handler handed its durability over leaves once that settles', async (t) => {
  const d = deferred();
  const { fastify, handled } = await app(t, () => d.promise);
  const res = fastify.inject({ method: 'POST', url: '/change', payload: {} });
  t.ok(await stillPending(res), 'not sent while the change is not durable');
  t.equal(handled(), 1, 'the handler has returned');
  d.resolve();
  const answered = await res;
  t.equal(answered.statusCode, 200);
  t.same(answered.json(), { processInstanceId: 'p1', status: 'resumed' });
});

t.test('a durability that fails turns the answer into that error', async (t) => {
  const d = deferred();
  const { fastify } = await app(t, () => d.promise);
  const res = fastify.inject({ method: 'POST', url: '/change', payload: {} });
  t.ok(await stillPending(res));
  d.reject(Object.assign(new Error('the store failed'), { statusCode: 503 }));
  const answered = await res;
  t.equal(answered.statusCode, 503);
  t.notMatch(answered.body, /resumed/);
});

t.test('a handler that hands nothing over answers as before', async (t) => {
  const { fastify } = await app(t, () => undefined);
  const res = await fastify.inject({ method: 'POST', url: '/change', payload: {} });
  t.equal(res.statusCode, 200);
});

t.test("the audit record is written beside the change's own write, and the answer waits for both", async (t) => {
  const change = deferred();
  const record = deferred();
  const written: AuditEntry[] = [];
  const trail = {
    record: (entry: AuditEntry) => {
      written.push(entry);
      return record.promise;
    },
  } as unknown as AuditTrail;
  const { fastify } = await app(t, () => change.promise, trail);
  const res = fastify.inject({ method: 'POST', url: '/change', payload: {} });
  t.ok(await stillPending(res));
  t.equal(written.length, 1, 'the record is on its way while the change is not durable yet');
  t.match(written[0], { action: 'POST /change', status: 200, targets: { processInstanceId: 'p1' } });
  change.resolve();
  t.ok(await stillPending(res), 'the change is durable, its record not yet');
  record.resolve();
  t.equal((await res).statusCode, 200);
});

t.test('a record that fails to become durable fails the answer too', async (t) => {
  const change = deferred();
  const trail = {
    record: () => Promise.reject(Object.assign(new Error('the trail failed'), { statusCode: 500 })),
  } as unknown as AuditTrail;
  const { fastify } = await app(t, () => change.promise, trail);
  const res = fastify.inject({ method: 'POST', url: '/change', payload: {} });
  change.resolve();
  t.equal((await res).statusCode, 500);
});

t.test('an answer that waited while the server began to close closes its connection', async (t) => {
  const d = deferred();
  let closing = false;
  const { fastify } = await app(
    t,
    () => d.promise,
    undefined,
    () => closing,
  );
  const res = fastify.inject({ method: 'POST', url: '/change', payload: {} });
  t.ok(await stillPending(res));
  closing = true;
  d.resolve();
  const answered = await res;
  t.equal(answered.statusCode, 200);
  t.equal(answered.headers.connection, 'close');
});

const ASK_FLOW = `processId: AUTO
name: Ask
nodes:
  start: { type: startEvent, next: ask }
  ask: { type: inputNode, inputType: textbox, next: done }
  done: { type: endEvent }
`;

t.test("starts and task answers write their audit record while their step's write is under way", async (t) => {
  let committed = 0;
  const h = await apiHarness(t, { engine: { observe: { durable: () => undefined, committed: () => committed++ } } });
  const key = await h.key('admin', null); // POST /process/start: a system key's
  const processId = await h.publish(ASK_FLOW);
  // Each record notes how many steps were durable when its write began.
  const seen: Array<[string, number]> = [];
  const record = h.audit.record.bind(h.audit);
  h.audit.record = (entry) => {
    seen.push([entry.action, committed]);
    return record(entry);
  };
  const beforeStart = committed;
  const started = await h.call(key, { method: 'POST', url: '/process/start', payload: { processId } });
  t.equal(started.statusCode, 200);
  t.ok(committed > beforeStart, 'the start is durable when it is answered');
  const id = (started.json() as { processInstanceId: string }).processInstanceId;
  const beforeAnswer = committed;
  const answered = await h.call(key, {
    method: 'POST',
    url: '/process/task',
    payload: { processInstanceId: id, nodeId: 'ask', action: 'COMPLETE', data: { inputValue: 'ok' } },
  });
  t.equal(answered.statusCode, 200);
  t.ok(committed > beforeAnswer, 'the answer is durable when it is answered');
  t.same(seen, [
    ['POST /process/start', beforeStart],
    ['POST /process/task', beforeAnswer],
  ]);
});
