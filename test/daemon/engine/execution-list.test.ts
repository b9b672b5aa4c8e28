import '../../setup/fixtures.js'; // fixtures under the OS temp dir (see there)
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { Engine } from '../../../src/daemon/engine/engine.js';
import type { ExecutionQuery } from '../../../src/daemon/engine/execution-filter.js';
import { COLD_BATCH, listExecutions, type ExecutionSources } from '../../../src/daemon/engine/execution-list.js';
import { bucketOf } from '../../../src/daemon/state/ids.js';
import { publishFlow } from '../../../src/daemon/flows/publish.js';
import { summarize } from '../../../src/daemon/state/execution-summary.js';
import { WFX_STORE, type WfxRecord } from '../../../src/daemon/state/records.js';
import type { Execution, WfxState } from '../../../src/daemon/state/state.js';
import { History } from '../../../src/daemon/store/history.js';
import type { HistoryStore } from '../../../src/daemon/store/history-store.js';
import { PgStore } from '../../../src/daemon/store/pg/pg-store.js';
import type { RecordStore } from '../../../src/daemon/store/record-store.js';
import { Store } from '../../../src/daemon/store/store.js';
import { validateFlowSource } from '../../../src/shared/flow/validate.js';
import { MemoryCold } from '../../helpers/cold.js';
import { ordersFlow, TestClock } from '../../helpers/engine.js';
import { POSTGRES_SKIP, startPostgres } from '../../helpers/postgres.js';

// The list of executions over each store: the same executions give the same pages, from the
// tags the archive writes and from the older ones (read through the documents).

const FLOW = ordersFlow('0192f0c0-0000-7000-8000-0000000000e1');
const PID = '0192f0c0-0000-7000-8000-0000000000e1';

type Opened = { readonly store: RecordStore<WfxState, WfxRecord>; readonly history: HistoryStore };

/** `cold`: the waiting executions are kept off the resident state, evicted again after each page. */
async function listsOver(t: Test, open: () => Promise<Opened>, cold?: MemoryCold): Promise<void> {
  const { store, history } = await open();
  const clock = new TestClock();
  const errors: unknown[] = [];
  const engine = new Engine({
    store,
    history,
    now: clock.now,
    onError: (err) => errors.push(err),
    ...(cold && { cold }),
  });
  try {
    await engine.recover();
    await lists(t, store, history, engine, clock, cold);
  } finally {
    cold?.restoreAll(store.state);
    await engine.close();
    await history.close();
    await store.close();
  }
  t.same(errors, [], 'no engine errors');
}

