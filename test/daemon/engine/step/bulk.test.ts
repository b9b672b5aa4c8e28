import t from 'tap';
import { BULK_RESULTS_KEPT, BULKS_KEPT, retiredBulks } from '../../../../src/daemon/engine/bulk/selection.js';
import { bulkResults, bulkView } from '../../../../src/daemon/engine/bulk/views.js';
import type { BulkOperation } from '../../../../src/daemon/state/bulk.js';
import { logEntries } from '../../../../src/daemon/state/log-line.js';
import { STATE } from '../../../../src/daemon/state/state.js';
import { bulkOf, MemoryStep, typesOf } from '../../../helpers/step.js';
import { codeOfCall as errorCode } from '../../../helpers/error-code.js';

const WAITS = `processId: AUTO
name: Waits
nodes:
  start: { type: startEvent, next: ask }
  ask: { type: inputNode, inputType: textbox, next: done }
  done: { type: endEvent }
`;

async function waiting(m: MemoryStep, n: number, organization = 'default'): Promise<string[]> {
  const pid = await m.publish(WAITS, organization);
  const ids: string[] = [];
  for (let i = 0; i < n; i++) {
    m.ms++;
    const r = m.run({ kind: 'start', request: { organization, processId: pid, data: {}, correlationKey: null } });
    ids.push(r.answer.processInstanceId);
  }
  m.ms++;
  return ids;
}

t.test('a chunk cancels its executions and writes the lane progress in the same step', async (t) => {
  const m = new MemoryStep();
  const ids = await waiting(m, 5);
  const bulk = bulkOf(m, ids);
  const lane = () => m.state.bulks[bulk.bulkId]!.lanes['0']!;
  const r = m.run({ kind: 'bulk.chunk', bulkId: bulk.bulkId, lane: 0, from: 0, count: 3, pre: null });
  t.equal(r.answer, 3, 'three executions taken');
  const finished = r.records.filter((rec) => rec.type === 'instance.finished').map((rec) => rec.instanceId);
  t.same(finished, lane().ids.slice(0, 3), 'the first three of the lane, newest first, are cancelled');
  t.same(typesOf(r.records).at(-1), 'bulk.progressed', 'the progress is the last record of the same step');
  t.match(r.records.at(-1), { type: 'bulk.progressed', lane: 0, next: 3, skipped: {} });
  for (const id of finished) t.equal(m.instance(id).stateCd, STATE.CANCELLED);
  const log = logEntries(m.instance(finished[0]!))
    .map((l) => l.message)
    .join('\n');
  t.match(log, `by bulk operation ${bulk.bulkId} (key:k1)`, "the execution's log says which operation and who");

  const stale = m.run({ kind: 'bulk.chunk', bulkId: bulk.bulkId, lane: 0, from: 0, count: 3, pre: null });
  t.equal(stale.answer, 0, 'a chunk decided on an older state takes nothing');
  t.same(stale.records, [], 'and writes nothing: no execution is given the operation twice');

  const last = m.run({ kind: 'bulk.chunk', bulkId: bulk.bulkId, lane: 0, from: 3, count: 3, pre: null });
  t.equal(last.answer, 2);
  t.same(typesOf(last.records).slice(-2), ['bulk.progressed', 'bulk.ended'], 'the last chunk ends the operation');
  t.match(bulkView(m.state.bulks[bulk.bulkId]!, m.now), { state: 'COMPLETED', total: 5, done: 5, skipped: 0 });
});

