import '../../setup/fixtures.js'; // fixtures under the OS temp dir (see there)
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { Engine } from '../../../src/daemon/engine/engine.js';
import { failureView, groupFailures, type FailureQuery } from '../../../src/daemon/engine/failures.js';
import { bucketOf } from '../../../src/daemon/state/ids.js';
import { publishFlow } from '../../../src/daemon/flows/publish.js';
import { WFX_STORE, type WfxRecord } from '../../../src/daemon/state/records.js';
import { summarize } from '../../../src/daemon/state/execution-summary.js';
import type { Execution, NodeInstance, WfxState } from '../../../src/daemon/state/state.js';
import { History } from '../../../src/daemon/store/history.js';
import type { HistoryStore } from '../../../src/daemon/store/history-store.js';
import { PgStore } from '../../../src/daemon/store/pg/pg-store.js';
import type { RecordStore } from '../../../src/daemon/store/record-store.js';
import { Store } from '../../../src/daemon/store/store.js';
import type { FailureGroups } from '../../../src/shared/api/index.js';
import { validateFlowSource } from '../../../src/shared/flow/validate.js';
import { TestClock } from '../../helpers/engine.js';
import { POSTGRES_SKIP, startPostgres } from '../../helpers/postgres.js';

// Failures grouped by flow, code and node over each store: from the tags the archive writes,
// from older tags (through the documents), with live executions, never another organization's.

const PID = '0192f0c0-0000-7000-8000-0000000000f1';
const THEIRS = '0192f0c0-0000-7000-8000-0000000000f2';

/** Ends (`ok`), waits (`wait`), fails at `route` (NO_BRANCH_MATCHED) or at `each` (LOOP_COLLECTION: `loop`). */
const flow = (processId: string) => `processId: ${processId}
name: Orders
nodes:
  start: { type: startEvent, next: route }
  route:
    type: exclusiveGateway
    name: Route the order
    branches:
      - { condition: "\${mode == 'ok'}", next: done }
      - { condition: "\${mode == 'wait'}", next: ask }
      - { condition: "\${mode == 'loop'}", next: each }
  ask: { type: inputNode, inputType: textbox, next: done }
  each:
    type: loopNode
    collection: "{items}"
    nodes:
      s: { type: startEvent, next: e }
      e: { type: endEvent }
    next: done
  done: { type: endEvent }
`;

type Opened = { readonly store: RecordStore<WfxState, WfxRecord>; readonly history: HistoryStore };

/** What the test knows of each execution it started. */
interface Started {
  readonly inst: Execution;
  readonly organization: string;
}

async function failuresOver(t: Test, open: () => Promise<Opened>): Promise<void> {
  const { store, history } = await open();
  const clock = new TestClock();
  const errors: unknown[] = [];
  const engine = new Engine({ store, history, now: clock.now, onError: (err) => errors.push(err) });
  try {
    await engine.recover();
    await groups(t, store, history, engine, clock);
  } finally {
    await engine.close();
    await history.close();
    await store.close();
  }
  t.same(errors, [], 'no engine errors');
}

