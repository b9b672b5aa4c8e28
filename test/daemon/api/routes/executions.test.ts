import { randomUUID } from 'node:crypto';
import t, { type Test } from 'tap';
import { apiHarness, type ApiHarness, type TestKey } from '../../../helpers/api.js';
import { ordersFlow } from '../../../helpers/engine.js';
import { bucketOf } from '../../../../src/daemon/state/ids.js';

/** One child execution per item, each ending at once. */
const LOOP = `processId: AUTO
name: Batch
nodes:
  start: { type: startEvent, next: each }
  each:
    type: loopNode
    collection: "{items}"
    nodes:
      s: { type: startEvent, next: e }
      e: { type: endEvent }
    next: done
  done: { type: endEvent }
`;

/** An execution as the test knows it, to say what each list must answer. */
interface Known {
  readonly id: string;
  readonly organization: string;
  readonly processId: string;
  readonly version: string;
  readonly environment: string;
  readonly state: string;
  readonly errorCode: string | null;
  readonly failedNode: string | null;
  readonly correlationKey: string | null;
  readonly parent: string | null;
  readonly startMs: number;
}

interface Seeded {
  readonly h: ApiHarness;
  readonly operator: TestKey;
  readonly otherOperator: TestKey;
  readonly system: TestKey;
  readonly orders: string;
  readonly batch: string;
  readonly theirs: string;
  /** Every execution, children included. */
  readonly known: Known[];
}

/**
 * Executions over three days (three history buckets), each day: two that complete, one that
 * fails, one left waiting (live), one cancelled, two in DEVELOPMENT (version 2, and version 1
 * named), a loop with three children, and one of another organization.
 */
async function seed(t: Test): Promise<Seeded> {
  const h = await apiHarness(t);
  const operator = await h.key('operator', 'default');
  const otherOperator = await h.key('operator', 'other');
  const system = await h.key('admin', null);
  const pid = randomUUID();
  await h.publish(ordersFlow(pid, 'Orders'));
  await h.publish(ordersFlow(pid, 'Orders, reworked'), { environment: 'DEVELOPMENT' });
  const batch = await h.publish(LOOP);
  const theirs = await h.publish(ordersFlow('AUTO', 'Theirs'), { organization: 'other' });
  const started: Array<{ id: string; organization: string }> = [];
  const start = async (
    key: TestKey,
    processId: string,
    data: Record<string, unknown>,
    options: { correlationKey?: string; query?: string } = {},
  ): Promise<string> => {
    h.clock.advance(1000);
    const res = await h.call(key, {
      method: 'POST',
      url: `/process/exec${options.query ?? ''}`,
      payload: {
        processId,
        data,
        ...(options.correlationKey !== undefined && { correlationKey: options.correlationKey }),
      },
    });
    if (res.statusCode !== 200) throw new Error(`start: ${res.statusCode} ${res.body}`);
    const id = res.json().processInstanceId as string;
    started.push({ id, organization: key.organization! });
    return id;
  };
  for (let day = 0; day < 3; day++) {
    h.clock.advance(86_400_000);
    await start(operator, pid, { mode: 'ok' }, { correlationKey: `order ${day}|a` });
    await start(operator, pid, { mode: 'ok' });
    await start(operator, pid, { mode: 'fail' }, { correlationKey: 'order x' });
    await start(operator, pid, { mode: 'wait' }, { correlationKey: `order ${day}|a` });
    const cancelled = await start(operator, pid, { mode: 'wait' });
    await h.call(operator, { method: 'POST', url: `/process/instance/${cancelled}/cancel` });
    await start(operator, pid, { mode: 'fail' }, { query: '?environment=DEVELOPMENT' });
    await start(operator, pid, { mode: 'ok' }, { query: '?environment=DEVELOPMENT&versionNumber=1' });
    await start(operator, batch, { items: [1, 2, 3] });
    await start(otherOperator, theirs, { mode: day === 1 ? 'wait' : 'fail' }, { correlationKey: 'order x' });
  }
  const known: Known[] = [];
  const learn = async (id: string, organization: string): Promise<void> => {
    const view = (await h.call(system, { method: 'GET', url: `/process/instance/${id}` })).json();
    known.push({
      id,
      organization,
      processId: view.processId,
      version: view.processVersion,
      environment: view.environment,
      state: view.state,
      errorCode: view.state === 'FAILED' ? view.data.error.code : null,
      failedNode: view.state === 'FAILED' ? view.data.error.nodeId : null,
      correlationKey: view.correlationKey,
      parent: view.parentInstanceId,
      startMs: Date.parse(view.startTime),
    });
    for (const node of view.nodes as Array<{ childInstanceIds?: string[] }>)
      for (const child of node.childInstanceIds ?? []) await learn(child, organization);
  };
  for (const { id, organization } of started) await learn(id, organization);
  for (const k of known) if (k.state !== 'RUNNING') await h.archived(k.id);
  return { h, operator, otherOperator, system, orders: pid, batch, theirs, known };
}

