import t from 'tap';
import { ExecutionIndex, type ListQuery } from '../../../../src/daemon/state/execution-index/execution-index.js';
import {
  DOMAINS,
  FLOWS,
  KEYS,
  ORGS,
  Oracle,
  random,
  randomId,
  randomSummary,
  REFS,
  TIERS,
} from '../../../helpers/directory-oracle.js';

// The resident directory against a naive oracle (plain Maps, every answer by a scan): a seeded
// random mix of puts of new executions, puts that replace one, removes and takes of due timers,
// every query compared after each operation.

t.test('a random mix of put, replace, remove and takeDue answers as the oracle does', (t) => {
  const rnd = random(60);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)]!;
  const dir = new ExecutionIndex(16);
  const oracle = new Oracle();
  const ids: string[] = [];
  let failures = 0;
  const same = (got: unknown, want: unknown, what: string): void => {
    if (JSON.stringify(got) === JSON.stringify(want)) return;
    failures++;
    if (failures < 5) t.same(got, want, what);
  };
  let checks = 0;
  let searched = 0;
  for (let op = 0; op < 6000; op++) {
    const r = rnd();
    let touched: string;
    let put = true;
    if (r < 0.5 || ids.length < 20) {
      touched = randomId(rnd);
      if (oracle.all.has(touched)) continue;
      ids.push(touched);
    } else if (r < 0.75) touched = pick(ids);
    else if (r < 0.95) {
      const at = Math.floor(rnd() * ids.length);
      touched = ids[at]!;
      ids[at] = ids.at(-1)!;
      ids.pop();
      same(dir.remove(touched), true, 'remove');
      oracle.all.delete(touched);
      same(dir.remove(touched), false, 'remove again');
      put = false;
    } else {
      const now = Math.floor(rnd() * 20) * 1000;
      const max = 1 + Math.floor(rnd() * 5);
      same(dir.takeDue(now, max), oracle.takeDue(now, max), 'takeDue');
      touched = pick(ids);
      put = false;
    }
    if (put) {
      const s = randomSummary(rnd, touched, ids);
      const location = { segment: Math.floor(rnd() * 9), offset: Math.floor(rnd() * 2 ** 32), length: 100 };
      dir.put(s, location);
      oracle.put(s, location);
    }
    const held = oracle.all.get(touched);
    const got = dir.get(touched);
    same(
      got === null ? null : { ...got.summary, waits: got.summary.waits },
      held === undefined ? null : { ...held.summary, dueMs: held.due },
      'get',
    );
    same(got?.location ?? null, held?.location ?? null, 'location');
    same(dir.has(touched), held !== undefined, 'has');
    same(dir.size, oracle.all.size, 'size');
    const root = pick(ids);
    same(dir.tree(root).sort(), oracle.tree(root), 'tree');
    const org = pick(ORGS);
    const ref = pick(REFS);
    const key = pick(KEYS);
    const subs = dir.subscribers(org, ref, key);
    same(
      subs.map((s) => `${s.id}|${s.node}`).sort(),
      oracle
        .subscribers(org, ref, key)
        .map((x) => x.slice(x.indexOf('|') + 1))
        .sort(),
      'subscribers',
    );
    const flow = pick(FLOWS);
    same(dir.tasks(org, flow), oracle.tasks(org, flow), 'tasks');
    const [domain, action] = pick(DOMAINS);
    same(
      dir
        .jobs(org, domain, action)
        .map((j) => `${j.id}|${j.node}|${j.notBefore}|${j.lockedUntil}`)
        .sort(),
      oracle.jobs(org, domain, action),
      'jobs',
    );
    same(dir.counts(org, flow), oracle.counts(org, flow), 'counts');
    same(dir.nextDue(), oracle.nextDue(), 'nextDue');
    const where: Array<[string, string]> = [['tier', pick(TIERS)]];
    if (rnd() < 0.5) where.push(['region', `r${Math.floor(rnd() * 5)}`]);
    same(dir.withSearch(where).sort(), oracle.withSearch(where), `withSearch ${JSON.stringify(where)}`);
    if (where.length === 1) searched += dir.withSearch(where).length;
    const query: ListQuery = {
      limit: 1 + Math.floor(rnd() * 40),
      after: rnd() < 0.5 ? null : rnd() < 0.5 ? pick(ids) : randomId(rnd),
      ...(rnd() < 0.3 ? { organization: org } : {}),
      ...(rnd() < 0.3 ? { processId: flow } : {}),
      ...(rnd() < 0.3 ? { stateCd: 0 } : {}),
    };
    same(dir.list(query), oracle.list(query), `list ${JSON.stringify(query)}`);
    checks++;
  }
  t.equal(failures, 0, 'no answer differed from the oracle');
  t.ok(checks > 5000, 'the mix ran its operations');
  t.ok(searched > 1000, 'searches found executions');
  t.ok(oracle.all.size > 100, 'the mix ended with executions left');
  t.ok(dir.slotCapacity > 16, 'the columns grew past their initial capacity');
  t.end();
});