async function groups(
  t: Test,
  store: RecordStore<WfxState, WfxRecord>,
  history: HistoryStore,
  engine: Engine,
  clock: TestClock,
): Promise<void> {
  const archived = new Set<string>();
  engine.on('archived', (id: string) => archived.add(id));
  for (const organization of ['default', 'other'])
    await store.commit({ type: 'organization.created', name: organization, at: clock.now().toISOString() });
  for (const [processId, organization] of [
    [PID, 'default'],
    [THEIRS, 'other'],
  ] as const) {
    const v = validateFlowSource(flow(processId));
    if (!v.ok) throw new Error('test flow does not validate');
    await publishFlow(store, { definition: v.flow, organization, environment: 'PRODUCTION', now: clock.now() });
  }
  const started: Started[] = [];
  const start = async (organization: string, data: Record<string, unknown>) => {
    clock.advance(1000);
    const processId = organization === 'other' ? THEIRS : PID;
    const inst = await engine.start({ processId, organization, data });
    started.push({ inst: (await engine.getInstance({ organization: null }, inst.processInstanceId))!, organization });
  };
  // Two days (two history buckets): failures at two nodes, and some that do not fail.
  for (let day = 0; day < 2; day++) {
    clock.advance(86_400_000);
    await start('default', { mode: 'fail' });
    await start('default', { mode: 'ok' });
    await start('default', { mode: 'loop', items: 'not a list' });
    await start('default', { mode: 'wait' });
    await start('other', { mode: 'fail' });
    await start('default', { mode: 'fail' });
  }
  const finished = started.filter((s) => s.inst.stateCd !== 0).map((s) => s.inst.processInstanceId);
  for (let i = 0; i < 1000 && !finished.every((id) => archived.has(id)); i++)
    await new Promise((resolve) => engine.once('archived', resolve));
  const failed = (org: string | null, node?: string) =>
    started
      .filter((s) => s.inst.stateCd === 2 && (org === null || s.organization === org))
      .filter((s) => node === undefined || s.inst.error?.nodeId === node)
      .map((s) => s.inst);
  const newestOf = (insts: Execution[]) => insts.reduce((a, b) => (a.processInstanceId > b.processInstanceId ? a : b));
  t.equal(failed('default', 'route').length, 4);
  t.equal(failed('default', 'each').length, 2);
  t.equal(newestOf(failed('default', 'each')).error?.code, 'LOOP_COLLECTION', 'a second code, at a second node');

  const ask = (q: Partial<FailureQuery>) =>
    engine.failures({ organization: 'default', sort: 'newest', limit: 50, ...q });
  const group = (node: 'route' | 'each', org = 'default', processId = PID) => {
    const insts = failed(org, node);
    const newest = newestOf(insts);
    return {
      processId,
      processName: 'Orders',
      errorCode: node === 'route' ? 'NO_BRANCH_MATCHED' : 'LOOP_COLLECTION',
      nodeId: node,
      ...(node === 'route' && { nodeName: 'Route the order' }),
      count: insts.length,
      newest: {
        processInstanceId: newest.processInstanceId,
        processVersion: '1',
        message: newest.error!.message,
        at: newest.endTime,
      },
    };
  };
  const check = async (label: string) => {
    t.same(
      await ask({}),
      { groups: [group('route'), group('each')], total: 6, groupCount: 2 },
      `${label}: newest group first, each counted with its newest execution`,
    );
    t.same(
      (await ask({ sort: 'count', limit: 1 })) satisfies FailureGroups,
      { groups: [group('route')], total: 6, groupCount: 2 },
      `${label}: the largest first, cut to the limit, every group counted`,
    );
    const all = await ask({ organization: null });
    t.equal(all.total, 8, `${label}: a system caller counts every organization's`);
    t.same(
      all.groups.find((g) => g.processId === THEIRS),
      group('route', 'other', THEIRS),
      `${label}: theirs in a group of its own`,
    );
    const theirs = await ask({ organization: 'other' });
    t.same(
      theirs.groups.map((g) => g.processId),
      [THEIRS],
      `${label}: another organization's failures are never counted in this one's`,
    );
    const day2 = Date.parse(started[6]!.inst.startTime);
    t.same(
      (await ask({ startedAfter: day2 })).groups.map((g) => [g.nodeId, g.count]),
      [
        ['route', 2],
        ['each', 1],
      ],
      `${label}: started after`,
    );
    t.same(
      (await ask({ startedBefore: day2 })).groups.map((g) => [g.nodeId, g.count]),
      [
        ['route', 2],
        ['each', 1],
      ],
      `${label}: started before`,
    );
    t.same((await ask({ processId: THEIRS })).groups, [], `${label}: their flow, asked by this organization`);
    t.same((await ask({ version: '2' })).total, 0, `${label}: no version 2`);
    t.same((await ask({ environment: 'DEVELOPMENT' })).total, 0, `${label}: none in DEVELOPMENT`);
  };
  await check('tagged');

  // Archived before the failed node was a tag (eight tags), then before the list's tags (three):
  // the documents of failed executions say what the tags cannot.
  const ids = started.filter((s) => s.inst.stateCd !== 0).map((s) => s.inst.processInstanceId);
  const retag = async (count: number) => {
    for (const id of ids) {
      const bucket = bucketOf(id)!;
      const listed = (await history.list(bucket)).find((e) => e.id === id)!;
      const doc = await history.get(bucket, id);
      await history.putJson(bucket, id, JSON.stringify(doc), listed.tags.slice(0, count));
    }
  };
  await retag(8);
  await check('tags before the failed node');
  await retag(3);
  await check('tags before the list');
}

t.test('failures grouped over the files', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'wfx-failures-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  await failuresOver(t, async () => ({
    store: await Store.open<WfxState, WfxRecord>({ dir, ...WFX_STORE }),
    history: await History.open(join(dir, 'history')),
  }));
});

t.test('failures grouped over PostgreSQL answer the same', { skip: POSTGRES_SKIP }, async (t) => {
  const server = await startPostgres(t);
  const connectionString = await server.createDatabase('failures');
  await failuresOver(t, async () => {
    const store = await PgStore.open<WfxState, WfxRecord>({ connectionString, owner: 'failures', ...WFX_STORE });
    return { store, history: store.history() };
  });
});