async function lists(
  t: Test,
  store: RecordStore<WfxState, WfxRecord>,
  history: HistoryStore,
  engine: Engine,
  clock: TestClock,
  cold?: MemoryCold,
): Promise<void> {
  const archived = new Set<string>();
  engine.on('archived', (id: string) => archived.add(id));
  const v = validateFlowSource(FLOW);
  if (!v.ok) throw new Error('test flow does not validate');
  for (const organization of ['default', 'other'])
    await store.commit({ type: 'organization.created', name: organization, at: clock.now().toISOString() });
  await publishFlow(store, {
    definition: v.flow,
    organization: 'default',
    environment: 'PRODUCTION',
    now: clock.now(),
  });
  await publishFlow(store, {
    definition: { ...v.flow, processId: '0192f0c0-0000-7000-8000-0000000000e2' },
    organization: 'other',
    environment: 'PRODUCTION',
    now: clock.now(),
  });
  const ids: string[] = [];
  for (let day = 0; day < 3; day++) {
    clock.advance(86_400_000);
    for (const [mode, correlationKey, organization] of [
      ['ok', `order ${day}`, 'default'],
      ['fail', 'order | x', 'default'],
      ['wait', `order ${day}`, 'default'],
      ['ok', 'k'.repeat(300), 'default'],
      ['fail', 'order | x', 'other'],
    ] as const) {
      clock.advance(1000);
      const processId = organization === 'other' ? '0192f0c0-0000-7000-8000-0000000000e2' : PID;
      ids.push((await engine.start({ processId, organization, data: { mode }, correlationKey })).processInstanceId);
    }
  }
  const known: Execution[] = [];
  for (const id of ids) known.push((await engine.getInstance({ organization: null }, id))!);
  const finished = known.filter((i) => i.stateCd !== 0).map((i) => i.processInstanceId);
  for (let i = 0; i < 1000 && !finished.every((id) => archived.has(id)); i++)
    await new Promise((resolve) => engine.once('archived', resolve));
  const day2 = Date.parse(known[5]!.startTime);
  if (cold) {
    cold.evictAtRest(store.state);
    t.equal(cold.size, 3, 'the waiting executions are cold');
  }
  const cases: Array<[Partial<ExecutionQuery>, (i: Execution) => boolean]> = [
    [{}, () => true],
    [{ organization: 'default' }, (i) => i.organization === 'default'],
    [{ organization: 'other', stateCd: 2 }, (i) => i.organization === 'other' && i.stateCd === 2],
    [{ errorCode: 'NO_BRANCH_MATCHED' }, (i) => i.error?.code === 'NO_BRANCH_MATCHED'],
    [{ failedNode: 'route' }, (i) => i.stateCd === 2 && i.error?.nodeId === 'route'],
    [
      { failedNode: 'route', errorCode: 'NO_BRANCH_MATCHED', organization: 'other' },
      (i) => i.stateCd === 2 && i.organization === 'other',
    ],
    [{ failedNode: 'ask' }, () => false],
    [
      { correlationKey: 'order | x', organization: 'default' },
      (i) => i.correlationKey === 'order | x' && i.organization === 'default',
    ],
    [{ correlationKey: 'k'.repeat(300) }, (i) => i.correlationKey === 'k'.repeat(300)],
    [{ correlationKey: 'order 1' }, (i) => i.correlationKey === 'order 1'],
    [{ version: '1', environment: 'PRODUCTION', stateCd: 1 }, (i) => i.stateCd === 1],
    [{ environment: 'DEVELOPMENT' }, () => false],
    [{ startedAfter: day2 }, (i) => Date.parse(i.startTime) >= day2],
    [{ startedBefore: day2, processId: PID }, (i) => Date.parse(i.startTime) < day2 && i.processId === PID],
  ];
  const check = async (label: string) => {
    for (const [q, keep] of cases) {
      const want = known
        .filter(keep)
        .map((i) => i.processInstanceId)
        .sort()
        .reverse();
      const got: string[] = [];
      let cursor: string | undefined;
      for (let pages = 0; pages < 20; pages++) {
        const loads = cold?.loads ?? 0;
        const page = await engine.listExecutions({ organization: null, limit: 2, ...q, ...(cursor && { cursor }) });
        got.push(...page.items.map((i) => i.processInstanceId));
        if (cold) {
          const shown = page.items.filter((i) => i.stateCd === 0).length;
          if (cold.loads - loads !== shown) t.fail(`read back ${cold.loads - loads}, shown ${shown} cold`);
          cold.evictAtRest(store.state);
        }
        if (page.nextCursor === null) break;
        cursor = page.nextCursor;
      }
      t.same(got, want, `${label}: ${JSON.stringify(q).slice(0, 80)}`);
    }
  };
  await check('tagged');
  // Archived before the failed node was a tag: eight tags, the document says the rest.
  for (const id of finished) {
    const bucket = bucketOf(id)!;
    const listed = (await history.list(bucket)).find((e) => e.id === id)!;
    await history.putJson(bucket, id, JSON.stringify(await history.get(bucket, id)), listed.tags.slice(0, 8));
  }
  await check('tags before the failed node');
  for (const id of finished) {
    const bucket = bucketOf(id)!;
    const inst = known.find((i) => i.processInstanceId === id)!;
    const doc = await history.get(bucket, id);
    await history.putJson(bucket, id, JSON.stringify(doc), [inst.processId, String(inst.stateCd), '']);
  }
  await check('older tags');
}

