import { once } from 'node:events';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import t, { type Test } from 'tap';
import { type Span, Tracer, spansMade } from '../../../src/daemon/observe/tracer.js';
import { setTracer } from '../../../src/daemon/observe/tracing.js';
import { apiHarness } from '../../helpers/api.js';
import { ended } from '../../helpers/engine.js';

const FLOW = (url: string) => `
processId: AUTO
name: Traced
nodes:
  start: { type: startEvent, next: call }
  call: { type: serviceTask, url: "${url}/x", next: ask }
  ask: { type: inputNode, inputType: textbox, next: done }
  done: { type: endEvent }
`;

/** A loopback server keeping the headers of each request. */
async function called(t: Test) {
  const seen: IncomingHttpHeaders[] = [];
  const srv = createServer((req, res) => {
    seen.push(req.headers);
    res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
  });
  srv.listen(0, '127.0.0.1');
  await once(srv, 'listening');
  t.teardown(() => srv.close());
  return { url: `http://127.0.0.1:${(srv.address() as AddressInfo).port}`, seen };
}

/**
 * Starts an execution through the API with a traceparent, lets its serviceTask call the server,
 * answers its input through the API, and returns it ended, with the spans made meanwhile.
 */
async function oneExecution(t: Test) {
  const srv = await called(t);
  const h = await apiHarness(t);
  const key = await h.key('admin', 'acme');
  const processId = await h.publish(FLOW(srv.url), { organization: 'acme' });
  const before = spansMade();
  const res = await h.call(key, {
    method: 'POST',
    url: '/process/exec',
    headers: { traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' },
    payload: { processId },
  });
  t.equal(res.statusCode, 200);
  const id = (res.json() as { processInstanceId: string }).processInstanceId;
  await h.waitFor((e) => e.type === 'NODE_WAITING' && e.processInstanceId === id);
  const answered = await h.call(key, {
    method: 'POST',
    url: '/process/task',
    payload: { processInstanceId: id, nodeId: 'ask', action: 'COMPLETE', data: { inputValue: 'ok' } },
  });
  t.equal(answered.statusCode, 200, answered.body);
  const inst = await ended(h, id);
  return { inst, made: spansMade() - before, seen: srv.seen };
}

t.test('with tracing off (the default), an execution, its work and its requests make no span', async (t) => {
  const { inst, made, seen } = await oneExecution(t);
  t.equal(inst.stateCd, 1, 'it completed');
  t.equal(made, 0, 'no Span was constructed');
  t.equal(inst.trace, undefined, 'its record carries no trace');
  t.equal(seen.length, 1);
  t.equal(seen[0]!.traceparent, undefined, 'the called server got no traceparent');
});

t.test('with tracing on, the same run makes its spans (the count above can see them)', async (t) => {
  const ended: Span[] = [];
  setTracer(new Tracer({ add: (s) => ended.push(s) }));
  t.teardown(() => setTracer(null));
  const { inst, made, seen } = await oneExecution(t);
  t.ok(made > 0, 'spans were constructed');
  t.match(inst.trace, /^0af7651916cd43dd8448eb211c80319c-[0-9a-f]{16}-[0-9a-f]{16}$/, 'the record carries the trace');
  t.match(String(seen[0]!.traceparent), /^00-0af7651916cd43dd8448eb211c80319c-[0-9a-f]{16}-01$/);
  const names = ended.map((s) => s.name);
  for (const n of ['node startEvent start', 'node serviceTask call', 'node inputNode ask', 'node endEvent done'])
    t.ok(names.includes(n), `a span for ${n}`);
  t.ok(names.includes('HTTP GET'), 'a client span for the call');
  t.ok(names.includes('POST /process/exec'), 'a server span for the start');
  t.equal(ended.filter((s) => s.name.startsWith('execution ')).length, 1, 'one execution span');
});
