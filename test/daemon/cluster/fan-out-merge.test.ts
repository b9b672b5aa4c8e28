import t from 'tap';
import type { FastifyRequest } from 'fastify';
import { GATHERED } from '../../../src/daemon/cluster/fan-out-merge.js';

// What the daemons sharing a database answer to a list, merged into one daemon's answer.

const ask = (limit: number) => ({ query: { limit } }) as unknown as FastifyRequest;
const merge = (route: string) => GATHERED.get(route)!;
const page = (ids: string[], nextCursor: string | null = null) => ({
  items: ids.map((processInstanceId) => ({ processInstanceId })),
  nextCursor,
});
const ids = (answer: unknown) =>
  (answer as { items: { processInstanceId: string }[] }).items.map((i) => i.processInstanceId);

t.test("a flow's executions, and every one: newest first, each once, the next page's cursor", async (t) => {
  t.equal(merge('GET /process/instances'), merge('GET /process/:id/instances'), 'merged alike');
  const instances = merge('GET /process/:id/instances');
  // Each daemon its first three; `c` in history, so in both answers.
  const mine = page(['f', 'c', 'b'], 'b');
  const theirs = [page(['e', 'd', 'c'], 'c')];
  const first = instances(ask(3), mine, theirs) as { nextCursor: string | null };
  t.same(ids(first), ['f', 'e', 'd']);
  t.equal(first.nextCursor, 'd', 'more after d');
  const all = instances(ask(10), page(['f', 'c', 'b']), [page(['e', 'd', 'c'])]) as { nextCursor: string | null };
  t.same(ids(all), ['f', 'e', 'd', 'c', 'b'], 'c listed once');
  t.equal(all.nextCursor, null, 'nothing more');
  const short = instances(ask(4), page(['f']), [page(['e', 'd'], 'd')]) as { nextCursor: string | null };
  t.equal(short.nextCursor, 'd', 'a daemon that had more says so, though the merged page is short');
});

t.test('tasks oldest waiting first; jobs oldest first', async (t) => {
  const task = (since: string, id: string) => ({ waitingSince: since, processInstanceId: id, nodeInstanceId: 'n1' });
  const tasks = merge('GET /process/tasks')(ask(2), { items: [task('2026-01-01T00:00:02Z', 'b')], nextCursor: null }, [
    { items: [task('2026-01-01T00:00:01Z', 'a'), task('2026-01-01T00:00:03Z', 'c')], nextCursor: null },
  ]) as { items: { processInstanceId: string }[]; nextCursor: string };
  t.same(
    tasks.items.map((i) => i.processInstanceId),
    ['a', 'b'],
  );
  t.equal(tasks.nextCursor, '2026-01-01T00:00:02Z|b|n1', 'the cursor engine/tasks.ts reads');
  const job = (createdAt: string, key: string) => ({ createdAt, key });
  const jobs = merge('GET /jobs')(ask(2), { items: [job('2', 'y')], more: false }, [
    { items: [job('1', 'x'), job('3', 'z')], more: false },
  ]) as { items: { key: string }[]; more: boolean };
  t.same(
    jobs.items.map((j) => j.key),
    ['x', 'y'],
  );
  t.equal(jobs.more, true);
});

t.test("worker health: each domain's counts added, its workers joined", async (t) => {
  const health = (over: object) => ({
    organization: 'o',
    domain: 'billing',
    state: 'idle',
    waiting: 0,
    locked: 0,
    oldestWaiting: null,
    workers: [],
    lastSeen: null,
    ...over,
  });
  const merged = merge('GET /jobs/workers')(
    ask(0),
    { items: [health({ waiting: 2, state: 'stalled', oldestWaiting: '2026-01-01T00:00:05Z' })] },
    [
      {
        items: [
          health({
            locked: 1,
            state: 'active',
            oldestWaiting: '2026-01-01T00:00:01Z',
            workers: [{ worker: 'w', lastSeen: '2026-01-01T00:01:00Z', polling: true }],
            lastSeen: '2026-01-01T00:01:00Z',
          }),
          health({ domain: 'crm' }),
        ],
      },
    ],
  ) as { items: { domain: string }[] };
  t.match(merged.items, [
    {
      domain: 'billing',
      state: 'active',
      waiting: 2,
      locked: 1,
      oldestWaiting: '2026-01-01T00:00:01Z',
      workers: [{ worker: 'w', polling: true }],
      lastSeen: '2026-01-01T00:01:00Z',
    },
    { domain: 'crm', state: 'idle' },
  ]);
});

t.test('failures: counts added by flow, code and node, the newest of each, sorted and cut once merged', async (t) => {
  const failures = merge('GET /process/failures');
  const group = (nodeId: string | null, count: number, newest: string) => ({
    processId: 'p',
    errorCode: 'HTTP_500',
    nodeId,
    count,
    newest: { processInstanceId: newest, processVersion: '1', message: `m ${newest}`, at: null },
  });
  const asked = (sort: string, limit: number) => ({ query: { sort, limit } }) as unknown as FastifyRequest;
  // This daemon: history and its live ones; another: its live ones only.
  const mine = { groups: [group('call', 5, 'c'), group('pay', 1, 'b')], total: 6, groupCount: 2 };
  const theirs = [{ groups: [group('call', 1, 'd'), group(null, 2, 'a')], total: 3, groupCount: 2 }];
  t.same(failures(asked('newest', 10), mine, theirs), {
    groups: [group('call', 6, 'd'), group('pay', 1, 'b'), group(null, 2, 'a')],
    total: 9,
    groupCount: 3,
  });
  t.same(failures(asked('count', 2), mine, theirs), {
    groups: [group('call', 6, 'd'), group(null, 2, 'a')],
    total: 9,
    groupCount: 3,
  });
});
t.test(
  "a bulk operation's dry run: counts added up, samples merged newest first; its creation is not gathered",
  async (t) => {
    const { GATHERED_WHEN } = await import('../../../src/daemon/cluster/fan-out-merge.js');
    const dry = (count: number, ids: string[]) => ({
      dryRun: true,
      operation: 'cancel',
      count,
      maxExecutions: 100,
      sample: ids.map((processInstanceId) => ({ processInstanceId })),
    });
    const request = (body: object) => ({ body }) as unknown as FastifyRequest;
    const merged = merge('POST /process/bulk')(request({ dryRun: true, sample: 3 }), dry(2, ['d', 'a']), [
      dry(3, ['e', 'c', 'b']),
    ]) as { count: number; maxExecutions: number };
    t.equal(merged.count, 5, "each daemon's partitions counted once");
    t.same(ids({ items: (merged as unknown as { sample: unknown[] }).sample }), ['e', 'd', 'c']);
    t.equal(merged.maxExecutions, 100);
    const gathers = GATHERED_WHEN.get('POST /process/bulk')!;
    t.ok(gathers(request({ dryRun: true })), 'a dry run is asked of every daemon');
    t.notOk(gathers(request({ operation: 'cancel', query: {} })), 'a creation is the daemon asked alone');
  },
);
