import '../setup/fixtures.js'; // fixtures under the OS temp dir (see there)
import { once } from 'node:events';
import { readFile } from 'node:fs/promises';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { signDelivery } from '../../src/shared/webhooks/providers.js';
import { startDaemon, wfxIn } from '../helpers/cli.js';
import { eventually } from '../helpers/eventually.js';
import { otlpReceiver, type ReceivedSpan } from '../helpers/otlp-receiver.js';

const CALL = '71717171-7171-4171-8171-717171717171';
const ASK = '72727272-7272-4272-8272-727272727272';
const HOOK = '73737373-7373-4373-8373-737373737373';
const FLOWS = {
  'call.yaml': `processId: ${CALL}
name: Call
nodes:
  start: { type: startEvent, next: call }
  call: { type: serviceTask, url: "{env.BASE}/items", resultVariable: reply, next: done }
  done: { type: endEvent }
`,
  'ask.yaml': `processId: ${ASK}
name: Ask
nodes:
  start: { type: startEvent, next: ask }
  ask: { type: inputNode, inputType: textbox, next: done }
  done: { type: endEvent }
`,
  'hook.yaml': `processId: ${HOOK}
name: Hook
triggers:
  - { type: webhook, webhook: repo, eventType: push }
nodes:
  start: { type: startEvent, next: done }
  done: { type: endEvent }
`,
};
const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-01$/;

/** A daemon exporting to a scripted receiver, with a short batch delay; its flows published. */
async function setup(t: Test) {
  const receiver = await otlpReceiver(t);
  const cwd = t.testdir(FLOWS);
  const args = [
    '--otlp-endpoint',
    receiver.url,
    '--otlp-header',
    'authorization=Bearer t0ken',
    '--service-name',
    'wfx-e2e',
  ];
  const env = { OTEL_BSP_SCHEDULE_DELAY: '20' };
  const info = await startDaemon(t, { cwd, args, env });
  const run = (a: string[]) => wfxIn(a, { cwd });
  // Thrown, not asserted: the shared daemon is set up at the file's top level, outside any test.
  for (const f of ['call.yaml', 'ask.yaml']) {
    const published = await run(['flow', 'publish', f]);
    if (published.code !== 0) throw new Error(`publishing ${f} failed: ${published.stderr}`);
  }
  const key = (await readFile(join(cwd, '.wfx', 'bootstrap.key'), 'utf8')).trim();
  return { receiver, cwd, info, run, key, restart: () => startDaemon(t, { cwd, args, env }) };
}

/** The finished execution's spans, once its own span (written last) has arrived. */
const executionSpans = (receiver: Awaited<ReturnType<typeof otlpReceiver>>, id: string) =>
  eventually(`the spans of ${id}`, () => {
    const spans = receiver.of(id);
    const root = spans.find((s) => s.name.startsWith('execution '));
    return root && { root, spans };
  });

/**
 * One daemon for the tests that never stop it: each starts executions of its own and reads only
 * their spans (or the counts' change over its own run); the restart test keeps a daemon of its own.
 */
const shared = await setup(t);

const node = (spans: readonly ReceivedSpan[], nodeId: string) =>
  spans.find((s) => s.attributes['wfx.node.id'] === nodeId && s.kind === 1);

t.test('an execution with a serviceTask is one trace; the called server gets its traceparent', async (t) => {
  const seen: IncomingHttpHeaders[] = [];
  const srv = createServer((req, res) => {
    seen.push(req.headers);
    res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
  });
  srv.listen(0, '127.0.0.1');
  await once(srv, 'listening');
  t.teardown(() => srv.close());
  const { receiver, run } = shared;
  t.equal((await run(['env', 'set', 'BASE', `http://127.0.0.1:${(srv.address() as AddressInfo).port}`])).code, 0);
  const res = await run(['run', CALL, '--wait', '--json']);
  t.equal(res.code, 0, res.stderr);
  const id = (JSON.parse(res.stdout) as { processInstanceId: string }).processInstanceId;

  const { root, spans } = await executionSpans(receiver, id);
  t.equal(new Set(spans.map((s) => s.traceId)).size, 1, 'one trace id for all of its spans');
  t.match(root.attributes, { 'wfx.flow.id': CALL, 'wfx.flow.version': '1', 'wfx.execution.state': 'COMPLETED' });
  for (const n of ['start', 'call', 'done']) {
    const s = node(spans, n);
    t.ok(s, `a span for node ${n}`);
    t.equal(s?.parentSpanId, root.spanId, `node ${n}'s span is a child of the execution's`);
  }
  t.match(node(spans, 'call')!.attributes, { 'wfx.node.type': 'serviceTask', 'wfx.node.attempt': 1 });
  const client = spans.find((s) => s.kind === 3);
  t.ok(client, 'a client span for the HTTP call');
  t.equal(client!.parentSpanId, node(spans, 'call')!.spanId, "the client span is a child of the serviceTask's");
  t.match(client!.attributes, { 'http.request.method': 'GET', 'http.response.status_code': 200 });
  t.equal(seen.length, 1);
  const m = TRACEPARENT.exec(String(seen[0]!.traceparent));
  t.ok(m, 'the called server saw a traceparent');
  t.equal(m?.[1], root.traceId, 'of the execution trace');
  t.equal(m?.[2], client!.spanId, 'naming the client span');
  t.equal(receiver.headers[0]!.authorization, 'Bearer t0ken', '--otlp-header is sent with each export');
  t.equal(root.service, 'wfx-e2e', '--service-name is the resource service.name');
  t.ok(
    receiver.spans.some((s) => s.kind === 2 && typeof s.attributes['http.route'] === 'string'),
    'the API requests have server spans',
  );
});

