import t from 'tap';
import { OtlpExporter, spanJson, type OtlpOptions } from '../../../src/daemon/observe/otlp-exporter.js';
import { SPAN_KIND, Tracer, type Span } from '../../../src/daemon/observe/tracer.js';
import { nodeSpanId, parseTraceparent, traceparentOf } from '../../../src/daemon/observe/trace-context.js';
import { eventually } from '../../helpers/eventually.js';
import { otlpReceiver } from '../../helpers/otlp-receiver.js';

const options = (url: string, extra: Partial<OtlpOptions> = {}): OtlpOptions => ({
  url: `${url}/v1/traces`,
  headers: { 'x-token': 'abc' },
  serviceName: 'svc',
  maxQueue: 100,
  maxBatch: 10,
  delayMs: 60_000,
  timeoutMs: 5000,
  version: '0.0.0',
  ...extra,
});

t.test('spans are sent in batches of maxBatch as OTLP JSON; close sends the rest', async (t) => {
  const r = await otlpReceiver(t);
  const exporter = new OtlpExporter(options(r.url));
  const tracer = new Tracer(exporter);
  const root = tracer.start('root', SPAN_KIND.SERVER, null);
  for (let i = 0; i < 24; i++) tracer.start(`child ${i}`, SPAN_KIND.INTERNAL, root).set('i', i).set('ok', true).end();
  root.fail('500').end();
  await exporter.close();
  t.equal(r.spans.length, 25, 'every span arrived');
  t.equal(r.headers.length, 3, 'in three requests (10, 10, then the rest at close)');
  t.equal(r.headers[0]!['x-token'], 'abc', 'with the configured headers');
  t.same(exporter.counts(), { exported: 25, dropped: 0, queueFull: 0, exportFailed: 0 });
  const got = r.spans.find((s) => s.name === 'child 3')!;
  t.equal(got.parentSpanId, root.spanId);
  t.equal(got.traceId, root.traceId);
  t.match(got.attributes, { i: 3, ok: true });
  t.match(got.startTimeUnixNano, /^\d{19}$/, 'nanoseconds since the epoch, as a decimal string');
  t.equal(got.service, 'svc');
  t.match(
    r.spans.find((s) => s.name === 'root'),
    { kind: 2, status: { code: 2, message: '500' } },
  );
});

t.test('text beyond ASCII and spans larger than a batch is sized for arrive whole', async (t) => {
  const r = await otlpReceiver(t);
  const exporter = new OtlpExporter(options(r.url, { serviceName: 'säll ✓' }));
  const tracer = new Tracer(exporter);
  const long = 'ü😀'.repeat(5_000);
  tracer.start('café ✓', SPAN_KIND.INTERNAL, null).set('text', long).end();
  tracer.start('plain', SPAN_KIND.INTERNAL, null).set('quote', 'a "b" \\ c').end();
  await exporter.close();
  t.equal(r.spans.length, 2, 'both arrived, in one request');
  const [first, second] = r.spans;
  t.equal(first!.name, 'café ✓');
  t.equal(first!.attributes.text, long, 'a value of 15,000 UTF-16 units, every one');
  t.equal(first!.service, 'säll ✓');
  t.equal(second!.attributes.quote, 'a "b" \\ c', 'escaped as JSON');
});

t.test('a kept-alive connection the collector closed as a batch went out: sent again at once', async (t) => {
  const r = await otlpReceiver(t);
  const exporter = new OtlpExporter(options(r.url));
  const tracer = new Tracer(exporter);
  for (let i = 0; i < 10; i++) tracer.start(`a${i}`, SPAN_KIND.INTERNAL, null).end();
  await eventually('the first batch is sent', () => exporter.counts().exported === 10);
  r.state.script.push({ status: 0, reset: true });
  for (let i = 0; i < 10; i++) tracer.start(`b${i}`, SPAN_KIND.INTERNAL, null).end();
  await exporter.close();
  t.equal(r.state.posts, 3, 'the second batch twice: on the kept connection, then on a new one');
  t.same(exporter.counts(), { exported: 20, dropped: 0, queueFull: 0, exportFailed: 0 }, 'none lost');
  t.equal(r.spans.length, 20);
});

