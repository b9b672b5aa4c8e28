import { stateName } from '../../src/shared/api/index.js';
import { render } from 'ink-testing-library';
import t from 'tap';
import { ConnectionError, ConnectionLine } from '../../src/tui/components/connection-line.js';
import { ExecutionView } from '../../src/tui/components/execution-view.js';
import { ExecutionsTable } from '../../src/tui/components/executions-table.js';
import { Help } from '../../src/tui/components/help.js';
import { KeyBar } from '../../src/tui/components/key-bar.js';
import { renderAt, widerThan } from '../helpers/ink.js';
import type { Execution, ExecutionSummary } from '../../src/tui/types.js';

const NOW = new Date('2026-11-21T10:05:00.000Z');
const summary = (n: number, stateCd: number, extra: Partial<ExecutionSummary> = {}): ExecutionSummary => ({
  processInstanceId: `01a1fe30-0000-7000-8000-00000000000${n}`,
  processId: 'p',
  processName: 'Order approval',
  processVersion: '2',
  environment: 'PRODUCTION',
  stateCd,
  state: stateName(stateCd),
  errorCode: null,
  childCount: 0,
  startTime: '2026-11-21T10:00:00.000Z',
  endTime: stateCd === 0 ? null : '2026-11-21T10:01:05.000Z',
  correlationKey: null,
  parentInstanceId: null,
  waitingNodeIds: [],
  ...extra,
});

t.test(
  'the executions table: state in words with a symbol, flow and version, duration, the selected row marked',
  async (t) => {
    const items = [summary(1, 0), summary(2, 1), summary(3, 2), summary(4, 3)];
    const { lastFrame, unmount } = render(<ExecutionsTable items={items} selected={1} now={NOW} rows={10} />);
    const frame = lastFrame()!;
    t.teardown(unmount);
    t.match(frame, /STATE\s+FLOW\s+STARTED\s+TIME\s+ENV\s+ID/);
    t.match(
      frame,
      /● running\s+Order approval v2 .* 5m 00s\s+PROD\s+01a1fe30-0000-7000-8000-000000000001/,
      'a running one counts to now',
    );
    t.match(
      frame,
      /› ✔ completed\s+Order approval v2 .* 1m 05s/,
      'the selected row is marked, and reads without colour',
    );
    t.match(frame, /✖ failed/);
    t.match(frame, /◌ cancelled/);
    for (const line of frame.split('\n')) t.ok(line.length <= 120, 'fits a wide terminal line');
  },
);

t.test('the executions table scrolls to keep the selection in view, and says when there is nothing', async (t) => {
  const items = Array.from({ length: 30 }, (_, i) =>
    summary(i, 1, { processInstanceId: `id-${String(i).padStart(2, '0')}` }),
  );
  const { lastFrame, unmount } = render(<ExecutionsTable items={items} selected={25} now={NOW} rows={5} />);
  t.teardown(unmount);
  t.match(lastFrame(), /› .*id-25/);
  t.notMatch(lastFrame(), /id-00/);
  const empty = render(<ExecutionsTable items={[]} selected={0} now={NOW} rows={5} />);
  t.teardown(empty.unmount);
  t.match(empty.lastFrame(), /no executions/);
});

