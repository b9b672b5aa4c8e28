import t from 'tap';
import { ExecutionFilter, type ExecutionQuery } from '../../../src/daemon/engine/execution-filter.js';
import { searchValueTag, textTag } from '../../../src/daemon/engine/execution-tags.js';
import { bucketOf } from '../../../src/daemon/state/ids.js';
import { listRange } from '../../../src/daemon/store/history-store.js';
import { engineHarness, ordersFlow } from '../../helpers/engine.js';

const FLOW = ordersFlow();

t.test('a text tag holds no white space or |, and a long or unencodable text is a digest', async (t) => {
  t.equal(textTag('order-42'), 'order-42', 'plain text as it is');
  for (const text of ['order 42', 'a|b', 'line\nbreak', 'tab\there', '100%', 'ünïcødé 注文', '#hash']) {
    const tag = textTag(text);
    t.notMatch(tag, /[\s|]/, `${JSON.stringify(text)}: ${tag}`);
    t.notOk(tag.startsWith('#'), 'encoded, not a digest');
    t.equal(decodeURIComponent(tag), text, 'and reads back');
  }
  const long = 'k'.repeat(129);
  t.match(textTag(long), /^#[A-Za-z0-9_-]{22}$/, 'a text longer than 128 encoded characters is a digest');
  t.equal(textTag(long), textTag(long), 'the same digest each time');
  t.not(textTag(long), textTag(`${long}x`), 'another text, another digest');
  t.equal(textTag('k'.repeat(128)), 'k'.repeat(128), '128 characters are kept');
  t.match(textTag('lone \ud800 surrogate'), /^#/, 'a text encodeURIComponent refuses is a digest');
});

t.test('archived executions carry the tags a list filters on, whichever way they went to history', async (t) => {
  const h = await engineHarness(t);
  const pid = await h.publish(FLOW);
  const key = 'order 42 | rush\n'; // spaces, a bar, a line break
  const ok = await h.start(pid, { mode: 'ok' }, { correlationKey: key });
  const failed = await h.start(pid, { mode: 'fail' });
  const waiting = await h.start(pid, { mode: 'wait' }, { correlationKey: 'k'.repeat(500) });
  await h.engine.cancel({ organization: null, processInstanceId: waiting.processInstanceId });
  for (const inst of [ok, failed, waiting]) await h.archived(inst.processInstanceId);
  const tags = new Map((await h.history.list(bucketOf(ok.processInstanceId)!)).map((e) => [e.id, e.tags] as const));
  t.same(tags.get(ok.processInstanceId), [
    pid,
    '1',
    '',
    'default',
    '1',
    'PRODUCTION',
    '',
    encodeURIComponent(key),
    '',
    '',
    '',
  ]);
  t.same(tags.get(failed.processInstanceId), [
    pid,
    '2',
    '',
    'default',
    '1',
    'PRODUCTION',
    'NO_BRANCH_MATCHED',
    '',
    'route',
    '',
    '',
  ]);
  t.same(
    tags.get(waiting.processInstanceId),
    [pid, '3', '', 'default', '1', 'PRODUCTION', '', textTag('k'.repeat(500)), '', '', ''],
    'archived in a batch, after its cancel: a long key as its digest',
  );
});

t.test('what tags say of a query, older ones included', async (t) => {
  const filter = (q: Partial<ExecutionQuery>, flows: Record<string, string> = {}) =>
    new ExecutionFilter({ organization: null, limit: 50, ...q }, (pid) => flows[pid]);
  const now = ['p', '2', '', 'acme', '3', 'DEVELOPMENT', 'HTTP_404', 'order%2042', 'call'];
  const beforeNode = now.slice(0, 8); // tagged for the list, not yet with the failed node
  const beforeList = ['p', '2', '']; // tagged with its parent, not yet for this list
  const oldest = ['p', '2']; // before parents were tagged
  const cases: Array<[Partial<ExecutionQuery>, readonly string[], string, Record<string, string>?]> = [
    [{}, now, 'yes'],
    [{}, beforeList, 'yes'],
    [{}, oldest, 'maybe'],
    [{ children: true }, oldest, 'yes'],
    [{ parentId: 'x' }, now, 'no'],
    [{ parentId: 'x' }, oldest, 'maybe'],
    [{ processId: 'q' }, oldest, 'no'],
    [{ stateCd: 1 }, oldest, 'no'],
    [{ errorCode: 'HTTP_404' }, now, 'yes'],
    [{ errorCode: 'HTTP_404' }, ['p', '1', '', 'acme', '3', 'DEVELOPMENT', '', ''], 'no'],
    [{ errorCode: 'HTTP_404' }, beforeList, 'maybe'],
    [{ errorCode: 'HTTP_404' }, ['p', '1', ''], 'no'],
    [{ errorCode: 'HTTP_500' }, now, 'no'],
    [{ failedNode: 'call' }, now, 'yes'],
    [{ failedNode: 'other' }, now, 'no'],
    [{ failedNode: 'call' }, beforeNode, 'maybe'],
    [{ failedNode: 'call', errorCode: 'HTTP_500' }, beforeNode, 'no'],
    [{ failedNode: 'call' }, ['p', '1', '', 'acme', '3', 'DEVELOPMENT', '', '', ''], 'no'],
    [{ failedNode: 'call' }, ['p', '1', ''], 'no'],
    [{ failedNode: 'call' }, beforeList, 'maybe'],
    [{ failedNode: 'n'.repeat(200) }, [...now.slice(0, 8), textTag('n'.repeat(200))], 'maybe'],
    [{ correlationKey: 'order 42' }, now, 'yes'],
    [{ correlationKey: 'order 43' }, now, 'no'],
    [{ correlationKey: 'order 42' }, beforeList, 'maybe'],
    [{ correlationKey: 'k'.repeat(200) }, [...now.slice(0, 7), textTag('k'.repeat(200))], 'maybe'],
    [{ correlationKey: 'k'.repeat(200) }, now, 'no'],
    [{ version: '3', environment: 'DEVELOPMENT' }, now, 'yes'],
    [{ version: '4' }, now, 'no'],
    [{ environment: 'PRODUCTION' }, now, 'no'],
    [{ version: '3' }, beforeList, 'maybe'],
    [{ organization: 'acme' }, now, 'yes'],
    [{ organization: 'other' }, now, 'no'],
    [{ organization: 'acme' }, beforeList, 'maybe'],
    [{ organization: 'acme' }, beforeList, 'yes', { p: 'acme' }],
    [{ organization: 'other' }, beforeList, 'no', { p: 'acme' }],
  ];
  // Search attributes (the pairs tag, PAIRS_TAG): absent in history written before them, when none had any.
  const searched = [...now, '', `customer=Ada%20L&orderId=${searchValueTag('A-1002')}`];
  const longValue = 'v'.repeat(100);
  const digested = [...now, '', `note=${searchValueTag(longValue)}`];
  cases.push(
    [{ search: [['orderId', 'A-1002']] }, searched, 'yes'],
    [
      {
        search: [
          ['customer', 'Ada L'],
          ['orderId', 'A-1002'],
        ],
      },
      searched,
      'yes',
    ],
    [{ search: [['orderId', 'A-1003']] }, searched, 'no'],
    [{ search: [['order', 'A-1002']] }, searched, 'no'],
    [{ search: [['orderId', 'A-1002']] }, [...now, '', ''], 'no'],
    [{ search: [['orderId', 'A-1002']] }, now, 'no'],
    [{ search: [['note', longValue]] }, digested, 'maybe'],
    [{ search: [['note', `${longValue}x`]] }, digested, 'no'],
  );
  for (const [q, tags, verdict, flows] of cases) {
    const f = filter(q, flows);
    t.equal(f.tags(tags, 'x'), verdict, `${JSON.stringify(q)} over ${JSON.stringify(tags)}`);
    // What a history narrows by never drops what the tags do not refuse.
    const pairs = f.pairs();
    const kept = listRange([{ id: 'x', tags }], { tags: f.narrowing(), ...(pairs && { pairs }) }).length === 1;
    if (verdict !== 'no') t.ok(kept, `narrowed by ${JSON.stringify(f.narrowing())}, still listed`);
  }
});

t.test('a tree is its root and every execution tagged with it, children included', async (t) => {
  const tree = new ExecutionFilter({ organization: null, limit: 50, rootId: 'r' }, () => undefined);
  const tagged = (parent: string, root: string) => ['p', '1', parent, 'acme', '1', 'PRODUCTION', '', '', '', root];
  t.equal(tree.tags(tagged('', ''), 'r'), 'yes', 'the root itself');
  t.equal(tree.tags(tagged('', 'r'), 'c'), 'yes', 'a flow it called: top-level, tagged with the root');
  t.equal(tree.tags(tagged('c', 'r'), 'd'), 'yes', 'a child of one');
  t.equal(tree.tags(tagged('', ''), 'other'), 'no', 'another top-level execution');
  t.equal(tree.tags(tagged('x', 's'), 'y'), 'no', 'of another tree');
  t.equal(tree.tags(tagged('x', 's').slice(0, 9), 'y'), 'maybe', 'archived before trees were tagged');
  for (const tags of [tagged('', ''), tagged('c', 'r')])
    t.equal(listRange([{ id: 'r', tags }], { tags: tree.narrowing() }).length, 1, 'never narrowed away');
});

t.test('a query bounds ids by its cursor, its start times and the parent it names', async (t) => {
  const at = Date.parse('2026-11-21T10:00:00.000Z');
  const prefix = (ms: number) => {
    const hex = ms.toString(16).padStart(12, '0');
    return `${hex.slice(0, 8)}-${hex.slice(8)}`;
  };
  const id = (ms: number, tail = '7000-8000-000000000000') => `${prefix(ms)}-${tail}`;
  const f = new ExecutionFilter(
    { organization: null, limit: 50, startedAfter: at, startedBefore: at + 1000, cursor: id(at + 500) },
    () => undefined,
  );
  t.ok(f.inBounds(id(at)), 'started at startedAfter');
  t.notOk(f.inBounds(id(at - 1, '7fff-bfff-ffffffffffff')), 'a millisecond before');
  t.ok(f.inBounds(id(at + 499, '7fff-bfff-ffffffffffff')), 'below the cursor');
  t.notOk(f.inBounds(id(at + 500)), 'the cursor itself');
  const child = new ExecutionFilter({ organization: null, limit: 50, parentId: id(at + 2000) }, () => undefined);
  t.equal(child.lower, prefix(at + 2000), 'a child starts no earlier than its parent');
  t.equal(child.upper, null);
  const tree = new ExecutionFilter({ organization: null, limit: 50, rootId: id(at + 3000) }, () => undefined);
  t.equal(tree.lower, prefix(at + 3000), 'nothing of a tree starts before its root');
});
