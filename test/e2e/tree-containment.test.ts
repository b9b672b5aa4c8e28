import '../setup/fixtures.js'; // fixtures under the OS temp dir (see there)
import { readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { callDaemon, startDaemon, wfxIn } from '../helpers/cli.js';
import { eventually } from '../helpers/eventually.js';
import { FORK, forkFlow, forkUntilFlow, pausedForkFlow } from '../../bench/attack-flows.js';

// Issue #81 on a real daemon: a flow that calls itself is contained by its tree's budget, an
// organization by its pace of starts, and `wfx instances cancel ROOT --tree` ends what is left,
// also across a kill -9. Another organization is served all along.

const ASK = '81000000-0000-4000-8000-000000000001';
const ASK_FLOW = `processId: ${ASK}
name: Ordinary work
nodes:
  start: { type: startEvent, next: ask }
  ask: { type: inputNode, inputType: textbox, next: done }
  done: { type: endEvent }
`;

/** A daemon on `dataDir`, with a developer key of `acme` (the attacker) and one of `globex`. */
async function daemon(t: Test, dataDir: string, args: readonly string[] = []) {
  const info = await startDaemon(t, { dataDir, args });
  const bootstrap = (await readFile(join(dataDir, 'bootstrap.key'), 'utf8')).trim();
  const call = (key: string, method: string, path: string, body?: object) =>
    callDaemon(info.url, key, method, path, body);
  const keyOf = async (organization: string) => {
    const made = await call(bootstrap, 'POST', '/admin/api-keys', { name: 'dev', role: 'developer', organization });
    if (made.status !== 201) throw new Error(`no key for ${organization}: ${JSON.stringify(made)}`);
    return made.body.apiKey as string;
  };
  return { info, dataDir, bootstrap, call, keyOf, kill: () => process.kill(info.pid, 'SIGKILL') };
}

type Daemon = Awaited<ReturnType<typeof daemon>>;

/** What is known of a tree's executions: each one's state and start, newest first. */
interface Member {
  readonly processInstanceId: string;
  readonly stateCd: number;
  readonly errorCode: string | null;
  readonly startTime: string;
}

/** Every execution of the tree rooted at `root`, its root included, paged through GET /process/instances?rootId=. */
async function treeOf(d: Daemon, key: string, root: string): Promise<Member[]> {
  const all: Member[] = [];
  for (let cursor: string | null = null, page = 0; page < 1000; page++) {
    const q: string = cursor === null ? '' : `&cursor=${encodeURIComponent(cursor)}`;
    const got = await d.call(key, 'GET', `/process/instances?rootId=${root}&limit=200${q}`);
    if (got.status !== 200) throw new Error(`listing the tree: ${JSON.stringify(got)}`);
    all.push(...(got.body.items as Member[]));
    cursor = got.body.nextCursor as string | null;
    if (cursor === null) break;
  }
  return all;
}

/** Resolves once nothing of the tree runs, with its executions. */
async function treeEnded(d: Daemon, key: string, root: string, withinMs = 60_000): Promise<Member[]> {
  return eventually(
    `nothing of tree ${root} runs`,
    async () => {
      const running = await d.call(key, 'GET', `/process/instances?rootId=${root}&state=RUNNING&limit=1`);
      return running.status === 200 && (running.body.items as unknown[]).length === 0;
    },
    { withinMs, maxPauseMs: 250 },
  ).then(() => treeOf(d, key, root));
}

/** Bytes under `dir`, every file's. */
async function bytesUnder(dir: string): Promise<number> {
  let total = 0;
  for (const entry of await readdir(dir, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile()) continue;
    total += (await stat(join(entry.parentPath, entry.name)).catch(() => ({ size: 0 }))).size;
  }
  return total;
}

/** The tree's distinct failure codes. */
const codesOf = (members: readonly Member[]) => [
  ...new Set(members.flatMap((m) => (m.errorCode ? [m.errorCode] : []))),
];

const MB = 1024 * 1024;

t.test(
  "issue #81's fork, on the defaults: its tree stops at its budget, small on disk; another organization is served",
  async (t) => {
    const dataDir = join(t.testdir(), 'data');
    const d = await daemon(t, dataDir);
    const acme = await d.keyOf('acme');
    const globex = await d.keyOf('globex');
    t.equal((await d.call(acme, 'POST', '/admin/flows', { source: forkFlow() })).status, 200);
    t.equal((await d.call(globex, 'POST', '/admin/flows', { source: ASK_FLOW })).status, 200);
    const before = await bytesUnder(dataDir);

    const started = await d.call(acme, 'POST', '/process/exec', { processId: FORK });
    t.equal(started.status, 200, 'the fork starts');
    const root = started.body.processInstanceId as string;
    // While it spreads, another organization starts work and reads its executions.
    const other = await d.call(globex, 'POST', '/process/exec', { processId: ASK });
    t.equal(other.status, 200, "the other organization's start is served");
    const reads = await Promise.all(
      Array.from({ length: 10 }, () => d.call(globex, 'GET', '/process/instances?limit=1')),
    );
    t.ok(
      reads.every((r) => r.status === 200),
      'and each of its reads is answered',
    );

    const tree = await treeEnded(d, acme, root, 30_000);
    t.ok(tree.length <= 1 + 10_000, `no more than the tree-created budget under the root: ${tree.length - 1}`);
    t.ok(tree.length > 100, 'and it did spread before');
    t.ok(
      codesOf(tree).every((c) => c === 'TREE_BUDGET_EXCEEDED' || c === 'ORG_RATE_EXCEEDED'),
      `what it could not start failed with a limit's code: ${codesOf(tree).join(', ')}`,
    );
    const grown = (await bytesUnder(dataDir)) - before;
    t.ok(grown < 100 * MB, `the data directory grew ${(grown / MB).toFixed(1)} MB`);
    const answered = await d.call(globex, 'POST', '/process/task', {
      processInstanceId: other.body.processInstanceId,
      nodeId: 'ask',
      action: 'COMPLETE',
      data: { inputValue: 'fine' },
    });
    t.equal(answered.status, 200, "the other organization's task is answered");
  },
);

t.test('`wfx instances cancel ROOT --tree` ends a tree that waits as it grows, also after a kill -9', async (t) => {
  const dataDir = join(t.testdir(), 'data');
  const args = ['--limit', 'tree-created=300'];
  let d = await daemon(t, dataDir, args);
  const acme = await d.keyOf('acme');
  t.equal((await d.call(acme, 'POST', '/admin/flows', { source: pausedForkFlow('100ms') })).status, 200);

  // Killed while it spreads: back, the tree goes on from its tally, not from nothing.
  const first = (await d.call(acme, 'POST', '/process/exec', { processId: FORK })).body.processInstanceId as string;
  await eventually('the tree spreads', async () => (await treeOf(d, acme, first)).length >= 60, { maxPauseMs: 50 });
  d.kill();
  d = await daemon(t, dataDir, args);
  const tree = await treeEnded(d, acme, first);
  t.ok(tree.length <= 1 + 300, `across the kill, no more than the budget under the root: ${tree.length - 1}`);
  t.same(codesOf(tree), ['TREE_BUDGET_EXCEEDED'], 'past it, the nodes failed with its code');

  // Another fork, slower, cancelled as a whole while it waits and grows; its root ended long before.
  t.equal((await d.call(acme, 'POST', '/admin/flows', { source: pausedForkFlow('1s') })).status, 200);
  const second = (await d.call(acme, 'POST', '/process/exec', { processId: FORK })).body.processInstanceId as string;
  await eventually('the tree spreads', async () => (await treeOf(d, acme, second)).length >= 15, { maxPauseMs: 50 });
  const cancelled = await wfxIn(['instances', 'cancel', second.slice(0, 18), '--tree', '--json'], {
    env: { ...process.env, WFX_URL: d.info.url, WFX_API_KEY: acme },
  });
  t.equal(cancelled.code, 0, `wfx instances cancel --tree exits 0: ${cancelled.stderr}`);
  t.match(JSON.parse(cancelled.stdout), { operation: 'cancel', state: 'COMPLETED', query: { rootId: second } });
  const ended = await treeEnded(d, acme, second);
  t.ok(ended.length < 1 + 300, `it stopped short of its budget: ${ended.length - 1} under the root`);
  t.ok(
    ended.some((m) => m.stateCd === 3),
    'what ran was cancelled',
  );
  t.notOk(codesOf(ended).includes('TREE_BUDGET_EXCEEDED'), 'not stopped by the budget');

  const child = ended.find((m) => m.processInstanceId !== second)!;
  const refused = await wfxIn(['instances', 'cancel', child.processInstanceId, '--tree'], {
    env: { ...process.env, WFX_URL: d.info.url, WFX_API_KEY: acme },
  });
  t.equal(refused.code, 2, 'an execution under another is not a tree to cancel: a usage error');
  t.match(refused.stderr, new RegExp(`runs under ${second}`), 'that names its root');
});

t.test('a recursion that stops too late is held to the budget', async (t) => {
  const d = await daemon(t, join(t.testdir(), 'data'), ['--limit', 'tree-created=200']);
  const acme = await d.keyOf('acme');
  t.equal((await d.call(acme, 'POST', '/admin/flows', { source: forkUntilFlow() })).status, 200);
  const shallow = await d.call(acme, 'POST', '/process/exec', { processId: FORK, data: { depth: 0, until: 3 } });
  const whole = await treeEnded(d, acme, shallow.body.processInstanceId as string);
  t.equal(whole.length, 1 + 2 + 4 + 8, 'one that stops in time runs whole');
  t.same(codesOf(whole), [], 'none failed');
  const deep = await d.call(acme, 'POST', '/process/exec', { processId: FORK, data: { depth: 0, until: 12 } });
  const tree = await treeEnded(d, acme, deep.body.processInstanceId as string);
  t.equal(tree.length, 1 + 200, 'one that stops too late makes its budget, no more');
  t.same(codesOf(tree), ['TREE_BUDGET_EXCEEDED']);
});

t.test('a flow calling itself is held to the pace of starts, and so are API starts', async (t) => {
  const d = await daemon(t, join(t.testdir(), 'data'), ['--limit', 'org-starts-per-second=50']);
  const acme = await d.keyOf('acme');
  t.equal((await d.call(acme, 'POST', '/admin/flows', { source: forkFlow() })).status, 200);
  const root = (await d.call(acme, 'POST', '/process/exec', { processId: FORK })).body.processInstanceId as string;
  const tree = await treeEnded(d, acme, root);
  t.same(codesOf(tree), ['ORG_RATE_EXCEEDED'], 'what it could not start failed with the code of the pace');
  // A second's burst, then no faster than 50 a second.
  const starts = tree.map((m) => Date.parse(m.startTime)).sort((a, b) => a - b);
  const seconds = (starts.at(-1)! - starts[0]!) / 1000;
  t.ok(tree.length <= 50 * seconds + 50 + 1, `${tree.length} started over ${seconds.toFixed(2)} s`);

  // API starts of another flow in the same organization: past the pace, 429 with when to retry.
  t.equal((await d.call(acme, 'POST', '/admin/flows', { source: ASK_FLOW })).status, 200);
  const sent = Date.now();
  const answers = await Promise.all(
    Array.from({ length: 200 }, () => d.call(acme, 'POST', '/process/exec', { processId: ASK })),
  );
  const took = (Date.now() - sent) / 1000;
  const ok = answers.filter((a) => a.status === 200).length;
  const limited = answers.filter((a) => a.status === 429);
  t.ok(ok <= 50 * took + 50, `${ok} of 200 started in ${took.toFixed(2)} s`);
  t.ok(limited.length > 0, 'the rest were refused');
  t.ok(
    limited.every((a) => a.body.error === 'ORG_RATE_EXCEEDED' && typeof a.body.retryAfter === 'number'),
    'with ORG_RATE_EXCEEDED and retryAfter',
  );
  t.equal(ok + limited.length, 200, 'nothing else');
});
