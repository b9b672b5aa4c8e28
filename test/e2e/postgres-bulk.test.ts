import '../setup/fixtures.js'; // fixtures under the OS temp dir (see there)
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import t from 'tap';
import { WfxClient } from '../../src/client/client.js';
import type { BulkResult, BulkView } from '../../src/shared/api/index.js';
import { startDaemon } from '../helpers/cli.js';
import { eventually } from '../helpers/eventually.js';
import { POSTGRES_SKIP, startPostgres } from '../helpers/postgres.js';
import { holdings, launchSharing, printLogs, serving } from '../helpers/share.js';

/*
 * Bulk operations on PostgreSQL (decision 060): the operation and its lanes'
 * progress live in the shared partition, and each chunk's progress is written in the same
 * INSERT as the cancels it made in its executions' partition. On one daemon it holds every
 * lane; with `--share` each daemon applies the lanes of the partitions it holds, and a lane
 * whose daemon died is applied on by the partition's next holder.
 */

const WAITS = (id: string) => `processId: ${id}
name: Waits
nodes:
  start: { type: startEvent, next: ask }
  ask: { type: inputNode, inputType: textbox, next: done }
  done: { type: endEvent }
`;
const TARGET = '3a4b5c6d-7e8f-4a9b-8c1d-2e3f4a5b6c7d';
const NEIGHBOUR = '4b5c6d7e-8f9a-4b1c-9d2e-3f4a5b6c7d8e';

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

async function startMany(client: WfxClient, processId: string, n: number): Promise<string[]> {
  const ids: string[] = [];
  let next = 0;
  const lane = async (): Promise<void> => {
    while (next++ < n) ids.push((await client.process.startAny({ processId, data: {} })).processInstanceId);
  };
  await Promise.all(Array.from({ length: 16 }, lane));
  return ids;
}

async function resultsOf(client: WfxClient, bulkId: string): Promise<BulkResult[]> {
  const out: BulkResult[] = [];
  for (let cursor: string | undefined, page = 0; page < 100; page++) {
    const got = await client.bulk.results(bulkId, { limit: 1000, ...(cursor && { cursor }) });
    out.push(...got.items);
    if (got.nextCursor === null) break;
    cursor = got.nextCursor;
  }
  return out;
}

async function stateCounts(client: WfxClient, processId: string): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  for (let cursor: string | undefined, page = 0; page < 100; page++) {
    const got = await client.instances.search({ processId, limit: 200, ...(cursor && { cursor }) });
    for (const i of got.items) counts[i.state] = (counts[i.state] ?? 0) + 1;
    if (got.nextCursor === null) break;
    cursor = got.nextCursor;
  }
  return counts;
}

/** One PostgreSQL server for the file (none where it cannot run): each test makes a database of its own on it. */
const server = POSTGRES_SKIP ? null : await startPostgres(t);

t.test(
  'one daemon on PostgreSQL: a bulk cancel over every partition, SIGKILLed half-way, completes once',
  { skip: POSTGRES_SKIP },
  async (t) => {
    const store = await server!.createDatabase('bulk_one');
    const dataDir = join(t.testdir(), 'a');
    const args = ['--store', store, '--lease', '2s', '--bulk-rate', '200'];
    const first = await startDaemon(t, { dataDir, args });
    const key = (await readFile(join(dataDir, 'bootstrap.key'), 'utf8')).trim();
    let client = new WfxClient({ url: first.url, apiKey: key, credentialSource: 'test' });
    await client.flows.publish({ source: WAITS(TARGET), organization: 'default' });
    await client.flows.publish({ source: WAITS(NEIGHBOUR), organization: 'default' });
    const selected = await startMany(client, TARGET, 600);
    await startMany(client, NEIGHBOUR, 20);

    const dry = await client.bulk.dryRun({ operation: 'cancel', query: { processId: TARGET } });
    t.equal(dry.count, 600, 'the dry run counts every partition');
    const created = await client.bulk.create({ operation: 'cancel', query: { processId: TARGET } });
    t.match(created, { total: 600, selected: true });
    const seen = await eventually('a part applied', async () => {
      const v = await client.bulk.get(created.bulkId);
      return v.done >= 100 && v;
    });
    process.kill(first.pid, 'SIGKILL');
    await eventually('the daemon is gone', () => !alive(first.pid));
    t.ok(seen.done < 600, `killed half-way (${seen.done} done)`);

    const second = await startDaemon(t, { dataDir, args: ['--port', new URL(first.url).port, ...args] });
    client = new WfxClient({ url: second.url, apiKey: key, credentialSource: 'test' });
    const end = await eventually('completed after the restart', async () => {
      const v: BulkView = await client.bulk.get(created.bulkId);
      return v.state !== 'RUNNING' && v;
    });
    t.match(end, { state: 'COMPLETED', total: 600, done: 600, skipped: 0 }, 'none given the cancel twice');
    const results = await resultsOf(client, created.bulkId);
    t.same(results.map((r) => r.processInstanceId).sort(), [...selected].sort(), 'a result per selected execution');
    t.same(await stateCounts(client, TARGET), { CANCELLED: 600 });
    t.same(await stateCounts(client, NEIGHBOUR), { RUNNING: 20 }, 'outside the query: untouched');
  },
);