t.test('live failures count, once; an execution live again counts as it is now', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'wfx-failures-live-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const history = await History.open(join(dir, 'history'));
  t.teardown(() => history.close());
  const node = (id: string, nodeId: string, statusCd: 2 | 3): NodeInstance => ({
    id,
    nodeId,
    nodeName: nodeId,
    nodeType: 'serviceTask',
    statusCd,
    startTime: '2026-11-21T10:00:00.000Z',
    endTime: '2026-11-21T10:00:01.000Z',
    wait: null,
  });
  const execution = (id: string, stateCd: 0 | 2, organization = 'default'): Execution => ({
    processInstanceId: id,
    processId: 'p',
    processName: 'P',
    processVersion: '1',
    organization,
    environment: 'PRODUCTION',
    correlationKey: null,
    parentInstanceId: null,
    stateCd,
    startTime: '2026-11-21T10:00:00.000Z',
    endTime: stateCd === 2 ? '2026-11-21T10:00:01.000Z' : null,
    variables: {},
    output: null,
    error: stateCd === 2 ? { code: 'HTTP_500', message: `failed ${id}`, nodeId: 'call' } : null,
    nodes: { n1: node('n1', 'start', 2), n2: node('n2', 'call', 3) },
    nodeCount: 2,
    joins: {},
    logs: [],
  });
  // Ids of one day, in order; a, b, c archived failed; b archived failed but live (retried) now.
  const id = (n: number) => `0192f0c0-0000-7000-8000-00000000000${n}`;
  const bucket = bucketOf(id(1))!;
  const tags = (i: Execution) => ['p', '2', '', i.organization, '1', 'PRODUCTION', 'HTTP_500', '', 'call'];
  const archived = new Map([1, 2, 3].map((n) => [id(n), execution(id(n), 2)]));
  archived.set(id(4), execution(id(4), 2, 'other'));
  for (const [key, inst] of archived)
    await history.putJson(bucket, key, JSON.stringify({ instance: inst }), tags(inst));
  const live = new Map<string, Execution>([
    [id(2), execution(id(2), 0)], // retried: running again
    [id(3), execution(id(3), 2)], // failed, and archived already, not yet gone from the live state
    [id(5), execution(id(5), 2)], // failed, not archived yet
    [id(6), execution(id(6), 2, 'other')],
  ]);
  const reads: string[] = [];
  // Cold executions: kept off `live`, read back (moved there) when ensured.
  const cold = new Map<string, Execution>();
  const ensured: string[] = [];
  const sources = {
    live: () => live.values(),
    liveOne: (key: string) => live.get(key),
    coldIds: () => cold.keys(),
    coldSummary: (key: string) => {
      const inst = cold.get(key);
      return inst && summarize(inst, () => []);
    },
    ensure: (ids: readonly string[]) => {
      for (const key of ids.filter((k) => cold.has(k))) {
        ensured.push(key);
        live.set(key, cold.get(key)!);
        cold.delete(key);
      }
      return Promise.resolve();
    },
    history,
    flowOrganization: () => undefined,
    flow: () => undefined,
  };
  const ask = (organization: string | null) =>
    groupFailures(
      {
        ...sources,
        archived: async (key) => {
          reads.push(key);
          return archived.get(key) ?? null;
        },
      },
      { organization, sort: 'newest', limit: 10 },
    );
  const answer = await ask('default');
  t.same(answer.total, 3, 'one archived, one archived and live, one live only: the retried one not');
  t.match(answer.groups, [
    {
      processId: 'p',
      errorCode: 'HTTP_500',
      nodeId: 'call',
      count: 3,
      newest: { processInstanceId: id(5), message: `failed ${id(5)}`, at: '2026-11-21T10:00:01.000Z' },
    },
  ]);
  t.notOk('processName' in answer.groups[0]!, 'no name for a flow the daemon does not have');
  t.same(reads, [], 'no document read: the newest is live, the rest counted from tags');
  t.equal((await ask(null)).total, 5, 'a system caller: theirs too');
  t.equal((await ask('other')).total, 2, 'theirs alone');
  // Failed and not archived yet, but cold: its summary selects it, its document says its failure.
  cold.set(id(5), live.get(id(5))!);
  live.delete(id(5));
  t.same(await ask('default'), answer, 'a cold failed execution is counted as a resident one');
  t.same(ensured, [id(5)], 'read back for its failure');
  t.same(
    await groupFailures(
      { ...sources, archived: async () => null },
      { organization: 'default', sort: 'newest', limit: null, liveOnly: true },
    ).then((a) => a.total),
    2,
    'live only: what another daemon sharing the database adds',
  );
});

t.test("a failure's attempts: each run of its node, with the tries its work made", async (t) => {
  const base = {
    nodeName: 'call',
    nodeType: 'serviceTask',
    startTime: '2026-11-21T10:00:00.000Z',
    endTime: '2026-11-21T10:00:01.000Z',
    wait: null,
  };
  const inst = {
    error: { code: 'HTTP_500', message: 'answered 500', nodeId: 'call' },
    nodes: {
      n1: { ...base, id: 'n1', nodeId: 'start', statusCd: 2 },
      n2: { ...base, id: 'n2', nodeId: 'call', statusCd: 3, attempts: 3 },
      n3: { ...base, id: 'n3', nodeId: 'call', statusCd: 3 },
    },
  } as unknown as Execution;
  t.same(failureView(inst), { code: 'HTTP_500', message: 'answered 500', nodeId: 'call', attempts: 4 });
  t.same(
    failureView({ ...inst, error: { code: 'EXECUTION_LIMIT_EXCEEDED', message: 'x', nodeId: null } })?.attempts,
    0,
  );
  t.equal(failureView({ ...inst, error: null }), null);
});
