import '../setup/fixtures.js'; // fixtures under the OS temp dir (see there)
import t from 'tap';
import type { ChildGroup } from '../../src/client/child-tree.js';
import { App } from '../../src/tui/app.js';
import { ExecutionView, listedChildren } from '../../src/tui/components/execution-view.js';
import type { Execution, NodeView } from '../../src/tui/types.js';
import { adminClient, startDaemon, wfxIn } from '../helpers/cli.js';
import { frameMatching, KEY, renderAt, widerThan } from '../helpers/ink.js';

const NOW = new Date('2026-11-21T10:05:00.000Z');
// Iterations of one loop start within a millisecond: their ids differ after the `-7` of uuidv7.
const id = (n: number) => `01a1fe30-edc6-7${n}17-bd1f-84feb7474dfd`;

const loop: NodeView = {
  nodeInstanceId: 'n2',
  nodeId: 'each',
  nodeName: 'each',
  nodeType: 'loopNode',
  statusCd: 1,
  startTime: NOW.toISOString(),
  endTime: null,
  childInstanceIds: [0, 1, 2, 3, 4, 5, 6].map(id),
};
const execution: Execution = {
  processInstanceId: '01a1fe30-0000-7000-8000-000000000001',
  processId: 'p',
  processName: 'Order lines',
  processVersion: '1',
  stateCd: 0,
  state: 'RUNNING',
  startTime: NOW.toISOString(),
  endTime: null,
  correlationKey: null,
  organization: 'default',
  data: {},
  output: null,
  parentInstanceId: null,
  environment: 'PRODUCTION',
  nodes: [loop],
};
const GROUP: ChildGroup = {
  nodeInstanceId: 'n2',
  nodeId: 'each',
  nodeType: 'loopNode',
  total: 7,
  shown: [
    { id: id(4), stateCd: 1, processName: 'Order lines', groups: [], unshown: 0 },
    { id: id(5), stateCd: 2, processName: 'Order lines', groups: [], unshown: 0 },
    { id: id(6), stateCd: 0, processName: 'Order lines', groups: [], unshown: 0 },
  ],
};

t.test(
  "the execution view lists a node's children under it: the head of its id (enough to tell them apart), state, flow; the rest counted",
  async (t) => {
    const ui = renderAt(
      <ExecutionView
        execution={execution}
        logs={[]}
        now={NOW}
        logRows={4}
        width={80}
        childGroups={[GROUP]}
        selectedChild={id(5)}
      />,
      80,
    );
    t.teardown(ui.unmount);
    const frame = ui.lastFrame();
    t.match(
      frame,
      new RegExp(
        [
          '^each\\s+loopNode\\s+waiting.*',
          '  ├─ … 4 more',
          '  ├─ 01a1fe30-edc6-74… ✔ completed Order lines',
          '› ├─ 01a1fe30-edc6-75… ✖ failed    Order lines',
          '  └─ 01a1fe30-edc6-76… ● running   Order lines$',
        ].join('\\n'),
        'm',
      ),
    );
    t.same(widerThan(frame, 80), [], 'fits 80 columns');
    t.same(listedChildren([GROUP]), [id(4), id(5), id(6)], 'what ↑↓ move through, in the order shown');
    t.same(listedChildren(null), []);

    const unread = renderAt(<ExecutionView execution={execution} logs={[]} now={NOW} logRows={4} width={80} />, 80);
    t.teardown(unread.unmount);
    t.match(
      unread.lastFrame(),
      /^ {2}└─ 7 child executions: 5 more, 01a1fe30-edc6-75…, 01a1fe30-edc6-76…$/m,
      'before the children are read: the summary line',
    );
  },
);

const LOOP = `processId: 4a5b6c7d-8e9f-4a0b-9c1d-2e3f4a5b6c7d
name: Three at once
nodes:
  start: { type: startEvent, next: each }
  each:
    type: loopNode
    collection: "{items}"
    parallel: true
    nodes:
      s: { type: startEvent, next: wait }
      wait: { type: inputNode, inputType: textbox, formTitle: "Item {item}?", next: e }
      e: { type: endEvent }
    next: done
  done: { type: endEvent }
`;

t.test('against a daemon: an execution lists its iterations; ↓ and enter open one, esc goes back', async (t) => {
  const cwd = t.testdir({ 'loop.yaml': LOOP });
  const info = await startDaemon(t, { cwd });
  t.equal((await wfxIn(['flow', 'publish', 'loop.yaml'], { cwd })).code, 0);
  const client = await adminClient(cwd, info.url);
  const parent = (
    await client.process.startAny({ processId: '4a5b6c7d-8e9f-4a0b-9c1d-2e3f4a5b6c7d', data: { items: [1, 2, 3] } })
  ).processInstanceId;
  const ui = renderAt(<App client={client} url={info.url} rows={30} />, 120);
  t.teardown(ui.unmount);
  await frameMatching(ui.lastFrame, /Three at once v1 \(\+3\)/);
  ui.stdin.write(KEY.enter);
  // The three iterations, each waiting at its input node, listed under the loop node.
  const opened = await frameMatching(ui.lastFrame, /└─ [0-9a-f]{8}-[0-9a-f-]{4,}… ● running\s+Three at once/);
  const heads = [...opened.matchAll(/^. [├└]─ ([0-9a-f]{8}-[0-9a-f-]{4,})… ● running\s+Three at once *$/gm)];
  t.equal(heads.length, 3, 'each iteration, running');
  t.equal(new Set(heads.map((m) => m[1])).size, 3, 'the heads of their ids differ (each can be typed to wfx)');
  t.match(opened, new RegExp(`Three at once v1 .* ${parent}`));
  t.match(opened, /› └─|› ├─/, 'the first child selected');
  const children = (await client.instances.get(parent)).nodes.find((n) => n.nodeId === 'each')!.childInstanceIds!;
  t.equal(children.length, 3);
  ui.stdin.write(KEY.down);
  await frameMatching(ui.lastFrame, new RegExp(`› ├─ ${children[1]!.slice(0, 12)}`));
  ui.stdin.write(KEY.enter);
  const child = await frameMatching(ui.lastFrame, new RegExp(`Three at once v1 .* ${children[1]}`));
  t.match(child, /wait\s+inputNode\s+waiting\s+input textbox: Item 2\?/, "the child's own view");
  ui.stdin.write(KEY.esc);
  await frameMatching(ui.lastFrame, new RegExp(`Three at once v1 .* ${parent}`));
  ui.stdin.write(KEY.esc);
  await frameMatching(ui.lastFrame, /Three at once v1 \(\+3\)/);
});