/** What a list must hold: the model's executions that `keep` keeps, newest first. */
const expected = (known: readonly Known[], keep: (k: Known) => boolean): string[] =>
  known
    .filter(keep)
    .map((k) => k.id)
    .sort()
    .reverse();

/** Every page of GET /process/instances?`query`, `limit` at a time (bounded): the ids in order. */
async function allPages(h: ApiHarness, key: TestKey, query: string, limit: number): Promise<string[]> {
  const ids: string[] = [];
  let cursor: string | null = null;
  for (let pages = 0; pages < 100; pages++) {
    const res = await h.call(key, {
      method: 'GET',
      url: `/process/instances?${query}&limit=${limit}${cursor ? `&cursor=${cursor}` : ''}`,
    });
    if (res.statusCode !== 200) throw new Error(`list: ${res.statusCode} ${res.body}`);
    const page = res.json() as { items: Array<{ processInstanceId: string }>; nextCursor: string | null };
    ids.push(...page.items.map((i) => i.processInstanceId));
    cursor = page.nextCursor;
    if (cursor === null) return ids;
  }
  throw new Error('more than 100 pages');
}

/** Each filter of the list against the model, for an organization's key and a system key. */
async function checkFilters(t: Test, s: Seeded, label: string): Promise<void> {
  const { h, known } = s;
  const mine = (k: Known) => k.organization === 'default';
  const top = (k: Known) => k.parent === null;
  const day2 = known.filter((k) => k.parent === null).map((k) => k.startMs)[9]!; // the second day's first start
  const cases: Array<[string, (k: Known) => boolean]> = [
    ['', top],
    [`processId=${s.orders}`, (k) => top(k) && k.processId === s.orders],
    ['version=2', (k) => top(k) && k.version === '2'],
    ['environment=DEVELOPMENT', (k) => top(k) && k.environment === 'DEVELOPMENT'],
    ['environment=PRODUCTION&version=1', (k) => top(k) && k.environment === 'PRODUCTION' && k.version === '1'],
    ['state=RUNNING', (k) => top(k) && k.state === 'RUNNING'],
    ['state=CANCELLED', (k) => top(k) && k.state === 'CANCELLED'],
    ['state=FAILED', (k) => top(k) && k.state === 'FAILED'],
    ['errorCode=NO_BRANCH_MATCHED', (k) => top(k) && k.errorCode === 'NO_BRANCH_MATCHED'],
    ['errorCode=HTTP_404', () => false],
    ['failedNode=route', (k) => top(k) && k.state === 'FAILED' && k.failedNode === 'route'],
    [
      'failedNode=route&errorCode=NO_BRANCH_MATCHED&environment=DEVELOPMENT',
      (k) => top(k) && k.state === 'FAILED' && k.environment === 'DEVELOPMENT',
    ],
    ['failedNode=ask', () => false],
    [`correlationKey=${encodeURIComponent('order 1|a')}`, (k) => top(k) && k.correlationKey === 'order 1|a'],
    ['correlationKey=order%20x&state=FAILED', (k) => top(k) && k.correlationKey === 'order x' && k.state === 'FAILED'],
    [`startedAfter=${new Date(day2).toISOString()}`, (k) => top(k) && k.startMs >= day2],
    [`startedBefore=${new Date(day2).toISOString()}`, (k) => top(k) && k.startMs < day2],
    [
      `startedAfter=${new Date(day2).toISOString()}&startedBefore=${new Date(day2 + 86_400_000).toISOString()}`,
      (k) => top(k) && k.startMs >= day2 && k.startMs < day2 + 86_400_000,
    ],
    ['children=true', () => true],
    ['children=true&processId=' + s.batch, (k) => k.processId === s.batch],
  ];
  for (const [query, keep] of cases) {
    t.same(
      await allPages(h, s.operator, query, 50),
      expected(known, (k) => mine(k) && keep(k)),
      `${label}: ?${query}`,
    );
    t.same(await allPages(h, s.system, query, 4), expected(known, keep), `${label}: ?${query} (system, pages of 4)`);
  }
  t.same(
    await allPages(h, s.system, 'organization=other&state=FAILED', 2),
    expected(known, (k) => k.organization === 'other' && k.state === 'FAILED'),
    `${label}: a system key names an organization`,
  );
}

