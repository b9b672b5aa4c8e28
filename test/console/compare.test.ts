import t from 'tap';
import type { InstanceView, LogEntry, NodeView, StatusCd } from '../../src/shared/api/process.js';
import type { FlowNode } from '../../src/shared/flow/types.js';
import {
  alignPaths,
  compareRuns,
  firstVisits,
  newDifferences,
  nodeTimes,
  type RunInput,
} from '../../src/console/model/compare.js';
import { copiesComplete, variableChanges, visitVariables } from '../../src/console/model/compare-variables.js';
import { deltaWords, divergenceWords, nodeMark, timeWords, valueWords } from '../../src/console/model/compare-words.js';

/** Prepare, a gateway on `total`, big or small, a check that may fail, done. */
const NODES: Record<string, FlowNode> = {
  start: { type: 'startEvent', next: 'prep' },
  prep: { type: 'setVariable', name: 'Prepare', variables: { prepared: true }, next: 'route' },
  route: {
    type: 'exclusiveGateway',
    name: 'Big order?',
    branches: [{ condition: '${total > 100}', next: 'big' }],
    default: 'small',
  },
  big: { type: 'setVariable', name: 'Big order', variables: { size: 'big' }, next: 'check' },
  small: { type: 'setVariable', name: 'Small order', variables: { size: 'small' }, next: 'check' },
  check: { type: 'scriptTask', name: 'Check', script: 'return {}', next: 'done' },
  done: { type: 'endEvent', name: 'Done' },
};

const T0 = Date.UTC(2026, 0, 1, 12, 0, 0);
const at = (ms: number) => new Date(T0 + ms).toISOString();
let made = 0;
/** A node instance of `nodeId` from `from` ms to `to` ms after the start (null: still there). */
const ni = (nodeId: string, statusCd: StatusCd, from: number, to: number | null): NodeView => ({
  nodeInstanceId: `n${++made}`,
  nodeId,
  nodeName: nodeId,
  nodeType: NODES[nodeId]?.type ?? 'task',
  statusCd,
  startTime: at(from),
  endTime: to === null ? null : at(to),
});
const run = (id: string, nodes: NodeView[], extra: Partial<InstanceView> = {}): InstanceView => ({
  processInstanceId: id,
  processId: 'flow-1',
  processName: 'Orders',
  processVersion: '1',
  stateCd: 1,
  state: 'COMPLETED',
  startTime: at(0),
  endTime: at(1000),
  correlationKey: null,
  organization: 'default',
  data: {},
  output: null,
  parentInstanceId: null,
  environment: 'PRODUCTION',
  nodes,
  ...extra,
});
/** A log line of `nodeId` at `ms`, with a copy of the variables when given. */
const line = (nodeId: string, message: string, ms: number, variables?: Record<string, unknown>): LogEntry => ({
  nodeId,
  nodeName: nodeId,
  nodeType: 'task',
  message,
  level: 'INFO',
  timestamp: at(ms),
  ...(variables && { variables }),
});

/** The log of a run through `branch`, its variables as the daemon copies them. */
function logOf(branch: 'big' | 'small', total: number): LogEntry[] {
  const input = { total };
  const prepared = { ...input, prepared: true };
  const sized = { ...prepared, size: branch };
  return [
    line('', 'started', 0, input),
    line('start', 'started', 0),
    line('start', 'completed', 0),
    line('prep', 'started', 10),
    line('prep', 'completed', 20, prepared),
    line('route', 'started', 20),
    line('route', 'completed', 20),
    line(branch, 'started', 30),
    line(branch, 'completed', 40, sized),
    line('check', 'started', 40),
    line('check', 'completed', branch === 'big' ? 400 : 100),
    line('done', 'started', 400),
    line('done', 'completed', 400),
  ];
}

/** A run through `branch`: check takes longer on the big path. */
function runOf(id: string, branch: 'big' | 'small', total: number): RunInput {
  const checkEnd = branch === 'big' ? 400 : 100;
  return {
    run: run(
      id,
      [
        ni('start', 2, 0, 0),
        ni('prep', 2, 10, 20),
        ni('route', 2, 20, 20),
        ni(branch, 2, 30, 40),
        ni('check', 2, 40, checkEnd),
        ni('done', 2, checkEnd, checkEnd),
      ],
      { data: { total, prepared: true, size: branch } },
    ),
    nodes: NODES,
    log: logOf(branch, total),
  };
}

