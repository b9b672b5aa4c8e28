import '../../setup/fixtures.js'; // fixtures under the OS temp dir (see there)
import { existsSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import t from 'tap';
import { IMAGE_NAME } from '../../../src/daemon/at-rest/segments/directory-image.js';
import { engineHarness, type EngineHarness } from '../../helpers/engine.js';
import { eventually } from '../../helpers/eventually.js';

// Search attributes (a flow's `search:`, a node's): set at start, updated when a node
// completes, and listed by (GET /process/instances?where=name=value) whether the execution is
// resident, cold (its summary), or in history (its tags), and after a restart.

const ORDER = `processId: AUTO
name: Order
search:
  orderId: "{order.id}"
  customer: "{order.customer}"
  missing: "{nothing.here}"
nodes:
  start: { type: startEvent, next: review }
  review:
    type: inputNode
    inputType: textbox
    search: { verdict: "{inputValue}", customer: "{no.such.variable}" }
    next: done
  done: { type: endEvent }
`;

const ORG = { organization: 'default' } as const;

for (const cold of [false, true]) {
  t.test(`search attributes, ${cold ? 'cold' : 'resident'}`, async (t) => {
    let h = await engineHarness(t, undefined, undefined, { cold });
    const pid = await h.publish(ORDER);
    const ids: string[] = [];
    for (const [id, customer] of [
      ['A-1001', 'Ada'],
      ['A-1002', 'Bob'],
      ['A-1003', 'Ada'],
    ] as const) {
      ids.push((await h.start(pid, { order: { id, customer } })).processInstanceId);
      h.clock.advance(1000);
    }
    await h.rest();
    const where = async (...pairs: Array<[string, string]>) =>
      (await h.engine.listExecutions({ ...ORG, limit: 50, search: pairs })).items.map((i) => i.processInstanceId);

    t.same(await where(['orderId', 'A-1002']), [ids[1]], 'one run among three by its order id');
    t.same(await where(['customer', 'Ada']), [ids[2], ids[0]], 'newest first');
    t.same(await where(['customer', 'Ada'], ['orderId', 'A-1001']), [ids[0]], 'every pair must hold');
    t.same(await where(['orderId', 'A-9999']), [], 'no such value');
    t.same(await where(['missing', '']), [], 'a template over nothing sets no attribute');
    const item = (await h.engine.listExecutions({ ...ORG, limit: 50, search: [['orderId', 'A-1002']] })).items[0]!;
    t.same(item.search, { orderId: 'A-1002', customer: 'Bob' }, 'the list item carries them');

    // The review node sets `verdict` and removes `customer` (its template resolves to nothing).
    await h.engine.submitTask({
      ...ORG,
      processInstanceId: ids[1]!,
      nodeId: 'review',
      action: 'COMPLETE',
      data: { inputValue: 'approve' },
    });
    await h.archived(ids[1]!);
    t.same(await where(['verdict', 'approve']), [ids[1]], 'a node updated them');
    t.same(await where(['customer', 'Bob']), [], 'and removed one');

    h = await h.restart();
    await h.rest();
    t.same(await where(['orderId', 'A-1003']), [ids[2]], 'after a restart, running');
    t.same(await where(['customer', 'Ada']), [ids[2], ids[0]]);

    // Ended and archived: history's tags answer.
    t.same(await where(['orderId', 'A-1002']), [ids[1]], 'archived: found by its tags');
    t.same(await where(['orderId', 'A-1002'], ['verdict', 'approve']), [ids[1]]);
    t.same(await where(['orderId', 'A-1002'], ['verdict', 'reject']), []);
    const bulk = await h.engine.listExecutions({ ...ORG, limit: 50, search: [['verdict', 'approve']], stateCd: 1 });
    t.same(
      bulk.items.map((i) => i.search),
      [{ orderId: 'A-1002', verdict: 'approve' }],
    );

    // A replay is found by what the execution it replays is about.
    const replay = await h.engine.replay({
      organization: null,
      processInstanceId: ids[1]!,
      nodeId: 'review',
      by: 'key:test',
    });
    t.same(replay.search, { orderId: 'A-1002', verdict: 'approve' }, 'a replay keeps the attributes');
    t.same(await where(['orderId', 'A-1002']), [replay.processInstanceId, ids[1]]);
  });
}

t.test('a long value is kept cut, and found by what was kept', async (t) => {
  const h = await engineHarness(t);
  const pid = await h.publish(`processId: AUTO
name: Long
search: { note: "{note}" }
nodes:
  start: { type: startEvent, next: done }
  done: { type: endEvent }
`);
  const note = 'x'.repeat(500);
  const id = (await h.start(pid, { note })).processInstanceId;
  await h.archived(id);
  const kept = 'x'.repeat(200);
  const found = await h.engine.listExecutions({ ...ORG, limit: 5, search: [['note', kept]] });
  t.same(
    found.items.map((i) => i.processInstanceId),
    [id],
    'a digest in the tag says maybe; the document settles it',
  );
  t.equal(found.items[0]!.search?.note, kept);
});

const MAYBE = `processId: AUTO
name: Maybe searched
search: { orderId: "{orderId}" }
nodes:
  start: { type: startEvent, next: ask }
  ask: { type: inputNode, inputType: textbox, next: done }
  done: { type: endEvent }
`;

for (const from of ['the image', 'the indexes'] as const) {
  t.test(`out of memory, search attributes are indexed, over a restart read from ${from}`, async (t) => {
    const options = { executionCache: 0, cold: false, imageMin: 1 } as const;
    const h = await engineHarness(t, undefined, undefined, options);
    const pid = await h.publish(MAYBE);
    const ids: string[] = [];
    // One without attributes first: the index's search column is made at the second, filled in before it.
    for (const data of [{}, { orderId: 'A-1' }, { orderId: 'A-2' }, { orderId: 'A-1' }]) {
      h.clock.advance(1000);
      ids.push((await h.engine.start({ ...ORG, processId: pid, data })).processInstanceId);
    }
    const cold = () => [...h.engine.executions.coldIds()].length;
    await eventually('every execution out of memory', () => cold() === 4);
    const indexed = (e: EngineHarness) => [...e.engine.executions.coldIdsWithSearch([['orderId', 'A-1']])].sort();
    t.same(indexed(h), [ids[1], ids[3]].sort(), 'the index answers with those that have it, no other');
    const where = async (e: EngineHarness, value: string) =>
      (await e.engine.listExecutions({ ...ORG, limit: 50, search: [['orderId', value]] })).items.map(
        (i) => i.processInstanceId,
      );
    t.same(await where(h, 'A-1'), [ids[3], ids[1]]);
    await h.engine.close();
    await h.store.close();
    const image = join(h.dir, 'executions', IMAGE_NAME);
    t.ok(existsSync(image), 'the close left an image');
    if (from === 'the indexes') await rm(image);
    const h2 = await engineHarness(t, h.dir, h.clock, options);
    t.equal([...h2.engine.executions.coldIds()].length, 4, 'the restart leaves them cold');
    t.same(indexed(h2), [ids[1], ids[3]].sort(), 'indexed again');
    t.same(await where(h2, 'A-1'), [ids[3], ids[1]]);
    t.same(await where(h2, 'A-2'), [ids[2]]);
    t.same(await where(h2, 'A-3'), []);
  });
}
