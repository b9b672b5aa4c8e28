import t from 'tap';
import { sseText } from '../../../src/daemon/api/sse-writer.js';

t.test('sseText writes an event as text/event-stream has it, blank line included', async (t) => {
  t.equal(sseText({ id: '7', data: '{"a":1}' }), 'id: 7\ndata: {"a":1}\n\n');
  t.equal(sseText({ event: 'end', data: '{}' }), 'event: end\ndata: {}\n\n');
  t.equal(sseText({ data: 'one\ntwo' }), 'data: one\ndata: two\n\n', 'a line of data each');
  t.equal(sseText({ comment: 'heartbeat' }), ':heartbeat\n\n');
  t.equal(sseText({}), '', 'nothing for an empty event');
});
