import { createHash } from 'node:crypto';
import t, { type Test } from 'tap';
import { traceForStart } from '../../../src/daemon/observe/execution-spans.js';
import { NOT_SAMPLED, parseTraceparent, sampledAt } from '../../../src/daemon/observe/trace-context.js';
import { type Span, Tracer, spansMade } from '../../../src/daemon/observe/tracer.js';
import { setTracer } from '../../../src/daemon/observe/tracing.js';
import { apiHarness } from '../../helpers/api.js';

const FLOW = `
processId: AUTO
name: Sampled
nodes:
  start: { type: startEvent, next: ask }
  ask: { type: inputNode, inputType: textbox, next: done }
  done: { type: endEvent }
`;
const SAMPLED = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
const NOT = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-00';

/** A trace id made from `i` (the same each run). */
const traceId = (i: number) => createHash('sha256').update(String(i)).digest('hex').slice(0, 32);

t.test('a new trace is sampled by its id alone, at the ratio', async (t) => {
  const ids = Array.from({ length: 4000 }, (_, i) => traceId(i));
  const share = (ratio: number) => ids.filter((id) => sampledAt(id, ratio)).length / ids.length;
  t.equal(share(1), 1);
  t.equal(share(0), 0);
  const quarter = share(0.25);
  t.ok(quarter > 0.2 && quarter < 0.3, `about a quarter sampled (${quarter})`);
  t.ok(
    ids.every((id) => !sampledAt(id, 0.25) || sampledAt(id, 0.5)),
    'a trace sampled at one ratio is sampled at every higher one',
  );
  t.same(parseTraceparent(SAMPLED), {
    traceId: '0af7651916cd43dd8448eb211c80319c',
    spanId: 'b7ad6b7169203331',
    sampled: true,
  });
  t.equal(parseTraceparent(NOT)!.sampled, false);
});

/** Starts the flow through the API at `ratio` (with `traceparent`, if given); its spans and record. */
async function started(t: Test, ratio: number, traceparent?: string) {
  const spans: Span[] = [];
  const tracer = new Tracer({ add: (s) => spans.push(s) }, ratio);
  setTracer(tracer);
  t.teardown(() => setTracer(null));
  const h = await apiHarness(t);
  const key = await h.key('admin', 'acme');
  const processId = await h.publish(FLOW, { organization: 'acme' });
  const before = spansMade();
  const res = await h.call(key, {
    method: 'POST',
    url: '/process/exec',
    ...(traceparent && { headers: { traceparent } }),
    payload: { processId },
  });
  t.equal(res.statusCode, 200, res.body);
  const id = (res.json() as { processInstanceId: string }).processInstanceId;
  const inst = await h.get(id);
  return { h, tracer, id, inst, made: () => spansMade() - before, spans };
}

t.test('at ratio 0 a start makes no span, and what it starts makes none either', async (t) => {
  const { h, tracer, id, inst, made } = await started(t, 0);
  t.equal(made(), 0, 'no Span was constructed');
  t.equal(inst.trace, NOT_SAMPLED, 'the record says it is not sampled');
  t.equal(
    traceForStart(tracer, h.store.state, id, undefined, undefined),
    NOT_SAMPLED,
    'a child it starts is not sampled',
  );
});

t.test("a caller's traceparent keeps its decision, whatever the ratio", async (t) => {
  const sampled = await started(t, 0, SAMPLED);
  t.ok(sampled.made() > 0, 'sampled by its caller: spans at ratio 0');
  t.match(sampled.inst.trace, /^0af7651916cd43dd8448eb211c80319c-[0-9a-f]{16}-[0-9a-f]{16}$/);
  t.ok(sampled.spans.some((s) => s.name === 'POST /process/exec'));
  t.match(
    traceForStart(sampled.tracer, sampled.h.store.state, sampled.id, undefined, undefined),
    /^0af7651916cd43dd8448eb211c80319c-/,
    "a child continues its parent's trace",
  );
});

t.test("a caller's traceparent not sampled makes no span at ratio 1", async (t) => {
  const { inst, made } = await started(t, 1, NOT);
  t.equal(made(), 0);
  t.equal(inst.trace, NOT_SAMPLED);
});