t.test('an execution that ended since the selection, or is outside the query, is skipped with a code', async (t) => {
  const m = new MemoryStep();
  const ids = await waiting(m, 4);
  const bulk = bulkOf(m, ids, { query: { processId: m.instance(ids[0]!).processId } });
  const sorted = m.state.bulks[bulk.bulkId]!.lanes['0']!.ids;
  m.run({ kind: 'cancel', instanceId: sorted[1]!, reason: 'by hand' });
  const r = m.run({ kind: 'bulk.chunk', bulkId: bulk.bulkId, lane: 0, from: 0, count: 10, pre: null });
  t.match(r.records.at(-2), {
    type: 'bulk.progressed',
    next: 4,
    skipped: { [sorted[1]!]: 'INSTANCE_NOT_RUNNING' },
  });
  const page = bulkResults(m.state.bulks[bulk.bulkId]!, { limit: 10 });
  t.same(
    page.items.map((i) => [i.processInstanceId, i.outcome, i.code]),
    [
      [sorted[0], 'DONE', null],
      [sorted[1], 'SKIPPED', 'INSTANCE_NOT_RUNNING'],
      [sorted[2], 'DONE', null],
      [sorted[3], 'DONE', null],
    ],
  );

  const m2 = new MemoryStep();
  const two = await waiting(m2, 2);
  const other = await waiting(m2, 1, 'acme');
  const b = bulkOf(m2, [...two, ...other], { query: { version: '1' } });
  (m2.instance(two[0]!) as { processVersion: string }).processVersion = '2';
  m2.run({ kind: 'bulk.chunk', bulkId: b.bulkId, lane: 0, from: 0, count: 10, pre: null });
  const results = bulkResults(m2.state.bulks[b.bulkId]!, { limit: 10, outcome: 'SKIPPED' });
  t.same(
    results.items.map((i) => [i.processInstanceId, i.code]).sort(),
    [
      [two[0], 'BULK_NO_LONGER_MATCHES'],
      [other[0], 'INSTANCE_NOT_FOUND'],
    ].sort(),
    'one whose version changed, and one of another organization, are skipped and left alone',
  );
  t.equal(m2.instance(two[0]!).stateCd, STATE.RUNNING);
  t.equal(m2.instance(other[0]!).stateCd, STATE.RUNNING);
});

t.test('a cancelled operation takes no further chunk; what was done stays done', async (t) => {
  const m = new MemoryStep();
  const ids = await waiting(m, 4);
  const bulk = bulkOf(m, ids);
  m.run({ kind: 'bulk.chunk', bulkId: bulk.bulkId, lane: 0, from: 0, count: 2, pre: null });
  const c = m.run({ kind: 'bulk.cancel', bulkId: bulk.bulkId, organization: 'default', by: 'key:k2' });
  t.same(typesOf(c.records), ['bulk.ended']);
  t.match(bulkView(c.answer, m.now), { state: 'CANCELLED', cancelledBy: 'key:k2', done: 2, pending: 2 });
  const r = m.run({ kind: 'bulk.chunk', bulkId: bulk.bulkId, lane: 0, from: 2, count: 2, pre: null });
  t.equal(r.answer, 0);
  t.same(r.records, []);
  const lane = m.state.bulks[bulk.bulkId]!.lanes['0']!;
  t.equal(m.instance(lane.ids[2]!).stateCd, STATE.RUNNING, 'the rest runs on');
  t.equal(m.instance(lane.ids[0]!).stateCd, STATE.CANCELLED, 'the first chunk stays cancelled');
  t.equal(
    errorCode(() => m.run({ kind: 'bulk.cancel', bulkId: bulk.bulkId, organization: 'default', by: 'key:k2' })),
    'BULK_NOT_RUNNING',
  );
  t.equal(
    errorCode(() => m.run({ kind: 'bulk.cancel', bulkId: bulk.bulkId, organization: 'acme', by: 'key:k3' })),
    'BULK_NOT_FOUND',
    "another organization's operation is not found",
  );
});