t.test('GET /process/instances: every filter, live and in history, over pages', async (t) => {
  const s = await seed(t);
  const buckets = new Set(s.known.filter((k) => k.state !== 'RUNNING').map((k) => bucketOf(k.id)));
  t.equal(buckets.size, 3, 'history spans three day buckets');
  t.ok(
    s.known.some((k) => k.state === 'RUNNING'),
    'some are live',
  );
  await checkFilters(t, s, 'tagged');

  const first = (await s.h.call(s.operator, { method: 'GET', url: '/process/instances?limit=1' })).json();
  t.match(first.items[0], {
    processId: s.batch,
    environment: 'PRODUCTION',
    state: 'COMPLETED',
    errorCode: null,
    childCount: 3,
    parentInstanceId: null,
  });
  const failed = (await s.h.call(s.operator, { method: 'GET', url: '/process/instances?limit=1&state=FAILED' })).json();
  t.match(failed.items[0], { state: 'FAILED', stateCd: 2, errorCode: 'NO_BRANCH_MATCHED', environment: 'DEVELOPMENT' });
});

t.test('GET /process/instances over history archived before it was tagged for this list', async (t) => {
  const s = await seed(t);
  // Each archived execution put again as an older wfx did: tags processId, stateCd, parent (and,
  // older still, without the parent); the later copy wins.
  let older = 0;
  for (const k of s.known) {
    if (k.state !== 'RUNNING') {
      const bucket = bucketOf(k.id)!;
      const doc = await s.h.history.get(bucket, k.id);
      const tags = [k.processId, String(['RUNNING', 'COMPLETED', 'FAILED', 'CANCELLED'].indexOf(k.state))];
      if (older++ % 2 === 0) tags.push(k.parent ?? '');
      await s.h.history.putJson(bucket, k.id, JSON.stringify(doc), tags);
    }
  }
  const listed = await s.h.history.list(bucketOf(s.known[0]!.id)!);
  t.ok(
    listed.every((e) => e.tags.length <= 3),
    'the history now holds older tags only',
  );
  await checkFilters(t, s, 'older tags');
});

t.test('GET /process/instances: pages neither repeat nor skip while executions start and finish', async (t) => {
  const s = await seed(t);
  const { h, operator } = s;
  const before = expected(s.known, (k) => k.organization === 'default' && k.parent === null);
  const ids: string[] = [];
  const cancelled = new Set<string>();
  let cursor: string | null = null;
  for (let pages = 0; pages < 50; pages++) {
    const res = await h.call(operator, {
      method: 'GET',
      url: `/process/instances?limit=3${cursor ? `&cursor=${cursor}` : ''}`,
    });
    const page = res.json() as { items: Array<{ processInstanceId: string }>; nextCursor: string | null };
    ids.push(...page.items.map((i) => i.processInstanceId));
    // Between pages: one more starts and ends, one more starts and waits, a waiting one ends.
    h.clock.advance(1000);
    await h.call(operator, {
      method: 'POST',
      url: '/process/exec',
      payload: { processId: s.orders, data: { mode: 'ok' } },
    });
    h.clock.advance(1000);
    await h.call(operator, {
      method: 'POST',
      url: '/process/exec',
      payload: { processId: s.orders, data: { mode: 'wait' } },
    });
    const waiting = s.known.find(
      (k) => k.state === 'RUNNING' && k.organization === 'default' && !ids.includes(k.id) && !cancelled.has(k.id),
    );
    if (waiting) {
      cancelled.add(waiting.id);
      await h.call(operator, { method: 'POST', url: `/process/instance/${waiting.id}/cancel` });
    }
    cursor = page.nextCursor;
    if (cursor === null) break;
  }
  t.ok(cancelled.size > 0, 'some waiting ones moved to history between pages');
  t.equal(new Set(ids).size, ids.length, 'no execution on two pages');
  t.same(ids, before, 'every execution there was at the first page, in order, none missing');
});