t.test('a full queue drops and counts; a collector down drops the batch, counts it, never throws', async (t) => {
  const r = await otlpReceiver(t);
  r.state.refuse = true;
  const exporter = new OtlpExporter(options(r.url, { maxQueue: 5, maxBatch: 100 }));
  const tracer = new Tracer(exporter);
  for (let i = 0; i < 8; i++) tracer.start(`s${i}`, SPAN_KIND.INTERNAL, null).end();
  t.same(
    exporter.counts(),
    { exported: 0, dropped: 3, queueFull: 3, exportFailed: 0 },
    'three past the queue bound dropped at once',
  );
  await exporter.close();
  t.same(
    exporter.counts(),
    { exported: 0, dropped: 8, queueFull: 3, exportFailed: 5 },
    'the refused batch dropped too',
  );
  tracer.start('late', SPAN_KIND.INTERNAL, null).end();
  t.same(
    exporter.counts(),
    { exported: 0, dropped: 9, queueFull: 4, exportFailed: 5 },
    'a span after close is dropped',
  );

  const down = new OtlpExporter(options('http://127.0.0.1:1', { timeoutMs: 2000 }));
  new Tracer(down).start('x', SPAN_KIND.INTERNAL, null).end();
  await down.close();
  t.same(
    down.counts(),
    { exported: 0, dropped: 1, queueFull: 0, exportFailed: 1 },
    'nothing listening: dropped and counted',
  );
});

const spans = (exporter: OtlpExporter, n: number) => {
  const tracer = new Tracer(exporter);
  for (let i = 0; i < n; i++) tracer.start(`s${i}`, SPAN_KIND.INTERNAL, null).end();
};

t.test('a batch answered 503 is sent again and arrives once; 400 is dropped at once', async (t) => {
  const r = await otlpReceiver(t);
  r.state.script = [{ status: 503 }];
  const exporter = new OtlpExporter(options(r.url, { maxBatch: 3, retryBaseMs: 1 }));
  spans(exporter, 3);
  await eventually('the batch sent again', () => exporter.counts().exported === 3);
  t.equal(r.state.posts, 2, 'refused once, then accepted');
  t.equal(r.spans.length, 3, 'each span arrived once');

  r.state.script = [{ status: 400 }];
  spans(exporter, 3);
  await eventually('the batch refused', () => exporter.counts().exportFailed === 3);
  t.equal(r.state.posts, 3, 'a 400 is not sent again');
  t.same(exporter.counts(), { exported: 3, dropped: 3, queueFull: 0, exportFailed: 3 });
  await exporter.close();
  t.equal(r.spans.length, 3, 'the refused batch never arrived');
});

t.test('retries are bounded: a collector answering 502 for ever loses the batch', async (t) => {
  const r = await otlpReceiver(t);
  r.state.script = Array.from({ length: 10 }, () => ({ status: 502 }));
  const exporter = new OtlpExporter(options(r.url, { maxBatch: 2, retryBaseMs: 1 }));
  spans(exporter, 2);
  await eventually('the batch given up', () => exporter.counts().exportFailed === 2);
  t.equal(r.state.posts, 5, 'five sends of the batch, no more');
  await exporter.close();
  t.equal(r.state.posts, 5, 'close sends nothing more');
});

t.test('Retry-After is honoured, and close makes the waiting retry at once (its last)', async (t) => {
  const r = await otlpReceiver(t);
  r.state.script = [{ status: 429, retryAfter: '3600' }];
  const exporter = new OtlpExporter(options(r.url, { maxBatch: 2, retryBaseMs: 1 }));
  spans(exporter, 2);
  await eventually('the retry waiting', () => exporter.retrying);
  // A second exporter with the same backoff retries twice meanwhile: the first would have too.
  const control = await otlpReceiver(t);
  control.state.script = [{ status: 503 }, { status: 503 }];
  const paced = new OtlpExporter(options(control.url, { maxBatch: 1, retryBaseMs: 1 }));
  spans(paced, 1);
  await eventually('the control batch sent', () => paced.counts().exported === 1);
  t.equal(control.state.posts, 3, 'the control retried twice');
  t.equal(r.state.posts, 1, 'not sent again before the hour asked (the backoff alone would have)');
  await exporter.close();
  t.equal(r.state.posts, 2, 'close sent it again at once');
  t.same(exporter.counts(), { exported: 2, dropped: 0, queueFull: 0, exportFailed: 0 });

  const again = await otlpReceiver(t);
  again.state.script = [{ status: 504, retryAfter: 'Thu, 01 Jan 2099 00:00:00 GMT' }, { status: 503 }];
  const closing = new OtlpExporter(options(again.url, { maxBatch: 2, retryBaseMs: 1 }));
  spans(closing, 2);
  await eventually('the retry waiting', () => closing.retrying);
  await closing.close();
  t.equal(again.state.posts, 2, 'a date as Retry-After waited too; after close, a retryable answer is final');
  t.same(closing.counts(), { exported: 0, dropped: 2, queueFull: 0, exportFailed: 2 });
});

