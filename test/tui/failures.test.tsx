import '../setup/fixtures.js'; // fixtures under the OS temp dir (see there)
import t from 'tap';
import { stateName, type FailureGroup, type InstanceSummary } from '../../src/shared/api/index.js';
import { WfxError } from '../../src/shared/errors.js';
import { App } from '../../src/tui/app.js';
import { FailuresTable } from '../../src/tui/components/failures-table.js';
import { FailuresScreen } from '../../src/tui/screens/failures-screen.js';
import { adminClient, startDaemon, wfxIn } from '../helpers/cli.js';
import { frameMatching, KEY, renderAt, widerThan } from '../helpers/ink.js';
import { stubClient } from '../helpers/stub-client.js';

const NOW = new Date('2026-11-21T10:05:00.000Z');
// Started milliseconds apart: uuidv7 ids that differ in their timestamp.
const id = (n: number) => `01a1fe30-ed${n}c-7000-8000-00000000000${n}`;

const GROUPS: FailureGroup[] = [
  {
    processId: 'po',
    processName: 'Order fulfilment',
    errorCode: 'HTTP_500',
    nodeId: 'charge',
    nodeName: 'Charge the card',
    count: 12,
    newest: {
      processInstanceId: id(3),
      processVersion: '2',
      message: `POST http://127.0.0.1:9/charge answered 500 (after 3 attempts): ${'down '.repeat(30)}`,
      at: '2026-11-21T10:02:00.000Z',
    },
  },
  {
    processId: 'pi',
    processName: 'Invoice',
    errorCode: 'SCRIPT_ERROR',
    nodeId: 'total',
    count: 1,
    newest: {
      processInstanceId: id(1),
      processVersion: '1',
      message: 'Error: no lines',
      at: '2026-11-21T09:05:00.000Z',
    },
  },
];

const failed = (n: number): InstanceSummary => ({
  processInstanceId: id(n),
  processId: 'po',
  processName: 'Order fulfilment',
  processVersion: '2',
  environment: 'PRODUCTION',
  stateCd: 2,
  state: stateName(2),
  errorCode: 'HTTP_500',
  childCount: 0,
  startTime: '2026-11-21T10:00:00.000Z',
  endTime: '2026-11-21T10:02:00.000Z',
  correlationKey: null,
  parentInstanceId: null,
  waitingNodeIds: [],
});

t.test('the failures table: count, code, node, flow and version, how long ago; the message under it', async (t) => {
  const ui = renderAt(<FailuresTable groups={GROUPS} selected={1} now={NOW} rows={10} width={80} />, 80);
  t.teardown(ui.unmount);
  const frame = ui.lastFrame();
  t.match(frame, /COUNT\s+CODE\s+NODE\s+FLOW\s+NEWEST/);
  t.match(
    frame,
    /  \s+12 HTTP_500\s+charge\s+Order fulfilment v2\s+3m ago\n\s+POST http:\/\/127\.0\.0\.1:9\/charge answered 500/,
  );
  t.match(
    frame,
    /› \s+1 SCRIPT_ERROR\s+total\s+Invoice v1\s+1h 00m ago\n\s+Error: no lines/,
    'the selected one marked',
  );
  t.same(widerThan(frame, 80), [], 'fits 80 columns');
  const none = renderAt(<FailuresTable groups={[]} selected={0} now={NOW} rows={10} width={80} />, 80);
  t.teardown(none.unmount);
  t.match(none.lastFrame(), /no failed executions/);
});