t.test("GET /process/instances: another organization's executions never appear", async (t) => {
  const s = await seed(t);
  const { h } = s;
  const theirs = new Set(s.known.filter((k) => k.organization === 'other').map((k) => k.id));
  for (const query of ['', 'children=true', `processId=${s.theirs}`, 'correlationKey=order%20x', 'state=FAILED']) {
    const ids = await allPages(h, s.operator, query, 200);
    t.notOk(
      ids.some((id) => theirs.has(id)),
      `?${query}: none of theirs`,
    );
  }
  t.same(await allPages(h, s.operator, `processId=${s.theirs}`, 50), [], 'their flow lists nothing of theirs');
  const named = await h.call(s.operator, { method: 'GET', url: '/process/instances?organization=other' });
  t.equal(named.statusCode, 403);
  t.equal(named.json().error, 'FORBIDDEN', 'a scoped key may not name another organization');
  t.same(
    await allPages(h, s.operator, 'organization=default', 50),
    await allPages(h, s.operator, '', 50),
    'naming its own organization is naming none',
  );
  t.same(
    await allPages(h, s.otherOperator, 'children=true', 50),
    expected(s.known, (k) => k.organization === 'other'),
    'theirs see theirs only',
  );
});

t.test("GET /process/instances: children are folded under their parent; parentId lists one execution's", async (t) => {
  const s = await seed(t);
  const { h, operator } = s;
  const parents = s.known.filter((k) => k.processId === s.batch && k.parent === null);
  t.equal(parents.length, 3);
  const listed = (await h.call(operator, { method: 'GET', url: `/process/instances?processId=${s.batch}` })).json();
  t.same(
    listed.items.map((i: { processInstanceId: string; childCount: number }) => [i.processInstanceId, i.childCount]),
    expected(s.known, (k) => parents.includes(k)).map((id) => [id, 3]),
    'top-level only, each with its three children counted',
  );
  for (const parent of parents) {
    const children = expected(s.known, (k) => k.parent === parent.id);
    t.equal(children.length, 3);
    t.same(await allPages(h, operator, `parentId=${parent.id}`, 2), children, 'its children, newest first');
    t.same(await allPages(h, operator, `parentId=${parent.id}&children=false`, 2), children, 'whatever children says');
  }
  t.same(await allPages(h, s.otherOperator, `parentId=${parents[0]!.id}`, 50), [], "not another organization's");
});

t.test('GET /process/instances: a bad query is 400 VALIDATION_ERROR', async (t) => {
  const h = await apiHarness(t);
  const viewer = await h.key('viewer', 'default');
  for (const query of [
    'state=DONE',
    'state=running',
    'environment=STAGING',
    'startedAfter=yesterday',
    'startedBefore=2026-13-45',
    'limit=0',
    'limit=201',
    'children=maybe',
    'version=v1',
    'errorCode=',
    'unknown=1',
    'where=orderId',
    'where=order%20id=1',
    'where=1st=x',
    `where=note=${'x'.repeat(300)}`,
    Array.from({ length: 17 }, (_, i) => `where=a${i}=1`).join('&'),
  ]) {
    const res = await h.call(viewer, { method: 'GET', url: `/process/instances?${query}` });
    t.equal(res.statusCode, 400, query);
    t.equal(res.json().error, 'VALIDATION_ERROR', query);
  }
  const none = await h.call(viewer, { method: 'GET', url: '/process/instances' });
  t.same(none.json(), { items: [], nextCursor: null }, 'nothing yet');
  const where = await h.call(viewer, { method: 'GET', url: '/process/instances?where=orderId=A%3D1&where=x=' });
  t.equal(where.statusCode, 200, 'a value may hold = and may be empty');
});

t.test('GET /process/{id}/instances answers as before, with environment and errorCode', async (t) => {
  const s = await seed(t);
  const listed = (
    await s.h.call(s.operator, { method: 'GET', url: `/process/${s.orders}/instances?stateCd=2&limit=1000` })
  ).json();
  t.same(
    listed.items.map((i: { processInstanceId: string }) => i.processInstanceId),
    expected(s.known, (k) => k.processId === s.orders && k.state === 'FAILED'),
  );
  t.match(listed.items[0], { errorCode: 'NO_BRANCH_MATCHED', environment: 'DEVELOPMENT', state: 'FAILED' });
  const theirs = await s.h.call(s.operator, { method: 'GET', url: `/process/${s.theirs}/instances` });
  t.equal(theirs.json().error, 'PROCESS_NOT_FOUND');
});