t.test('path alignment: A in its order, B’s own nodes where B reached them', async (t) => {
  t.same(alignPaths(['s', 'g', 'big', 'h', 'e'], ['s', 'g', 'small', 'h', 'e']), [
    { id: 's', side: 'both' },
    { id: 'g', side: 'both' },
    { id: 'small', side: 'b' },
    { id: 'big', side: 'a' },
    { id: 'h', side: 'both' },
    { id: 'e', side: 'both' },
  ]);
  t.same(
    alignPaths(['s', 'x'], ['s', 'y1', 'y2', 'x']).map((r) => `${r.id}:${r.side}`),
    ['s:both', 'y1:b', 'y2:b', 'x:both'],
    'a run of B-only nodes keeps its order',
  );
  t.same(
    alignPaths(['s'], ['t', 's']).map((r) => r.id),
    ['t', 's'],
    'a B-only first node goes first',
  );
  t.same(alignPaths([], []), []);
  t.same(
    firstVisits([ni('b', 2, 20, 30), ni('a', 2, 10, 20), ni('b', 2, 40, 50)]),
    ['a', 'b'],
    'first visits by start time, each node once',
  );
});

t.test('two runs through different branches: the divergence at the gateway, each with its branch', async (t) => {
  const A = runOf('run-a', 'big', 500);
  const B = runOf('run-b', 'small', 5);
  const c = compareRuns(A, B, T0 + 1000);
  t.ok(c.sameFlow);
  t.same(c.onlyDefinedIn, { a: [], b: [] }, 'one version');
  t.same(
    c.rows.map((r) => `${r.id}:${r.side}`),
    ['start:both', 'prep:both', 'route:both', 'small:b', 'big:a', 'check:both', 'done:both'],
  );
  t.match(c.divergence, {
    nodeId: 'route',
    name: 'Big order?',
    type: 'exclusiveGateway',
    a: { state: 'completed', took: [{ label: 'total > 100', to: 'big', toName: 'Big order' }] },
    b: { state: 'completed', took: [{ label: 'default', to: 'small', toName: 'Small order' }] },
  });
  t.equal(c.nodeSides.get('big'), 'a');
  t.equal(c.nodeSides.get('small'), 'b');
  t.equal(c.nodeSides.get('route'), 'both');
  const side = (from: string, to: string) =>
    c.edgeSides[c.graph.edges.findIndex((e) => e.from === from && e.to === to)];
  t.equal(side('route', 'big'), 'a', 'the edge only A took');
  t.equal(side('route', 'small'), 'b', 'the edge only B took');
  t.equal(side('prep', 'route'), 'both');
  t.equal(side('start', 'prep'), 'both');
  t.ok(
    c.graph.edges.every((e, i) => e.taken === (c.edgeSides[i] !== null)),
    'an edge either run took is drawn taken, no other',
  );
  t.ok(
    c.graph.nodes.every((n) => n.instances.length === 0),
    'the drawing carries no run of its own',
  );
});

t.test('durations per node, side by side with the difference', async (t) => {
  const c = compareRuns(runOf('run-a', 'big', 500), runOf('run-b', 'small', 5), T0 + 1000);
  const check = c.rows.find((r) => r.id === 'check')!;
  t.same(check.a, { visits: 1, ms: 360, open: false });
  t.same(check.b, { visits: 1, ms: 60, open: false });
  t.equal(check.deltaMs, -300, "B's time less A's");
  const big = c.rows.find((r) => r.id === 'big')!;
  t.same([big.b, big.deltaMs, big.variables], [null, null, null], 'a node only A reached: no difference to take');
});

t.test('loops: repeated visits summed with their count; an open visit counted up to now', async (t) => {
  const times = nodeTimes(
    [ni('x', 2, 0, 100), ni('y', 2, 100, 110), ni('x', 2, 110, 160), ni('x', 1, 200, null)],
    T0 + 250,
  );
  t.same(times.get('x'), { visits: 3, ms: 100 + 50 + 50, open: true });
  t.same(times.get('y'), { visits: 1, ms: 10, open: false });
  // A loop back through the gateway: more visits there is a divergence.
  const looped = runOf('run-a', 'big', 500);
  const again: RunInput = {
    ...looped,
    run: { ...looped.run, nodes: [...looped.run.nodes, ni('route', 2, 410, 420)] },
  };
  const c = compareRuns(again, runOf('run-b', 'big', 500), T0 + 1000);
  t.match(c.divergence, { nodeId: 'route', a: { visits: 2 }, b: { visits: 1 } });
  t.match(
    c.rows.find((r) => r.id === 'route'),
    { a: { visits: 2, ms: 10 }, b: { visits: 1, ms: 0 } },
  );
});