t.test(
  'one execution: nodes with their status in words, what a waiting node waits for, variables, the error, the log tail',
  async (t) => {
    const execution: Execution = {
      ...summary(1, 2),
      correlationKey: 'order-42',
      organization: 'default',
      environment: 'PRODUCTION',
      data: {
        order: { id: 42 },
        error: { code: 'HTTP_503', message: 'POST /orders answered 503', nodeId: 'notify', attempts: 3 },
      },
      output: null,
      nodes: [
        {
          nodeInstanceId: 'n1',
          nodeId: 'start',
          nodeName: 'start',
          nodeType: 'startEvent',
          statusCd: 2,
          startTime: NOW.toISOString(),
          endTime: NOW.toISOString(),
        },
        {
          nodeInstanceId: 'n2',
          nodeId: 'ask',
          nodeName: 'Ask',
          nodeType: 'inputNode',
          statusCd: 1,
          startTime: NOW.toISOString(),
          endTime: null,
          wait: {
            kind: 'input',
            inputType: 'form',
            formTitle: 'Approve order 42?',
            options: null,
            fields: null,
            assignee: null,
            dueAt: null,
          },
        },
        {
          nodeInstanceId: 'n3',
          nodeId: 'notify',
          nodeName: 'notify',
          nodeType: 'serviceTask',
          statusCd: 3,
          startTime: NOW.toISOString(),
          endTime: NOW.toISOString(),
        },
      ],
    };
    const logs = Array.from({ length: 8 }, (_, i) => ({
      id: i + 1,
      nodeId: 'notify',
      nodeName: 'notify',
      level: i === 7 ? ('ERROR' as const) : ('INFO' as const),
      message: `line ${i + 1}`,
      timestamp: NOW.toISOString(),
    }));
    const { lastFrame, unmount } = render(
      <ExecutionView execution={execution} logs={logs} now={NOW} logRows={3} width={100} />,
    );
    t.teardown(unmount);
    const frame = lastFrame()!;
    t.match(frame, /Order approval v2 · ✖ failed/);
    t.match(frame, /correlation key order-42/);
    t.match(frame, /Ask\s+inputNode\s+waiting\s+input form: Approve order 42\?/);
    t.match(frame, /notify\s+serviceTask\s+failed/);
    t.match(frame, /error HTTP_503 at notify \(3 attempts\): POST \/orders answered 503/);
    t.match(frame, /variables \{"order":\{"id":42\}\}/, 'the error is not repeated among the variables');
    t.match(frame, /line 8/);
    t.notMatch(frame, /line 5/, 'only the tail of the log');
  },
);

t.test('the key bar, the help, and the connection line (which says when the daemon is away)', async (t) => {
  const bar = render(
    <KeyBar
      keys={[
        ['q', 'quit'],
        ['?', 'help'],
      ]}
    />,
  );
  t.teardown(bar.unmount);
  t.match(bar.lastFrame(), /q\s+quit\s+\?\s+help/);
  const help = render(<Help />);
  t.teardown(help.unmount);
  t.match(help.lastFrame(), /enter\s+open the execution/);
  t.match(help.lastFrame(), /c  p\s+cancel the execution \(asks first\); p: pause\/resume a schedule/);
  t.match(help.lastFrame(), /v\s+an open execution: its variables whole/, 'the keys of an open execution');
  t.match(help.lastFrame(), /pgup pgdn\s+an open execution: scroll its log/);
  t.match(help.lastFrame(), /an open one: answer its task/);
  t.ok(help.lastFrame()!.split('\n').length <= 23, 'fits a 24-row terminal under the top line');
  t.match(help.lastFrame(), /y\s+copy the whole id/, 'the keys of both halves: y');
  t.match(help.lastFrame(), /:\s+command: exec, tasks/, 'the command line');
  t.match(help.lastFrame(), /← → h l: along a choice/, '← → in a task');
  const narrowHelp = renderAt(<Help />, 80);
  t.teardown(narrowHelp.unmount);
  t.same(widerThan(narrowHelp.lastFrame(), 80), [], 'no line wider than 80');
  t.ok(narrowHelp.lastFrame().split('\n').length <= 23, 'at 80 columns no line wraps: still 23 rows at most');
  const away = render(
    <ConnectionLine url="http://127.0.0.1:7878" connection={{ state: 'reconnecting', error: 'connection refused' }} />,
  );
  t.teardown(away.unmount);
  t.match(away.lastFrame(), /127\.0\.0\.1:7878 · unreachable/);
  const why = render(<ConnectionError connection={{ state: 'reconnecting', error: 'connection refused' }} />);
  t.teardown(why.unmount);
  t.equal(why.lastFrame(), 'connection refused · reconnecting…', 'why, on its own line');
  const live = render(<ConnectionLine url="http://127.0.0.1:7878" connection={{ state: 'live' }} />);
  t.teardown(live.unmount);
  t.match(live.lastFrame(), /127\.0\.0\.1:7878 · live/);
});