t.test(
  'two --share daemons: each applies its partitions; one SIGKILLed, its lanes finish on the other',
  { skip: POSTGRES_SKIP },
  async (t) => {
    const store = await server!.createDatabase('bulk_share');
    const root = t.testdir();
    t.teardown(async () => {
      if (!t.passing()) await printLogs([join(root, 'a'), join(root, 'b')]);
    });
    const rate = ['--bulk-rate', '100'];
    const a = await launchSharing(t, join(root, 'a'), store, {}, rate);
    await eventually('a serves', () => serving(a));
    const key = (await readFile(join(a.dir, 'bootstrap.key'), 'utf8')).trim();
    const viaA = new WfxClient({ url: a.url, apiKey: key, credentialSource: 'test' });
    await viaA.flows.publish({ source: WAITS(TARGET), organization: 'default' });
    await viaA.flows.publish({ source: WAITS(NEIGHBOUR), organization: 'default' });
    const b = await launchSharing(t, join(root, 'b'), store, {}, rate);
    await eventually(
      'a and b share the partitions',
      async () => {
        const held = await holdings(a, key);
        return (held.get(a.url)?.length ?? 0) >= 8 && (held.get(b.url)?.length ?? 0) >= 7 && held;
      },
      { withinMs: 20_000 },
    );
    await eventually('b serves', () => serving(b));
    const viaB = new WfxClient({ url: b.url, apiKey: key, credentialSource: 'test' });
    // Started through both: each daemon draws ids in its own partitions.
    const ofB = await startMany(viaB, TARGET, 300);
    const selected = [...(await startMany(viaA, TARGET, 300)), ...ofB];
    await startMany(viaB, NEIGHBOUR, 20);

    const dry = await viaB.bulk.dryRun({ operation: 'cancel', query: { processId: TARGET }, sample: 5 });
    t.equal(dry.count, 600, "the dry run adds up both daemons' partitions");
    t.same(
      dry.sample.map((s) => s.processInstanceId),
      [...selected].sort().reverse().slice(0, 5),
      'and samples the newest of all',
    );
    const created = await viaB.bulk.create({ operation: 'cancel', query: { processId: TARGET } });
    const whole = await eventually('every partition selected', async () => {
      const v = await viaA.bulk.get(created.bulkId);
      return v.selected && v;
    });
    t.equal(whole.total, 600, 'each daemon selected its partitions');
    const appliedByB = await eventually('b applies its lanes', async () => {
      const done = new Set((await resultsOf(viaA, created.bulkId)).map((r) => r.processInstanceId));
      return ofB.filter((id) => done.has(id)).length >= 20 && done;
    });
    b.child.kill('SIGKILL');
    t.ok(ofB.filter((id) => appliedByB.has(id)).length < 300, 'b SIGKILLed with its lanes part-way');
    const end = await eventually(
      "a takes b's partitions and completes the operation",
      async () => {
        const v = await viaA.bulk.get(created.bulkId);
        return v.state !== 'RUNNING' && v;
      },
      { withinMs: 60_000 },
    );
    t.match(end, { state: 'COMPLETED', total: 600, done: 600, skipped: 0 }, 'none given the cancel twice');
    const results = await resultsOf(viaA, created.bulkId);
    t.same(results.map((r) => r.processInstanceId).sort(), [...selected].sort(), 'a result per selected execution');
    t.same(await stateCounts(viaA, TARGET), { CANCELLED: 600 });
    t.same(await stateCounts(viaA, NEIGHBOUR), { RUNNING: 20 }, 'outside the query: untouched');
  },
);
