import t from 'tap';
import type { WfxRecord } from '../../../src/daemon/state/records.js';
import { crashImage, engineHarness, type EngineHarness } from '../../helpers/engine.js';
import { eventually } from '../../helpers/eventually.js';
import { codeOf } from '../../helpers/error-code.js';

const WAITS = `processId: AUTO
name: Waits
nodes:
  start: { type: startEvent, next: ask }
  ask: { type: inputNode, inputType: textbox, next: done }
  done: { type: endEvent }
`;

async function seed(h: EngineHarness, n: number): Promise<{ processId: string; ids: string[] }> {
  const processId = await h.publish(WAITS);
  const ids: string[] = [];
  for (let i = 0; i < n; i++) {
    h.clock.advance(1);
    ids.push((await h.start(processId)).processInstanceId);
  }
  h.clock.advance(1);
  return { processId, ids };
}

const asked = (processId: string) => ({
  organization: 'default',
  operation: 'cancel' as const,
  params: null,
  query: { processId },
  by: 'key:k1',
});

t.test("each chunk's changes and its progress are one transaction: one journal entry", async (t) => {
  const h = await engineHarness(t, undefined, undefined, { bulkRate: 50 });
  const { processId, ids } = await seed(h, 12);
  const commits: Array<readonly WfxRecord[]> = [];
  h.store.onCommit((records) => {
    if (records.some((r) => r.type === 'bulk.progressed')) commits.push(records);
  });
  const created = await h.engine.bulk.create(asked(processId));
  await eventually('completed', () => h.engine.bulk.get('default', created.bulkId).state === 'COMPLETED');
  t.equal(commits.length, 3, 'twelve executions, five a chunk at 50 a second: three chunks');
  let from = 0;
  const lane = h.store.state.bulks[created.bulkId]!.lanes['0']!;
  for (const records of commits) {
    const progressed = records.filter((r) => r.type === 'bulk.progressed');
    t.equal(progressed.length, 1, 'one progress record per chunk');
    const p = progressed[0]!;
    const finished = records.filter((r) => r.type === 'instance.finished').map((r) => r.instanceId);
    t.same(finished, lane.ids.slice(from, p.next), 'with exactly the executions it advanced over');
    from = p.next;
  }
  t.equal(from, ids.length);
});

t.test('after a crash a bulk operation resumes where its journal left it, never applied twice', async (t) => {
  const h = await engineHarness(t, undefined, undefined, { bulkRate: 20 });
  const { processId, ids } = await seed(h, 20);
  const created = await h.engine.bulk.create(asked(processId));
  t.equal(created.total, 20);
  await eventually('a few chunks applied', () => h.engine.bulk.get('default', created.bulkId).done >= 4);
  const image = await crashImage(t, h);
  const cut = h.engine.bulk.get('default', created.bulkId);
  await h.close();

  const after = await engineHarness(t, image, h.clock, { bulkRate: 10_000 });
  const resumed = after.engine.bulk.get('default', created.bulkId);
  t.ok(resumed.done >= 4 && resumed.done <= cut.done, 'the progress as durable at the crash');
  t.equal(resumed.state, 'RUNNING');
  await eventually(
    'completed after the restart',
    () => after.engine.bulk.get('default', created.bulkId).state === 'COMPLETED',
  );
  t.match(after.engine.bulk.get('default', created.bulkId), { total: 20, done: 20, skipped: 0 });
  for (const id of ids) t.equal((await after.get(id)).stateCd, 3, `${id} cancelled`);
  const page = after.engine.bulk.results('default', created.bulkId, { limit: 100 });
  t.equal(new Set(page.items.map((r) => r.processInstanceId)).size, 20, 'a result per execution');
});

t.test(
  'the selection is fixed at creation; a query past the limit, or a flow not the organization’s, is refused',
  async (t) => {
    const h = await engineHarness(t, undefined, undefined, { bulkRate: 10_000, limits: { bulkExecutions: 5 } });
    const { processId } = await seed(h, 6);
    t.equal(await codeOf(h.engine.bulk.create(asked(processId))), 'BULK_TOO_LARGE');
    t.same(h.engine.bulk.list({ organization: null, limit: 10 }).items, [], 'nothing created');
    const dry = await h.engine.bulk.dryRun(asked(processId), 3);
    t.match(dry, { count: 6, maxExecutions: 5 });
    t.equal(dry.sample.length, 3);
    t.equal(await codeOf(h.engine.bulk.create({ ...asked(processId), organization: 'acme' })), 'PROCESS_NOT_FOUND');
    const bounded = await h.engine.bulk.create({
      ...asked(processId),
      query: { processId, startedBefore: new Date(h.clock.ms - 3).toISOString() },
    });
    t.equal(bounded.total, 3, "the query's own bound, when earlier than the creation, holds");
  },
);

t.test("applied with its dry run's startedBefore, an operation selects what the dry run counted", async (t) => {
  const h = await engineHarness(t, undefined, undefined, { bulkRate: 10_000 });
  const { processId, ids } = await seed(h, 3);
  const dry = await h.engine.bulk.dryRun(asked(processId), 10);
  t.equal(dry.count, 3);
  t.equal(dry.startedBefore, new Date(h.clock.ms).toISOString(), 'the instant it selected before');
  h.clock.advance(1);
  const later = (await h.start(processId)).processInstanceId;
  h.clock.advance(1);
  const op = await h.engine.bulk.create({
    ...asked(processId),
    query: { processId, startedBefore: dry.startedBefore },
  });
  t.equal(op.total, 3, 'the execution started after the preview is not selected');
  await eventually('the operation ends', () => h.engine.bulk.get('default', op.bulkId).state === 'COMPLETED');
  for (const id of ids) t.equal((await h.get(id)).stateCd, 3, `${id}, previewed, cancelled`);
  t.equal((await h.get(later)).stateCd, 0, 'the later one still runs');
});

t.test('a bulk retry brings failed chains back from history, children with their parent', async (t) => {
  // The touch check (on in every engine test) allows the child each revives: its tree is named.
  const h = await engineHarness(t, undefined, undefined, { bulkRate: 10_000 });
  const processId = await h.publish(`processId: AUTO
name: Chain
nodes:
  start: { type: startEvent, next: sub }
  sub:
    type: subProcess
    nodes:
      s: { type: startEvent, next: check }
      check: { type: scriptTask, script: "if (!vars.ok) throw new Error('not ok'); return { checked: 1 }", next: e }
      e: { type: endEvent }
    next: done
  done: { type: endEvent }
`);
  const ids: string[] = [];
  for (let i = 0; i < 3; i++) ids.push((await h.start(processId)).processInstanceId);
  for (const id of ids) {
    await eventually(`${id} failed`, async () => (await h.get(id)).stateCd === 2);
    await h.archived(id);
  }
  h.clock.advance(1); // the selection takes executions started before its creation
  const bulk = await h.engine.bulk.create({
    ...asked(processId),
    operation: 'retry',
    params: { data: { ok: true } },
    query: { processId, state: 'FAILED' },
  });
  t.equal(bulk.total, 3);
  await eventually('the bulk ended', () => h.engine.bulk.get(null, bulk.bulkId).state === 'COMPLETED');
  for (const id of ids)
    t.equal(
      (
        await eventually(`${id} completed`, async () => {
          const inst = await h.get(id);
          return inst.stateCd === 1 && inst;
        })
      ).stateCd,
      1,
      'retried with its child and completed',
    );
});
