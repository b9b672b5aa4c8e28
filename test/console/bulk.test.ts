import t from 'tap';
import type { BulkView } from '../../src/shared/api/bulk.js';
import { bulkBody, bulkQueryOf, progressWords, selectionWords } from '../../src/console/model/bulk.js';
import { filtersFromQuery } from '../../src/console/model/filters.js';

t.test("bulkQueryOf: the list's filters are the operation's query, by the same names", async (t) => {
  const filters = filtersFromQuery(
    new URLSearchParams('processId=order&state=FAILED&errorCode=HTTP_ERROR&failedNode=charge&version=x'),
  );
  t.same(bulkQueryOf(filters), { processId: 'order', state: 'FAILED', errorCode: 'HTTP_ERROR', failedNode: 'charge' });
  t.same(bulkQueryOf({}), {}, 'no filters: every execution');
  t.same(
    bulkQueryOf({ where: 'orderId=A-1002' }),
    { where: ['orderId=A-1002'] },
    "a search attribute: the wire's list",
  );
  t.match(selectionWords(filters), /processId order, state FAILED/);
  t.match(selectionWords({}), /every top-level execution/);
});

t.test('bulkBody: each operation with its own params; a dry run asks for a sample', async (t) => {
  const q = { state: 'RUNNING' } as const;
  const none = { dataText: '', version: '' };
  t.same(bulkBody({ operation: 'cancel', ...none }, q, true), {
    ok: true,
    body: { operation: 'cancel', query: q, dryRun: true, sample: 10 },
  });
  t.same(bulkBody({ operation: 'cancel', ...none }, q, false), { ok: true, body: { operation: 'cancel', query: q } });
  t.same(bulkBody({ operation: 'retry', dataText: ' {"token": "new"} ', version: '' }, q, false), {
    ok: true,
    body: { operation: 'retry', query: q, params: { data: { token: 'new' } } },
  });
  t.same(bulkBody({ operation: 'replay', ...none }, q, false), {
    ok: true,
    body: { operation: 'replay', query: q, params: {} },
  });
  for (const text of ['[1]', 'null', '{oops', '"a"'])
    t.equal(bulkBody({ operation: 'retry', dataText: text, version: '' }, q, false).ok, false, `${text} is refused`);
  t.same(bulkBody({ operation: 'move', dataText: '', version: ' 3 ' }, q, false), {
    ok: true,
    body: { operation: 'move', query: q, params: { version: '3' } },
  });
  t.equal(bulkBody({ operation: 'move', ...none }, q, false).ok, false, 'a move names its version');
});

t.test('progressWords: reached of total, done, skipped and what is left', async (t) => {
  const v = { total: 30, done: 10, skipped: 2, pending: 18, state: 'RUNNING' } as BulkView;
  t.equal(progressWords(v), '12 of 30 executions (40%): 10 done, 2 skipped, 18 to go');
  t.equal(progressWords({ ...v, state: 'CANCELLED' }), '12 of 30 executions (40%): 10 done, 2 skipped, 18 not reached');
  t.equal(
    progressWords({ ...v, total: 1, done: 1, skipped: 0, pending: 0, state: 'COMPLETED' }),
    '1 of 1 execution (100%): 1 done, 0 skipped',
  );
  t.equal(
    progressWords({ ...v, total: 0, done: 0, skipped: 0, pending: 0, state: 'COMPLETED' }).startsWith('0 of 0'),
    true,
  );
});
