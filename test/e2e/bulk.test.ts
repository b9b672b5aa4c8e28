import '../setup/fixtures.js'; // fixtures under the OS temp dir (see there)
import t from 'tap';
import { WfxClient } from '../../src/client/client.js';
import type { BulkResult } from '../../src/shared/api/index.js';
import { adminClient, startDaemon } from '../helpers/cli.js';
import { codeOf } from '../helpers/error-code.js';
import { eventually } from '../helpers/eventually.js';

const WAITS = `processId: AUTO
name: Waits
nodes:
  start: { type: startEvent, next: ask }
  ask: { type: inputNode, inputType: textbox, next: done }
  done: { type: endEvent }
`;

t.test('bulk cancel by query over HTTP: dry run, exactly the selection, progress, results, permissions', async (t) => {
  const cwd = t.testdir({});
  const { url } = await startDaemon(t, { cwd, args: ['--bulk-rate', '100'] });
  const admin = await adminClient(cwd, url);
  const keyOf = async (role: 'operator' | 'developer', organization: string) =>
    new WfxClient({
      url,
      apiKey: (await admin.keys.create({ name: `${role}@${organization}`, role, organization })).apiKey,
      credentialSource: 'test',
    });
  const dev = await keyOf('developer', 'acme');
  const operator = await keyOf('operator', 'acme');
  const stranger = await keyOf('developer', 'globex');
  const publish = async (as: WfxClient) =>
    (await as.flows.publish({ source: WAITS.replace('AUTO', crypto.randomUUID()) })).processId;
  const [flow, another, theirs] = [await publish(dev), await publish(dev), await publish(stranger)];
  const start = async (as: WfxClient, processId: string, n: number, correlationKey?: string) => {
    const ids: string[] = [];
    for (let i = 0; i < n; i++)
      ids.push(
        (await as.process.start({ processId, data: {}, ...(correlationKey && { correlationKey }) })).processInstanceId,
      );
    return ids;
  };
  const selected = await start(dev, flow, 40, 'batch-7');
  const sameFlowOtherKey = await start(dev, flow, 3, 'batch-8');
  const otherFlow = await start(dev, another, 3, 'batch-7');
  const otherOrg = await start(stranger, theirs, 3, 'batch-7');
  const query = { processId: flow, correlationKey: 'batch-7', state: 'RUNNING' as const };

  const dry = await dev.bulk.dryRun({ operation: 'cancel', query, sample: 5 });
  t.equal(dry.count, 40, 'the dry run counts the selection');
  t.same(
    dry.sample.map((s) => s.processInstanceId),
    selected.slice(-5).reverse(),
    'and samples its newest',
  );
  t.equal(await codeOf(operator.bulk.create({ operation: 'cancel', query })), 'FORBIDDEN', 'an operator may not');
  t.equal(await codeOf(operator.bulk.dryRun({ operation: 'cancel', query })), 'FORBIDDEN');

  const created = await dev.bulk.create({ operation: 'cancel', query });
  t.match(created, { state: 'RUNNING', total: 40, organization: 'acme' });
  // At 100 a second the 40 take a few chunks: progress is seen moving, readable by the operator.
  const midway = await eventually('progress is under way', async () => {
    const v = await operator.bulk.get(created.bulkId);
    return v.done > 0 && v;
  });
  t.ok(midway.done + midway.pending + midway.skipped === 40, 'total = done + skipped + pending');
  const done = await eventually('the operation completes', async () => {
    const v = await operator.bulk.get(created.bulkId);
    return v.state === 'COMPLETED' && v;
  });
  t.match(done, { total: 40, done: 40, skipped: 0, pending: 0, etaSeconds: null });
  t.ok(done.finishedAt, 'with its end');

  const results: BulkResult[] = [];
  for (let cursor: string | undefined, page = 0; page < 20; page++) {
    const got = await operator.bulk.results(created.bulkId, { limit: 7, ...(cursor && { cursor }) });
    results.push(...got.items);
    if (got.nextCursor === null) break;
    cursor = got.nextCursor;
  }
  t.same(
    results.map((r) => r.processInstanceId),
    [...selected].reverse(),
    'every selected execution once, in pages, newest first',
  );
  t.ok(
    results.every((r) => r.outcome === 'DONE'),
    'each done',
  );
  for (const id of selected) t.equal((await admin.instances.get(id)).stateCd, 3, `${id} cancelled`);
  for (const id of [...sameFlowOtherKey, ...otherFlow, ...otherOrg])
    t.equal((await admin.instances.get(id)).stateCd, 0, `${id} outside the query: untouched`);
  const log = await admin.instances.logs(selected[0]!);
  t.ok(
    log.some((l) => l.message.includes(`by bulk operation ${created.bulkId} (key:`)),
    'the log says which operation and whose key',
  );

  t.equal(await codeOf(stranger.bulk.get(created.bulkId)), 'BULK_NOT_FOUND', "another organization's is not found");
  t.same((await stranger.bulk.list()).items, []);
  t.equal((await admin.bulk.list()).items.length, 1, 'a system key sees every organization');
  t.equal(await codeOf(dev.bulk.cancel(created.bulkId)), 'BULK_NOT_RUNNING');
});

t.test('a bulk operation cancelled half-way stops before its next chunk; what was done stays done', async (t) => {
  const cwd = t.testdir({});
  const { url } = await startDaemon(t, { cwd, args: ['--bulk-rate', '20'] });
  const admin = await adminClient(cwd, url);
  const { processId } = await admin.flows.publish({ source: WAITS.replace('AUTO', crypto.randomUUID()) });
  const ids: string[] = [];
  for (let i = 0; i < 30; i++) ids.push((await admin.process.start({ processId, data: {} })).processInstanceId);
  const created = await admin.bulk.create({ operation: 'cancel', query: { processId } });
  await eventually('a first chunk applied', async () => (await admin.bulk.get(created.bulkId)).done > 0);
  const cancelled = await admin.bulk.cancel(created.bulkId);
  t.equal(cancelled.state, 'CANCELLED');
  t.match(cancelled.cancelledBy, /^key:/);
  t.ok(cancelled.pending > 0, 'stopped before the end');
  // Cancelled in a step of its own: no chunk after it, so the counts it answered are final.
  const after = await admin.bulk.get(created.bulkId);
  t.equal(after.done, cancelled.done, 'no chunk after the cancel');
  const states = await Promise.all(ids.map(async (id) => (await admin.instances.get(id)).stateCd));
  t.equal(states.filter((s) => s === 3).length, cancelled.done, 'exactly those done are cancelled');
  t.equal(states.filter((s) => s === 0).length, cancelled.pending, 'the rest run on');
});
