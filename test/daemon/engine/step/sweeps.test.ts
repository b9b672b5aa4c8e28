import t from 'tap';
import { MemoryStep, typesOf } from '../../../helpers/step.js';

const keep = (m: MemoryStep, ttlSeconds: number, messageId: string | null = null) =>
  m.run({
    kind: 'event',
    organization: 'default',
    eventType: 'paid',
    correlationKey: null,
    data: {},
    ttlSeconds,
    messageId,
    dedupKey: messageId === null ? null : `default|${messageId}`,
    elsewhere: [],
  });

const memory = (m: MemoryStep, key: string, expiresAt: string | null) =>
  m.apply({
    type: 'memory.written',
    organization: 'default',
    namespace: 'ns',
    key,
    entry: { value: key, updatedAt: m.now.toISOString(), expiresAt },
  });

t.test('a sweep with nothing expired writes nothing', async (t) => {
  const m = new MemoryStep();
  keep(m, 60, 'm1');
  const r = m.run({ kind: 'sweep', memoryBatch: 10 });
  t.equal(r.answer, 0);
  t.same(r.records, []);
});

t.test('a sweep removes expired kept messages, message ids and memory entries, in that order', async (t) => {
  const m = new MemoryStep();
  keep(m, 1, 'm1');
  keep(m, 100);
  memory(m, 'old', new Date(m.ms + 1000).toISOString());
  memory(m, 'kept', null);
  m.ms += 2000;
  const r = m.run({ kind: 'sweep', memoryBatch: 10 });
  t.same(typesOf(r.records), ['message.removed', 'messageId.expired', 'memory.written']);
  t.equal(Object.keys(m.state.messages).length, 1, 'the message still in its ttl stays');
  t.same(Object.keys(m.state.messageIds), []);
  t.same(Object.keys(m.state.memory.default?.ns ?? {}), ['kept']);
});

t.test('a sweep removes at most memoryBatch memory entries; the next takes the rest', async (t) => {
  const m = new MemoryStep();
  for (const k of ['a', 'b', 'c']) memory(m, k, new Date(m.ms + 1).toISOString());
  m.ms += 10;
  t.equal(m.run({ kind: 'sweep', memoryBatch: 2 }).answer, 2);
  t.equal(m.run({ kind: 'sweep', memoryBatch: 2 }).answer, 1);
  t.equal(m.run({ kind: 'sweep', memoryBatch: 2 }).answer, 0);
});