t.test("an API start's traceparent and a webhook delivery's continue into their executions", async (t) => {
  const { receiver, info, run, key } = shared;
  const apiTrace = '0af7651916cd43dd8448eb211c80319c';
  const started = await fetch(`${info.url}/process/start`, {
    method: 'POST',
    headers: {
      'x-api-key': key,
      'content-type': 'application/json',
      traceparent: `00-${apiTrace}-b7ad6b7169203331-01`,
    },
    body: JSON.stringify({ processId: ASK }),
  });
  t.equal(started.status, 200);
  const askId = ((await started.json()) as { processInstanceId: string }).processInstanceId;
  t.equal((await run(['task', 'complete', askId, 'ask', '--data', '{"inputValue":"ok"}'])).code, 0);
  const api = await executionSpans(receiver, askId);
  t.equal(api.root.traceId, apiTrace, "the execution is in the API request's trace");
  const server = receiver.spans.find((s) => s.kind === 2 && s.spanId === api.root.parentSpanId);
  t.ok(server, "its parent is the request's server span");
  t.equal(server?.parentSpanId, 'b7ad6b7169203331', 'which continues the traceparent sent');
  t.equal(server?.attributes['http.route'], '/process/start');
  t.equal(server?.attributes['wfx.caller'] !== undefined, true, 'the server span names its caller');

  const created = await run([
    'webhooks',
    'create',
    '--name',
    'repo',
    '--provider',
    'GITHUB',
    '--secret',
    's3cret-of-repo',
    '--json',
  ]);
  t.equal(created.code, 0, created.stderr);
  t.equal((await run(['flow', 'publish', 'hook.yaml'])).code, 0, 'published hook.yaml, its webhook made');
  const url = (JSON.parse(created.stdout) as { endpoints: Array<{ url: string }> }).endpoints[0]!.url;
  const body = '{"ref":"main"}';
  const signed = signDelivery(
    { provider: 'GITHUB', authType: 'HMAC' },
    's3cret-of-repo',
    Buffer.from(body),
    new Date(),
    {
      eventType: 'push',
      eventId: 'd-1',
    },
  );
  const hookTrace = '4bf92f3577b34da6a3ce929d0e0e4736';
  const delivered = await fetch(url.startsWith('http') ? url : `${info.url}${url}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', traceparent: `00-${hookTrace}-00f067aa0ba902b7-01`, ...signed },
    body,
  });
  t.equal(delivered.status, 200);
  const root = await eventually('the webhook execution span', () =>
    receiver.spans.find((s) => s.name === `execution ${HOOK}`),
  );
  t.equal(root.traceId, hookTrace, "the execution the delivery started is in the sender's trace");
  t.equal(root.parentSpanId, '00f067aa0ba902b7', 'a child of the span the sender named');
});

t.test('an execution waiting across a restart keeps its trace', async (t) => {
  const { receiver, run, info, restart } = await setup(t);
  const res = await run(['run', ASK, '--json']);
  t.equal(res.code, 0, res.stderr);
  const id = (JSON.parse(res.stdout) as { processInstanceId: string }).processInstanceId;
  t.equal((await run(['daemon', 'stop'])).code, 0, 'stopped gracefully while the execution waits');
  const before = receiver.of(id);
  const start = node(before, 'start');
  t.ok(start, "the start node's span was sent before the daemon stopped");
  const restartedAt = Date.now();
  const again = await restart();
  t.not(again.pid, info.pid, 'a new daemon process');
  t.equal((await run(['task', 'complete', id, 'ask', '--data', '{"inputValue":"yes"}'])).code, 0);
  const { root, spans } = await executionSpans(receiver, id);
  t.equal(root.traceId, start!.traceId, 'the execution span after the restart is in the first trace');
  t.equal(new Set(spans.map((s) => s.traceId)).size, 1, 'every span of the execution in it');
  t.equal(
    node(spans, 'ask')?.parentSpanId,
    root.spanId,
    'the node answered after the restart is a child of the same root',
  );
  const ask = node(spans, 'ask')!;
  t.ok(
    Number(BigInt(ask.startTimeUnixNano) / 1_000_000n) <= restartedAt && ask.request > start!.request,
    'the waiting node has one span, from before the restart to its answer after it',
  );
});

t.test("the exporter's drops and exports are counted in /metrics", async (t) => {
  const { receiver, info, run, key } = shared;
  const scrape = async () => {
    const res = await fetch(`${info.url}/metrics`, { headers: { 'x-api-key': key } });
    t.equal(res.status, 200);
    return res.text();
  };
  const value = (text: string, series: string) => {
    const line = text.split('\n').find((l) => l.startsWith(`${series} `));
    return line === undefined ? null : Number(line.slice(series.length + 1));
  };
  // The daemon served the other tests: their exports are counted already, so this one counts changes.
  const failed = 'wfx_trace_spans_dropped_total{reason="export_failed"}';
  const droppedBefore = value(await scrape(), failed) ?? 0;
  receiver.state.script = [{ status: 400 }];
  const posts = receiver.state.posts;
  t.equal((await run(['run', CALL, '--json'])).code, 0, 'an execution makes spans');
  const text = await eventually('the refused batch counted', async () => {
    const text = await scrape();
    return (value(text, failed) ?? 0) > droppedBefore && text;
  });
  t.equal(value(text, 'wfx_trace_spans_dropped_total{reason="queue_full"}'), 0, 'the queue never filled');
  t.ok(receiver.state.posts > posts, 'the collector was sent the batch');
  const exportedThen = value(text, 'wfx_trace_spans_exported_total') ?? 0;
  await eventually(
    'later batches exported',
    async () => (value(await scrape(), 'wfx_trace_spans_exported_total') ?? 0) > exportedThen,
  );
});