t.test('enter lists a group’s executions, enter again opens one, esc goes back each time', async (t) => {
  const client = stubClient((c) => {
    if (c.path.startsWith('/process/failures')) return { groups: GROUPS, total: 13, groupCount: 2 };
    if (c.path.startsWith('/process/instances')) return { items: [failed(3), failed(2)], nextCursor: null };
    if (c.path.startsWith('/process/instance/'))
      return {
        ...failed(3),
        data: { error: { code: 'HTTP_500', message: 'answered 500', nodeId: 'charge', attempts: 3 } },
        output: null,
        nodes: [],
      };
    throw new WfxError('NOT_FOUND', c.path);
  });
  const ui = renderAt(
    <FailuresScreen client={client} rows={23} now={NOW} active changes={0} setCapture={() => undefined} />,
    80,
  );
  t.teardown(ui.unmount);
  const groups = await frameMatching(ui.lastFrame, /✖ 13 failed executions in 2 groups/);
  t.match(groups, /› \s+12 HTTP_500/, 'the first group selected');
  t.match(client.calls[0]!.path, /^\/process\/failures\?sort=count&limit=100$/, 'the largest first');
  t.same(widerThan(groups, 80), []);

  ui.stdin.write(KEY.enter);
  const listed = await frameMatching(ui.lastFrame, /› ✖ failed\s+Order fulfilment v2/);
  t.match(listed, /HTTP_500 at charge in Order fulfilment · 12 failed/);
  const search = client.calls.find((c) => c.path.startsWith('/process/instances'))!;
  const query = new URLSearchParams(search.path.split('?')[1]);
  t.same(
    Object.fromEntries(query),
    { processId: 'po', state: 'FAILED', errorCode: 'HTTP_500', failedNode: 'charge', limit: '200' },
    'its executions: the list filtered by flow, code and node',
  );
  t.match(listed, new RegExp(`retry it: wfx instances retry ${id(3)}`));
  t.match(listed, /esc\s+back to the groups/);
  t.same(widerThan(listed, 80), []);

  ui.stdin.write(KEY.down);
  await frameMatching(ui.lastFrame, new RegExp(`retry it: wfx instances retry ${id(2)}`));
  ui.stdin.write(KEY.up);
  await frameMatching(ui.lastFrame, new RegExp(`retry it: wfx instances retry ${id(3)}`));
  ui.stdin.write(KEY.enter);
  const opened = await frameMatching(ui.lastFrame, /error HTTP_500 at charge \(3 attempts\): answered 500/);
  t.match(opened, /esc\s+back/);
  ui.stdin.write(KEY.esc);
  await frameMatching(ui.lastFrame, /› ✖ failed\s+Order fulfilment v2/);
  ui.stdin.write(KEY.esc);
  await frameMatching(ui.lastFrame, /✖ 13 failed executions in 2 groups/);
});

t.test('a credential without WORKFLOW_READ gets a clear line', async (t) => {
  const client = stubClient(() => {
    throw new WfxError('FORBIDDEN', 'this needs the WORKFLOW_READ permission');
  });
  const ui = renderAt(
    <FailuresScreen client={client} rows={23} now={NOW} active changes={0} setCapture={() => undefined} />,
    80,
  );
  t.teardown(ui.unmount);
  t.match(await frameMatching(ui.lastFrame, /FORBIDDEN/), /✖ FORBIDDEN: this credential lacks WORKFLOW_READ/);
});

const FAILING = `processId: 8e9f0a1b-2c3d-4e4f-9a5b-6c7d8e9f0a1b
name: Orders
nodes:
  start: { type: startEvent, next: route }
  route:
    type: exclusiveGateway
    branches:
      - { condition: "\${mode == 'ok'}", next: done }
  done: { type: endEvent }
`;

t.test('the failures screen against a real daemon: 5 shows the groups, a new failure counts in', async (t) => {
  const cwd = t.testdir({ 'orders.yaml': FAILING });
  const info = await startDaemon(t, { cwd });
  const run = (args: string[]) => wfxIn(args, { cwd });
  t.equal((await run(['flow', 'publish', 'orders.yaml'])).code, 0);
  const flow = '8e9f0a1b-2c3d-4e4f-9a5b-6c7d8e9f0a1b';
  for (let i = 0; i < 2; i++) t.equal((await run(['run', flow, '--set', 'mode=no', '--wait'])).code, 1, 'failed');
  const client = await adminClient(cwd, info.url);
  const ui = renderAt(<App client={client} url={info.url} rows={24} />, 80);
  t.teardown(ui.unmount);
  await frameMatching(ui.lastFrame, /· live/);
  ui.stdin.write('5');
  const first = await frameMatching(ui.lastFrame, /✖ 2 failed executions in 1 group/);
  t.match(first, /· live\s+1\s+2\s+3\s+4\s+\[5 failures\]$/m, 'at 80 columns the other tabs by number');
  t.match(first, /› \s+2 NO_BRANCH_MATCHED\s+route\s+Orders v1\s+\d+s ago/);
  t.same(widerThan(first, 80), [], 'the whole screen fits 80 columns');
  t.equal((await run(['run', flow, '--set', 'mode=no', '--wait'])).code, 1);
  await frameMatching(ui.lastFrame, /› \s+3 NO_BRANCH_MATCHED/);
  ui.stdin.write(KEY.enter);
  const listed = await frameMatching(ui.lastFrame, /(✖ failed\s+Orders v1[^]*){3}/);
  t.match(listed, /NO_BRANCH_MATCHED at route in Orders · 3 failed/);
  t.equal((listed.match(/✖ failed\s+Orders v1/g) ?? []).length, 3, 'its three executions');
});