t.test('variables that differ: added, removed, changed, key order aside, the failure left out', async (t) => {
  t.same(
    variableChanges(
      { same: { x: 1, y: 2 }, gone: 1, moved: [1, 2], error: 'x' },
      { same: { y: 2, x: 1 }, moved: [2, 1], fresh: null },
    ),
    [
      { name: 'fresh', kind: 'added', b: null },
      { name: 'gone', kind: 'removed', a: 1 },
      { name: 'moved', kind: 'changed', a: [1, 2], b: [2, 1] },
    ],
  );
  t.same(variableChanges({}, {}), []);
});

t.test('the variables at a node, on entry and exit, and their difference between runs', async (t) => {
  const log = logOf('big', 500);
  t.same(visitVariables(log, 'big'), {
    entry: { total: 500, prepared: true },
    exit: { total: 500, prepared: true, size: 'big' },
  });
  t.same(
    visitVariables(log, 'check'),
    { entry: { total: 500, prepared: true, size: 'big' }, exit: { total: 500, prepared: true, size: 'big' } },
    'a node that set nothing leaves them as it found them',
  );
  t.same(visitVariables(log, 'small'), { entry: null, exit: null }, 'not visited');
  t.same(visitVariables(log.slice(0, 10), 'check').exit, null, 'no exit while the visit runs');
  const twice = [...log, line('prep', 'started', 500), line('prep', 'completed', 510, { total: 1 })];
  t.same(visitVariables(twice, 'prep').exit, { total: 1 }, 'the last visit');

  const c = compareRuns(runOf('run-a', 'big', 500), runOf('run-b', 'small', 5), T0 + 1000);
  t.same(c.rows.find((r) => r.id === 'prep')!.variables, {
    entry: [{ name: 'total', kind: 'changed', a: 500, b: 5 }],
    exit: [{ name: 'total', kind: 'changed', a: 500, b: 5 }],
  });
  t.same(c.rows.find((r) => r.id === 'check')!.variables!.entry, [
    { name: 'size', kind: 'changed', a: 'big', b: 'small' },
    { name: 'total', kind: 'changed', a: 500, b: 5 },
  ]);
  t.same(c.finalVariables, [
    { name: 'size', kind: 'changed', a: 'big', b: 'small' },
    { name: 'total', kind: 'changed', a: 500, b: 5 },
  ]);
  t.same(c.variablesIncomplete, { a: false, b: false });

  const unread = compareRuns({ ...runOf('run-a', 'big', 500), log: null }, runOf('run-b', 'small', 5), T0);
  t.equal(unread.rows.find((r) => r.id === 'prep')!.variables, null, 'a log not read yet tells nothing');
});

t.test('a log whose copies stopped: values after the last copy are unknown, not stale', async (t) => {
  const log = logOf('big', 500).map((e) => (e.nodeId === 'big' ? { ...e, variables: undefined } : e));
  const final = { total: 500, prepared: true, size: 'big' };
  t.notOk(copiesComplete(log, final), 'the last copy is not what the run has');
  t.ok(copiesComplete(logOf('big', 500), final));
  t.ok(copiesComplete([], {}), 'no variables at all');
  t.same(visitVariables(log, 'prep', false), {
    entry: { total: 500 },
    exit: { total: 500, prepared: true },
  });
  t.same(visitVariables(log, 'check', false), { entry: null, exit: null });
  const A = runOf('run-a', 'big', 500);
  const c = compareRuns({ ...A, log }, runOf('run-b', 'big', 500), T0 + 1000);
  t.same(c.variablesIncomplete, { a: true, b: false });
  t.same(c.rows.find((r) => r.id === 'check')!.variables, { entry: null, exit: null });
});

t.test('a run that failed where the other went on: the divergence is where it failed', async (t) => {
  const B = runOf('run-b', 'big', 500);
  const A: RunInput = {
    ...B,
    run: run(
      'run-a',
      [
        ni('start', 2, 0, 0),
        ni('prep', 2, 10, 20),
        ni('route', 2, 20, 20),
        ni('big', 2, 30, 40),
        ni('check', 3, 40, 50),
      ],
      {
        state: 'FAILED',
      },
    ),
  };
  const c = compareRuns(A, B, T0 + 1000);
  t.match(c.divergence, { nodeId: 'check', a: { state: 'failed', took: [] }, b: { state: 'completed' } });
  t.equal(c.rows.find((r) => r.id === 'done')!.side, 'b');
  t.equal(compareRuns(B, B, T0).divergence, null, 'a run against itself does not part');
});

