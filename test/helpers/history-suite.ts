/**
 * What every history promises the engine (history-store.ts), run against each implementation:
 * the files of history.ts (test/daemon/store/history-suite-file.test.ts) and the PostgreSQL
 * table (history-suite-pg.test.ts). Damage and torn writes, which only files have, are tested
 * beside them.
 */
import type { Test } from 'tap';
import { PAIRS_TAG, type HistoryStore, type ListRange, type TagEquals } from '../../src/daemon/store/history-store.js';

/** Opens a history of one test's own place; every open of it sees the same documents. */
export type OpenHistory = () => Promise<HistoryStore & { readonly done?: () => Promise<void> }>;
export type HistoryPlace = (t: Test) => Promise<OpenHistory>;

const ID = (n: number, day = '2026-11-20') => `${day}-${String(n).padStart(4, '0')}`;

export function historySuite(t: Test, place: HistoryPlace): void {
  t.test('a document put is there once durable, whole or in pieces; the later copy wins', async (t) => {
    const open = await place(t);
    const h = await open();
    await h.putJson('2026-11-20', ID(1), JSON.stringify({ v: 1 }), ['flow', '2', '']);
    await h.putJson('2026-11-20', ID(2), { open: '{"records":[', parts: ['1', '2'], close: ']}' }, ['flow', '2']);
    await h.putJson('2026-11-20', ID(1), JSON.stringify({ v: 2 }), ['flow', '3', 'parent']);
    t.same(await h.get('2026-11-20', ID(1)), { v: 2 });
    t.same(await h.get('2026-11-20', ID(2)), { records: [1, 2] });
    t.equal(await h.get('2026-11-20', ID(9)), null, 'an id never put');
    t.equal(await h.get('2026-11-21', ID(1)), null, 'another bucket');
    await h.close();
    await h.done?.();
    const again = await open();
    t.same(
      await again.list('2026-11-20'),
      [
        { id: ID(2), tags: ['flow', '2'] },
        { id: ID(1), tags: ['flow', '3', 'parent'] },
      ],
      'newest id first, the latest tags of each, after a reopen',
    );
    t.same(await again.get('2026-11-20', ID(1)), { v: 2 });
    await again.close();
    await again.done?.();
  });

  t.test('buckets are listed newest first; an empty one is not there', async (t) => {
    const open = await place(t);
    const h = await open();
    t.same(await h.buckets(), []);
    for (const day of ['2026-11-02', '2026-11-20', '2026-10-31']) await h.putJson(day, ID(1, day), '{}', ['flow']);
    t.same(await h.buckets(), ['2026-11-20', '2026-11-02', '2026-10-31']);
    t.same(await h.list('2026-11-03'), []);
    await h.close();
    await h.done?.();
  });

  t.test('a listing takes the ids below one, newest first, as many as asked', async (t) => {
    const open = await place(t);
    const h = await open();
    for (const n of [3, 1, 4, 2, 5]) await h.putJson('2026-11-20', ID(n), '{}', ['flow', String(n)]);
    const ids = async (range?: { below?: string; limit?: number }) =>
      (await h.list('2026-11-20', range)).map((e) => e.id);
    t.same(await ids(), [ID(5), ID(4), ID(3), ID(2), ID(1)], 'every one, newest first');
    t.same(await ids({ limit: 2 }), [ID(5), ID(4)], 'the newest two');
    t.same(await ids({ below: ID(4) }), [ID(3), ID(2), ID(1)], 'below an id listed');
    t.same(await ids({ below: `${ID(3)}x`, limit: 2 }), [ID(3), ID(2)], 'below an id never put');
    t.same(await ids({ below: ID(1) }), [], 'nothing below the oldest');
    await h.putJson('2026-11-20', ID(6), '{}', ['flow', '6']);
    t.same(await ids({ limit: 1 }), [ID(6)], 'a later put is listed');
    t.same(
      await h.list('2026-11-20', { below: ID(3), limit: 1 }),
      [{ id: ID(2), tags: ['flow', '2'] }],
      'with its tags',
    );
    await h.close();
    await h.done?.();
  });

  t.test('a listing narrowed by tags keeps those that have them, and those put without them', async (t) => {
    const open = await place(t);
    const h = await open();
    await h.putJson('2026-11-20', ID(1), '{}', ['flow', '2', '', 'acme', 'E%20X']);
    await h.putJson('2026-11-20', ID(2), '{}', ['flow', '2', '', 'other', 'E%20X']);
    await h.putJson('2026-11-20', ID(3), '{}', ['flow', '1', '', 'acme', '']);
    await h.putJson('2026-11-20', ID(4), '{}', ['flow', '2']); // before the later tags were written
    await h.putJson('2026-11-20', ID(5), '{}'); // no tags at all
    await h.putJson('2026-11-20', ID(6), '{}', ['other-flow', '2', '', 'acme', 'E%20X']);
    const ids = async (range: ListRange) => (await h.list('2026-11-20', range)).map((e) => e.id);
    const failedAcme: TagEquals[] = [
      [0, 'flow'],
      [1, '2'],
      [3, 'acme'],
      [4, 'E%20X'],
    ];
    t.same(await ids({ tags: failedAcme }), [ID(5), ID(4), ID(1)], 'a match, and those without the tags');
    t.same(await ids({ tags: failedAcme, limit: 2 }), [ID(5), ID(4)], 'as many as asked, of those kept');
    t.same(await ids({ tags: failedAcme, below: ID(4), limit: 2 }), [ID(1)], 'below an id');
    t.same(await ids({ tags: [[4, '']] }), [ID(5), ID(4), ID(3)], 'an empty tag is a value');
    t.same(await ids({ tags: [] }), [ID(6), ID(5), ID(4), ID(3), ID(2), ID(1)], 'no narrowing');
    await h.close();
    await h.done?.();
  });

  t.test('a listing narrowed by pairs keeps those whose pairs tag holds each, after a reopen too', async (t) => {
    const open = await place(t);
    let h = await open();
    const tagged = (pairs: string) => [...Array.from({ length: PAIRS_TAG }, () => 'x'), pairs];
    await h.putJson('2026-11-20', ID(1), '{}', tagged('customer=Ada&orderId=A-1001'));
    await h.putJson('2026-11-20', ID(2), '{}', tagged('customer=Bob&orderId=A-1002'));
    await h.putJson('2026-11-20', ID(3), '{}', tagged('orderId=A-1003'));
    await h.putJson('2026-11-20', ID(4), '{}', tagged(''));
    await h.putJson('2026-11-20', ID(5), '{}', ['flow', '2']); // before pairs were tagged: none
    await h.putJson('2026-11-20', ID(6), '{}', tagged('customer=Ada&orderId=A-1006'));
    for (const reopened of [false, true]) {
      if (reopened) {
        await h.close();
        await h.done?.();
        h = await open();
      }
      const ids = async (range: ListRange) => (await h.list('2026-11-20', range)).map((e) => e.id);
      t.same(await ids({ pairs: [['orderId', 'A-1002']] }), [ID(2)], 'one');
      t.same(await ids({ pairs: [['customer', 'Ada']] }), [ID(6), ID(1)], 'newest first');
      t.same(await ids({ pairs: [['customer', 'Ada']], limit: 1 }), [ID(6)], 'as many as asked');
      t.same(await ids({ pairs: [['customer', 'Ada']], below: ID(6) }), [ID(1)], 'below an id');
      t.same(
        await ids({
          pairs: [
            ['customer', 'Ada'],
            ['orderId', 'A-1001'],
          ],
        }),
        [ID(1)],
        'each must hold',
      );
      t.same(await ids({ pairs: [['customer', 'Ad']] }), [], 'a whole value, not a part');
      t.same(await ids({ pairs: [['orderId', 'A-1002']], tags: [[0, 'y']] }), [], 'and the tags too');
      t.equal((await ids({ pairs: [] })).length, 6, 'no pairs: no narrowing');
    }
    await h.close();
    await h.done?.();
  });

  t.test('many puts at once are all durable', async (t) => {
    const open = await place(t);
    const h = await open();
    await Promise.all(Array.from({ length: 300 }, (_, i) => h.putJson('2026-11-20', ID(i), JSON.stringify({ i }))));
    await h.close();
    await h.done?.();
    const again = await open();
    t.equal((await again.list('2026-11-20')).length, 300);
    t.same(await again.get('2026-11-20', ID(299)), { i: 299 });
    await again.close();
    await again.done?.();
  });

  t.test('a bad bucket, id or tag is refused', async (t) => {
    const open = await place(t);
    const h = await open();
    await t.rejects(h.putJson('20261120', ID(1), '{}'), TypeError);
    await t.rejects(h.putJson('2026-11-20', 'an id', '{}'), /may not hold white space or \|/);
    await t.rejects(h.putJson('2026-11-20', ID(1), '{}', ['a|b']), /may not hold white space or \|/);
    await t.rejects(h.putJson('2026-11-20', ID(1), '{}', ['a\nb']), /may not hold white space or \|/, 'a line break');
    t.same(await h.buckets(), [], 'nothing written');
    await h.close();
    await h.done?.();
  });

  t.test('prune deletes the buckets last written before the cut-off, and only those', async (t) => {
    const open = await place(t);
    const h = await open();
    await h.putJson('2026-11-19', ID(1, '2026-11-19'), '{}');
    await h.putJson('2026-11-20', ID(1), '{}');
    t.same(await h.prune(new Date(0)), { buckets: 0, bytes: 0 }, 'nothing is older than the epoch');
    const report = await h.prune(new Date(Date.now() + 60_000));
    t.equal(report.buckets, 2);
    t.ok(report.bytes > 0);
    t.same(await h.buckets(), []);
    t.equal(await h.get('2026-11-20', ID(1)), null);
    t.same(h.damage(), { damagedRecords: 0, findings: [] });
    await h.close();
    await h.done?.();
  });
}