t.test('traceparent headers: read strictly, written as version 00, sampled', async (t) => {
  const ctx = { traceId: '4bf92f3577b34da6a3ce929d0e0e4736', spanId: '00f067aa0ba902b7' };
  const sampled = { ...ctx, sampled: true };
  t.same(parseTraceparent(traceparentOf(ctx)), sampled);
  t.same(
    parseTraceparent(`00-${ctx.traceId}-${ctx.spanId}-00`),
    { ...ctx, sampled: false },
    'an unsampled one says so',
  );
  t.same(parseTraceparent([`00-${ctx.traceId}-${ctx.spanId}-01`, 'x']), sampled, 'the first of repeated headers');
  for (const bad of [
    undefined,
    '',
    `ff-${ctx.traceId}-${ctx.spanId}-01`,
    `00-${'0'.repeat(32)}-${ctx.spanId}-01`,
    `00-${ctx.traceId}-${'0'.repeat(16)}-01`,
    `00-${ctx.traceId}-${ctx.spanId}-01-extra`,
    `00-${ctx.traceId.slice(1)}-${ctx.spanId}-01`,
  ])
    t.equal(parseTraceparent(bad), null, `refused: ${String(bad)}`);
  t.same(parseTraceparent(`01-${ctx.traceId}-${ctx.spanId}-01-more`), sampled, 'a later version may add fields');
});

t.test("node span ids: derived, stable, distinct within an execution's trace", async (t) => {
  const trace = { traceId: '4bf92f3577b34da6a3ce929d0e0e4736', spanId: '00f067aa0ba902b7' };
  const ids = new Set<string>();
  for (let i = 1; i <= 10_000; i++) ids.add(nodeSpanId(trace, `n${i}`));
  t.equal(ids.size, 10_000, 'no two node instances share a span id');
  t.ok(
    [...ids].every((id) => /^[0-9a-f]{16}$/.test(id) && id !== '0'.repeat(16)),
    '16 hex digits, never zero',
  );
  t.equal(
    nodeSpanId(trace, 'n7'),
    nodeSpanId({ ...trace }, 'n7'),
    'the same on every call (a restart derives it again)',
  );
  t.not(
    nodeSpanId(trace, 'n7'),
    nodeSpanId({ ...trace, spanId: '00f067aa0ba902b8' }, 'n7'),
    'another execution, another id',
  );
});

t.test("a span's JSON is what JSON.stringify makes of OTLP's mapping, escapes and all", async (t) => {
  const spans: Span[] = [];
  const tracer = new Tracer({ add: (s) => spans.push(s) });
  const root = tracer.start('GET /a "quoted" \\ é\n', SPAN_KIND.SERVER, null, 1732800000123.5);
  root
    .set('text', 'tab\there "q" </script> \u2028')
    .set('int', 42)
    .set('negative', -7)
    .set('double', 1.5)
    .set('flag', false)
    .set('key "odd"', 'v')
    .fail('FAILED "x"')
    .end(1732800000200.25);
  tracer.start('plain', SPAN_KIND.INTERNAL, root, 1000.5).end(1000.75);
  /** The mapping as objects, as the exporter built them before (opentelemetry-proto's JSON). */
  const expected = (s: Span) => ({
    traceId: s.traceId,
    spanId: s.spanId,
    ...(s.parentSpanId !== null && { parentSpanId: s.parentSpanId }),
    name: s.name,
    kind: s.kind,
    startTimeUnixNano: `${BigInt(Math.floor(s.startMs)) * 1_000_000n + BigInt(Math.floor((s.startMs - Math.floor(s.startMs)) * 1e6))}`,
    endTimeUnixNano: `${BigInt(Math.floor(s.endMs)) * 1_000_000n + BigInt(Math.floor((s.endMs - Math.floor(s.endMs)) * 1e6))}`,
    attributes: Object.entries(s.attributes).map(([key, v]) => ({
      key,
      value:
        typeof v === 'string'
          ? { stringValue: v }
          : typeof v === 'boolean'
            ? { boolValue: v }
            : Number.isInteger(v)
              ? { intValue: String(v) }
              : { doubleValue: v },
    })),
    status: s.statusCode === 0 ? {} : { code: s.statusCode, message: s.statusMessage },
  });
  t.equal(spans.length, 2);
  for (const s of spans) t.same(JSON.parse(spanJson(s)), expected(s), s.name);
  t.match(JSON.parse(spanJson(spans[0]!)).startTimeUnixNano, /^1732800000123500000$/, 'nanoseconds, digit for digit');
  t.equal(JSON.parse(spanJson(spans[1]!)).endTimeUnixNano, '1000750000');
});
