import t from 'tap';
import { parseSse, type SseEvent } from '../../src/shared/sse.js';

/** Every event of a body delivered in `chunks` (split anywhere, as a network would). */
async function events(...chunks: string[]): Promise<SseEvent[]> {
  const bytes = chunks.map((c) => new TextEncoder().encode(c));
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      for (const b of bytes) controller.enqueue(b);
      controller.close();
    },
  });
  const out: SseEvent[] = [];
  for await (const ev of parseSse(body)) out.push(ev);
  return out;
}

t.test('one event per blank-line-separated block, fields by name, one leading space dropped', async (t) => {
  t.same(await events('id: 1\nevent: log\ndata: {"a":1}\n\nid: 2\ndata:x\n\n'), [
    { id: '1', event: 'log', data: '{"a":1}' },
    { id: '2', data: 'x' },
  ]);
});

t.test('multi-line data is joined with newlines; a comment line is kept as comment', async (t) => {
  t.same(await events(':keep-alive\n\ndata: one\ndata: two\n\n'), [{ comment: 'keep-alive' }, { data: 'one\ntwo' }]);
});

t.test('a block split across chunks, even inside a UTF-8 character, reads as one event', async (t) => {
  const text = 'data: é💡\n\n';
  const bytes = new TextEncoder().encode(text);
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      for (const b of bytes) controller.enqueue(Uint8Array.of(b));
      controller.close();
    },
  });
  const out: SseEvent[] = [];
  for await (const ev of parseSse(body)) out.push(ev);
  t.same(out, [{ data: 'é💡' }]);
});

t.test('an unterminated last block is not an event; a field without a colon has an empty value', async (t) => {
  t.same(await events('data\n\n', 'data: cut'), [{ data: '' }]);
});