t.test('running operations are limited per organization and in all, checked before any record', async (t) => {
  const m = new MemoryStep({ limits: { bulkOperations: 2, bulkOperationsTotal: 3 } });
  const ids = await waiting(m, 1);
  bulkOf(m, ids);
  bulkOf(m, ids);
  const before = Object.keys(m.state.bulks).length;
  t.equal(
    errorCode(() => bulkOf(m, ids)),
    'BULK_LIMIT_EXCEEDED',
    'a third of one organization',
  );
  t.equal(Object.keys(m.state.bulks).length, before, 'nothing written');
  bulkOf(m, ids, { organization: 'acme' });
  t.equal(
    errorCode(() => bulkOf(m, ids, { organization: null })),
    'BULK_LIMIT_EXCEEDED',
    'a fourth in all',
  );
});

t.test('an operation that selects nothing is completed at once', async (t) => {
  const m = new MemoryStep();
  const b = bulkOf(m, []);
  t.match(bulkView(m.state.bulks[b.bulkId]!, m.now), { state: 'COMPLETED', total: 0 });
});

t.test('results page through the lanes newest first, with a cursor', async (t) => {
  const lane = (ids: string[], next: number, skipped: Record<string, 'INSTANCE_NOT_RUNNING'> = {}) => ({
    ids,
    next,
    skipped,
    at: '2026-11-21T10:00:00.000Z',
  });
  const b = {
    lanes: { '1': lane(['e', 'c', 'a'], 3, { c: 'INSTANCE_NOT_RUNNING' }), '2': lane(['f', 'd', 'b'], 2) },
  } as unknown as BulkOperation;
  const first = bulkResults(b, { limit: 2 });
  t.same(
    first.items.map((i) => i.processInstanceId),
    ['f', 'e'],
  );
  t.equal(first.nextCursor, 'e');
  const second = bulkResults(b, { limit: 2, cursor: 'e' });
  t.same(
    second.items.map((i) => i.processInstanceId),
    ['d', 'c'],
    'b, not reached yet in its lane, has no result',
  );
  const third = bulkResults(b, { limit: 2, cursor: second.nextCursor! });
  t.same(
    third.items.map((i) => i.processInstanceId),
    ['a'],
  );
  t.equal(third.nextCursor, null);
  t.same(bulkResults(b, { limit: 5, outcome: 'SKIPPED' }).items, [
    { processInstanceId: 'c', outcome: 'SKIPPED', code: 'INSTANCE_NOT_RUNNING' },
  ]);
});

t.test('finished operations are kept within a count and a number of results, the oldest forgotten first', async (t) => {
  const finished = (n: number, size: number, state = 'COMPLETED') =>
    ({
      bulkId: `b${String(n).padStart(4, '0')}`,
      state,
      lanes: { '0': { ids: Array.from({ length: size }, () => 'x'), next: size, skipped: {}, at: '' } },
    }) as unknown as BulkOperation;
  const many = Object.fromEntries(Array.from({ length: BULKS_KEPT + 5 }, (_, i) => [`b${i}`, finished(i, 1)]));
  many.running = finished(9999, 1, 'RUNNING');
  const retired = retiredBulks(many);
  t.equal(retired.length, 6, 'room for the new one: BULKS_KEPT - 1 finished kept');
  t.same(retired.sort(), ['b0000', 'b0001', 'b0002', 'b0003', 'b0004', 'b0005']);
  const big = { a: finished(1, BULK_RESULTS_KEPT - 10), b: finished(2, 20) };
  t.same(retiredBulks(big), ['b0001'], 'the older is forgotten when both hold more results than kept');
});

t.test('an operation whose chunks keep failing is ended as FAILED with the error', async (t) => {
  const m = new MemoryStep();
  const ids = await waiting(m, 2);
  const bulk = bulkOf(m, ids);
  const error = { code: 'HISTORY_DAMAGED' as const, message: 'a record fails its checksum' };
  const r = m.run({ kind: 'bulk.fail', bulkId: bulk.bulkId, error });
  t.same(typesOf(r.records), ['bulk.ended']);
  t.match(bulkView(m.state.bulks[bulk.bulkId]!, m.now), { state: 'FAILED', error, pending: 2 });
  t.same(m.run({ kind: 'bulk.fail', bulkId: bulk.bulkId, error }).records, [], 'once');
});