t.test('two versions: compared by node id, the diagram has the nodes only one defines', async (t) => {
  const A = runOf('run-a', 'big', 500);
  // Version 2 puts an audit between the big branch and the check.
  const v2: Record<string, FlowNode> = {
    ...NODES,
    big: { type: 'setVariable', name: 'Big order', variables: { size: 'big' }, next: 'audit' },
    audit: { type: 'task', name: 'Audit', next: 'check' },
  };
  const { small: _small, ...v2nodes } = v2;
  const B: RunInput = {
    run: run(
      'run-b',
      [
        ni('start', 2, 0, 0),
        ni('prep', 2, 10, 20),
        ni('route', 2, 20, 20),
        ni('big', 2, 30, 40),
        ni('audit', 2, 40, 45),
        ni('check', 2, 45, 60),
        ni('done', 2, 60, 60),
      ],
      { processVersion: '2' },
    ),
    nodes: v2nodes,
    log: null,
  };
  const c = compareRuns(A, B, T0 + 1000);
  t.same(c.versions, { a: '1', b: '2' });
  t.same(c.onlyDefinedIn, { a: ['small'], b: ['audit'] });
  t.ok(
    c.graph.nodes.some((n) => n.id === 'audit'),
    "B's own node is drawn",
  );
  t.ok(
    c.graph.nodes.some((n) => n.id === 'small'),
    "A's version's node is drawn",
  );
  t.same(
    c.rows.map((r) => `${r.id}:${r.side}`),
    ['start:both', 'prep:both', 'route:both', 'big:both', 'audit:b', 'check:both', 'done:both'],
  );
  t.match(c.divergence, { nodeId: 'big', a: { took: [{ to: 'check' }] }, b: { took: [{ to: 'audit' }] } });
  const i = c.graph.edges.findIndex((e) => e.from === 'big' && e.to === 'audit');
  t.ok(i >= 0, "the edge B's version added is drawn");
  t.equal(c.edgeSides[i], 'b');
  t.equal(c.edgeSides[c.graph.edges.findIndex((e) => e.from === 'big' && e.to === 'check')], 'a');
  t.notOk(compareRuns(A, { ...B, run: { ...B.run, processId: 'other' } }, T0).sameFlow, 'another flow is told apart');
});

t.test(
  'differences new at each node: an input that differs shows once, a node that set something differently shows it',
  async (t) => {
    const c = compareRuns(runOf('run-a', 'big', 500), runOf('run-b', 'small', 5), T0 + 1000);
    const fresh = newDifferences(c.rows);
    const names = (id: string) => {
      const d = fresh.get(id);
      return d ? { entry: d.entry?.map((x) => x.name) ?? null, exit: d.exit?.map((x) => x.name) ?? null } : null;
    };
    t.same(names('start'), { entry: ['total'], exit: [] }, 'the input, where the runs began');
    t.same(names('prep'), { entry: [], exit: [] }, 'the same difference is not said again');
    t.same(names('check'), { entry: ['size'], exit: [] }, 'what the branches set, where the paths meet again');
    t.equal(fresh.get('big'), undefined, 'a node one run reached has no differences of its own');
    const checked = compareRuns(
      runOf('run-a', 'big', 500),
      {
        ...runOf('run-b', 'big', 500),
        log: [
          ...logOf('big', 500).slice(0, 10),
          line('check', 'completed', 100, { total: 500, prepared: true, size: 'big', ok: 1 }),
        ],
      },
      T0 + 1000,
    );
    t.same(
      newDifferences(checked.rows)
        .get('check')
        ?.exit?.map((x) => x.name),
      ['ok'],
      'a variable set differently at a node shows on its exit',
    );
  },
);

t.test('the words the page says: sides, times, differences, the divergence', async (t) => {
  t.same(nodeMark('a', false), { badge: 'A', line: 'only run A', words: 'reached by only run A', className: 'cmp-a' });
  t.match(nodeMark('both', true), { line: 'paths part here', className: 'cmp-both cmp-diverged' });
  t.match(nodeMark(null, false), { badge: '', line: 'neither run' });
  t.equal(timeWords({ visits: 3, ms: 1500, open: false }), '1.5 s over 3 visits');
  t.equal(timeWords({ visits: 1, ms: 20, open: true }), '20 ms (still there)');
  t.equal(timeWords(null), 'not reached');
  t.same([deltaWords(300), deltaWords(-300), deltaWords(0), deltaWords(null)], ['+300 ms', '−300 ms', 'same', '']);
  const c = compareRuns(runOf('run-a', 'big', 500), runOf('run-b', 'small', 5), T0 + 1000);
  t.same(divergenceWords(c.divergence!), {
    a: 'Run A took “total > 100” to Big order.',
    b: 'Run B took “default” to Small order.',
  });
  t.equal(valueWords(undefined, false), 'not set');
  t.equal(valueWords('x'.repeat(200), true, 10), `"xxxxxxxx…`);
});