t.test('the list of executions over the files', async (t) => {
  // Our own directory: tap removes t.testdir() before teardowns run.
  const dir = mkdtempSync(join(tmpdir(), 'wfx-list-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  await listsOver(t, async () => ({
    store: await Store.open<WfxState, WfxRecord>({ dir, ...WFX_STORE }),
    history: await History.open(join(dir, 'history')),
  }));
});

t.test('the list of executions over the files answers the same with the waiting ones cold', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'wfx-list-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const cold = new MemoryCold();
  await listsOver(
    t,
    async () => ({
      store: await Store.open<WfxState, WfxRecord>({ dir, ...WFX_STORE }),
      history: await History.open(join(dir, 'history')),
    }),
    cold,
  );
  t.ok(cold.loads > 0, `only the pages' cold executions read back: ${cold.loads}`);
});

t.test('the list of executions over PostgreSQL answers the same', { skip: POSTGRES_SKIP }, async (t) => {
  const server = await startPostgres(t);
  const connectionString = await server.createDatabase('execution_list');
  await listsOver(t, async () => {
    const store = await PgStore.open<WfxState, WfxRecord>({ connectionString, owner: 'list', ...WFX_STORE });
    return { store, history: store.history() };
  });
});

t.test('cold executions a summary cannot settle are read back a batch at a time, only as the page needs', async (t) => {
  // Failed, not archived yet, and cold: the failure code is in the document only.
  const failed = (n: number, code: string): Execution =>
    ({
      processInstanceId: `0192f0c0-0000-7000-8000-${String(n).padStart(12, '0')}`,
      processId: PID,
      processName: 'Orders',
      processVersion: '1',
      organization: 'default',
      environment: 'PRODUCTION',
      correlationKey: null,
      parentInstanceId: null,
      stateCd: 2,
      startTime: '2024-10-29T10:00:00.000Z',
      endTime: '2024-10-29T10:00:01.000Z',
      variables: {},
      output: null,
      error: { code, message: 'failed', nodeId: 'route' },
      nodes: {},
      nodeCount: 0,
      joins: {},
      logs: [],
    }) as unknown as Execution;
  const cold = new Map<string, Execution>();
  for (let n = 1; n <= COLD_BATCH + 10; n++) {
    const inst = failed(n, n % 2 === 0 ? 'NO_BRANCH_MATCHED' : 'HTTP_500');
    cold.set(inst.processInstanceId, inst);
  }
  const resident = new Map<string, Execution>();
  const ensured: string[] = [];
  const src: ExecutionSources = {
    live: () => resident.values(),
    liveOne: (id) => resident.get(id),
    coldIds: () => cold.keys(),
    coldSummary: (id) => {
      const inst = cold.get(id);
      return inst && summarize(inst, () => []);
    },
    ensure: (ids) => {
      for (const id of ids.filter((i) => cold.has(i))) {
        ensured.push(id);
        resident.set(id, cold.get(id)!);
        cold.delete(id);
      }
      return Promise.resolve();
    },
    history: { buckets: async () => [] } as unknown as HistoryStore,
    archived: async () => null,
    flowOrganization: () => undefined,
  };
  const page = await listExecutions(src, { organization: 'default', errorCode: 'NO_BRANCH_MATCHED', limit: 2 });
  const newest = (n: number) => failed(n, '').processInstanceId;
  t.same(
    page.items.map((i) => i.processInstanceId),
    [newest(COLD_BATCH + 10), newest(COLD_BATCH + 8)],
    'newest first, the failure code from the documents',
  );
  t.equal(page.nextCursor, newest(COLD_BATCH + 8));
  t.equal(ensured.length, COLD_BATCH, 'one batch read back: the page was certain after it');
  t.ok(
    ensured.every((id) => id >= newest(11)),
    'the newest first',
  );
});
