/**
 * The step draws nothing of its own: the clock is its input, ids and traces come from its
 * context (step/context.ts). Two steps given the same inputs write the same records.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import type { StepTracing } from '../../../../src/daemon/engine/step/context.js';
import { MemoryStep } from '../../../helpers/step.js';

const ORDER = `processId: 0193a000-0000-7000-8000-00000000f10e
name: Order
nodes:
  start: { type: startEvent, next: say }
  say: { type: intermediateThrowEvent, eventType: message, messageRef: packed, correlationKey: "{orderId}", data: { by: order }, next: wait }
  wait: { type: intermediateCatchEvent, eventType: message, messageRef: paid, correlationKey: "{orderId}", next: done }
  done: { type: endEvent }
`;

/** A start, an event kept for later (its id drawn), an event delivered: the records of each step, as JSON. */
async function run(m: MemoryStep): Promise<string[]> {
  const pid = await m.publish(ORDER);
  const out: string[] = [];
  const paid = {
    kind: 'event' as const,
    organization: 'default',
    eventType: 'paid',
    data: { amount: 5 },
    ttlSeconds: 60,
    messageId: null,
    dedupKey: null,
    elsewhere: [],
  };
  out.push(JSON.stringify(m.run({ ...paid, correlationKey: 'early' }).records));
  m.ms += 1;
  out.push(JSON.stringify(m.start(pid, { orderId: 'o1' }).records));
  m.ms += 1;
  out.push(JSON.stringify(m.run({ ...paid, correlationKey: 'o1' }).records));
  return out;
}

t.test('the same inputs at the same times write the same records, ids and all', async (t) => {
  const a = await run(new MemoryStep({ keepsThrown: true }));
  const b = await run(new MemoryStep({ keepsThrown: true }));
  t.same(a, b);
  t.match(a[0], /"type":"message.buffered"/, 'an id was drawn for the kept message');
  t.match(a[1], /"type":"event.thrown"/, 'an id was drawn for the thrown event');
});

t.test("a new execution's trace is the context's: continued from a traceparent, or made for it", async (t) => {
  const asked: Array<string | undefined> = [];
  const tracing: StepTracing = {
    continued: (traceparent) => `continued:${traceparent}`,
    forStart: (_state, parent, _node, continues) => {
      asked.push(continues);
      return continues ?? `new:${parent ?? 'root'}`;
    },
  };
  const m = new MemoryStep({ tracing });
  const pid = await m.publish(ORDER);
  const plain = m.start(pid, { orderId: 'o1' }).answer;
  const traced = m.run({
    kind: 'start',
    request: { organization: 'default', processId: pid, data: { orderId: 'o2' }, traceparent: 'tp' },
  }).answer;
  t.equal(m.instance(plain.processInstanceId).trace, 'new:root');
  t.equal(m.instance(traced.processInstanceId).trace, 'continued:tp');
  t.same(asked, [undefined, 'continued:tp']);
  const untraced = new MemoryStep();
  const id = untraced.start(await untraced.publish(ORDER), { orderId: 'o1' }).answer.processInstanceId;
  t.equal(untraced.instance(id).trace, undefined, 'no tracing in the context: no trace');
});

t.test('no clock, random or process-wide tracer is read in the step or the node handlers', async (t) => {
  const drawn =
    /\buuidv7\(|\bTRACER\b|Date\.now\(|new Date\(\)|Math\.random\(|randomUUID\(|randomBytes\(|performance\.now\(/;
  const found: string[] = [];
  for (const dir of ['src/daemon/engine/step', 'src/daemon/engine/nodes']) {
    for (const name of readdirSync(dir)) {
      if (!name.endsWith('.ts')) continue;
      readFileSync(join(dir, name), 'utf8')
        .split('\n')
        .forEach((line, i) => {
          if (drawn.test(line) && !/^\s*(\*|\/\/)/.test(line)) found.push(`${dir}/${name}:${i + 1}: ${line.trim()}`);
        });
    }
  }
  t.same(found, [], 'drawn through StepContext (newInstanceId, newId, tracing) and the step input (now) instead');
});
