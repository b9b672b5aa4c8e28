import '../setup/fixtures.js'; // fixtures under the OS temp dir (see there)
import t from 'tap';
import type { WfxClient } from '../../src/client/client.js';
import type { BulkResult, BulkView } from '../../src/shared/api/index.js';
import { adminClient, startDaemon } from '../helpers/cli.js';
import { eventually } from '../helpers/eventually.js';

const WAITS = (name: string) => `processId: AUTO
name: ${name}
nodes:
  start: { type: startEvent, next: ask }
  ask: { type: inputNode, inputType: textbox, next: done }
  done: { type: endEvent }
`;

const SELECTED = 10_000;
/** Starts in flight at once: enough to keep the daemon busy, few enough to stay polite. */
const CONCURRENCY = 64;

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/** Starts `n` executions of `processId` (in `organization`), `CONCURRENCY` at a time; their ids. */
async function startMany(client: WfxClient, processId: string, n: number): Promise<string[]> {
  const ids: string[] = [];
  let next = 0;
  const lane = async (): Promise<void> => {
    while (next < n) {
      next++;
      ids.push((await client.process.startAny({ processId, data: {} })).processInstanceId);
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, lane));
  return ids;
}

/** Every id a list of executions gives for `query`, page after page. */
async function listAll(client: WfxClient, query: Parameters<WfxClient['instances']['search']>[0]): Promise<string[]> {
  const ids: string[] = [];
  for (let cursor: string | undefined, page = 0; page < 1000; page++) {
    const got = await client.instances.search({ ...query, limit: 200, ...(cursor && { cursor }) });
    ids.push(...got.items.map((i) => i.processInstanceId));
    if (got.nextCursor === null) break;
    cursor = got.nextCursor;
  }
  return ids;
}

t.test(
  'a bulk cancel of 10,000 executions, SIGKILLed half-way: after a restart it completes, each cancelled once, none outside the query touched',
  async (t) => {
    const cwd = t.testdir({});
    const first = await startDaemon(t, { cwd, args: ['--bulk-rate', '2000'] });
    const port = new URL(first.url).port;
    let admin = await adminClient(cwd, first.url);
    const publish = async (name: string, organization: string) =>
      (await admin.flows.publish({ source: WAITS(name).replace('AUTO', crypto.randomUUID()), organization })).processId;
    const target = await publish('Target', 'default');
    const neighbour = await publish('Neighbour', 'default');
    const foreign = await publish('Foreign', 'globex');
    const selected = await startMany(admin, target, SELECTED);
    const outside = [...(await startMany(admin, neighbour, 50)), ...(await startMany(admin, foreign, 50))];

    const created = await admin.bulk.create({
      operation: 'cancel',
      query: { processId: target, organization: 'default' },
    });
    t.equal(created.total, SELECTED, 'the selection is fixed at creation');
    const atKill = await eventually(
      'the operation is a good part of the way',
      async () => {
        const v = await admin.bulk.get(created.bulkId);
        return v.done >= SELECTED / 4 && v;
      },
      { pauseMs: 5, maxPauseMs: 5 },
    );
    process.kill(first.pid, 'SIGKILL');
    await eventually('the daemon is gone', () => !alive(first.pid));
    t.ok(atKill.done < SELECTED, `killed half-way (${atKill.done} of ${SELECTED} seen done)`);

    await startDaemon(t, { cwd, args: ['--port', port, '--bulk-rate', '2000'] });
    admin = await adminClient(cwd, first.url);
    const end = await eventually('the operation completes after the restart', async () => {
      const v: BulkView = await admin.bulk.get(created.bulkId);
      return v.state !== 'RUNNING' && v;
    });
    t.match(
      end,
      { state: 'COMPLETED', total: SELECTED, done: SELECTED, skipped: 0, pending: 0 },
      'every one done, none skipped: none found cancelled already, so none was given the cancel twice',
    );

    const results: BulkResult[] = [];
    for (let cursor: string | undefined, page = 0; page < 20; page++) {
      const got = await admin.bulk.results(created.bulkId, { limit: 1000, ...(cursor && { cursor }) });
      results.push(...got.items);
      if (got.nextCursor === null) break;
      cursor = got.nextCursor;
    }
    t.equal(results.length, SELECTED, 'a result per execution');
    t.equal(new Set(results.map((r) => r.processInstanceId)).size, SELECTED, 'each id once');
    t.same(results.map((r) => r.processInstanceId).sort(), [...selected].sort(), 'exactly the selected executions');

    const cancelled = await listAll(admin, { processId: target, state: 'CANCELLED' });
    t.equal(cancelled.length, SELECTED, 'every selected execution is cancelled');
    t.same(await listAll(admin, { processId: target, state: 'RUNNING' }), [], 'none left running');
    const stillRunning = [
      ...(await listAll(admin, { processId: neighbour, state: 'RUNNING' })),
      ...(await listAll(admin, { processId: foreign, state: 'RUNNING' })),
    ];
    t.same(stillRunning.sort(), [...outside].sort(), 'every execution outside the query runs on');

    // The executions on either side of the kill, and a spread of the rest: one cancel each in their log.
    const order = results.map((r) => r.processInstanceId);
    const around = order.slice(Math.max(0, atKill.done - 20), atKill.done + 120);
    const spread = order.filter((_, i) => i % 500 === 0);
    for (const id of new Set([...around, ...spread])) {
      const log = await admin.instances.logs(id);
      const ends = log.filter(
        (l) => l.nodeType === 'process' && /^execution (completed|failed|cancelled)/.test(l.message),
      );
      const cancels = log.filter((l) => l.message.includes(`by bulk operation ${created.bulkId}`));
      if (ends.length !== 1 || ends[0]!.message !== 'execution cancelled' || cancels.length !== 1)
        t.fail(`${id}: ${JSON.stringify(log.map((l) => l.message))}`);
    }
    t.pass('each execution looked at ends once, cancelled by the operation once');
  },
);
