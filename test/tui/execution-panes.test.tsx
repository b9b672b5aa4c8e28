import '../setup/fixtures.js'; // fixtures under the OS temp dir (see there)
import type { Key } from 'ink';
import t from 'tap';
import { stateName } from '../../src/shared/api/index.js';
import { ExecutionView, logNote, logTail, waitText } from '../../src/tui/components/execution-view.js';
import { prettyLines } from '../../src/tui/components/variables-view.js';
import { clock, countdown } from '../../src/tui/format.js';
import { scrollTo } from '../../src/tui/scroll.js';
import { waitingTask } from '../../src/tui/screens/execution-detail.js';
import type { Execution, LogLine, NodeView } from '../../src/tui/types.js';
import { renderAt } from '../helpers/ink.js';

const NOW = new Date('2026-11-21T10:05:00.000Z');
const key = (extra: Partial<Key> = {}) => ({ ...extra }) as Key;

const timer: NodeView = {
  nodeInstanceId: 'n1',
  nodeId: 'pause',
  nodeName: 'Pause',
  nodeType: 'timerEvent',
  statusCd: 1,
  startTime: '2026-11-21T10:00:00.000Z',
  endTime: null,
  wait: { kind: 'timer', dueAt: '2026-11-21T10:09:12.000Z' },
};
const ask: NodeView = {
  nodeInstanceId: 'n2',
  nodeId: 'ask',
  nodeName: 'Ask',
  nodeType: 'inputNode',
  statusCd: 1,
  startTime: '2026-11-21T10:00:00.000Z',
  endTime: null,
  wait: {
    kind: 'input',
    inputType: 'textbox',
    formTitle: 'Ship order 42?',
    options: null,
    fields: null,
    assignee: null,
    dueAt: '2026-11-21T10:04:57.000Z',
  },
};
const execution = (nodes: NodeView[]): Execution => ({
  processInstanceId: '01a1fe30-0000-7000-8000-000000000001',
  processId: 'p',
  processName: 'Order approval',
  processVersion: '2',
  stateCd: 0,
  state: stateName(0),
  startTime: '2026-11-21T10:00:00.000Z',
  endTime: null,
  correlationKey: null,
  organization: 'default',
  environment: 'DEVELOPMENT',
  data: { order: { id: 42, lines: [1, 2] } },
  output: null,
  parentInstanceId: null,
  nodes,
});
const lines = (n: number): LogLine[] =>
  Array.from({ length: n }, (_, i) => ({
    id: i + 1,
    nodeId: 'ask',
    nodeName: 'Ask',
    level: 'INFO' as const,
    message: `line ${i + 1}`,
    timestamp: NOW.toISOString(),
  }));

t.test('countdowns: the time left to a timer ticks with now, and past it says overdue', async (t) => {
  t.equal(countdown('2026-11-21T10:09:12.000Z', NOW), 'in 4m 12s');
  t.equal(countdown('2026-11-21T10:09:12.000Z', new Date(NOW.getTime() + 1000)), 'in 4m 11s');
  t.equal(countdown('2026-11-21T10:04:57.000Z', NOW), 'overdue 3s');
  t.equal(waitText(timer, NOW), `timer until ${clock('2026-11-21T10:09:12.000Z')} · in 4m 12s`);
  t.equal(waitText(ask, NOW), 'input textbox: Ship order 42? · due overdue 3s');
  t.equal(waitText({ ...ask, statusCd: 2 }, NOW), '', 'a node that no longer waits has no countdown');
  t.equal(
    waitText({ ...ask, statusCd: 2, answeredBy: 'key:0123456789abcdef', answeredAt: '2026-11-21T10:06:00.000Z' }, NOW),
    `answered by key:0123456789abcdef at ${clock('2026-11-21T10:06:00.000Z')}`,
    'an answered task names who answered it',
  );
  const ui = renderAt(
    <ExecutionView execution={execution([timer])} logs={[]} now={NOW} logRows={3} width={100} />,
    100,
  );
  t.teardown(ui.unmount);
  t.match(ui.lastFrame(), /Pause\s+timerEvent\s+waiting\s+timer until \S+ · in 4m 12s/);
});

t.test('the log scrolls: held where it was as lines arrive, saying how many are below; G follows again', async (t) => {
  t.same(
    logTail(lines(10), 3, null).map((l) => l.id),
    [8, 9, 10],
    'following: the tail',
  );
  t.same(
    logTail(lines(10), 3, 5).map((l) => l.id),
    [3, 4, 5],
    'scrolled up: the lines up to the 5th',
  );
  t.same(
    logTail(lines(14), 3, 5).map((l) => l.id),
    [3, 4, 5],
    'new lines do not move it',
  );
  t.equal(logNote(14, 5), ' · scrolled up: 9 newer lines below (G follows)');
  t.equal(logNote(14, null), '');
  t.equal(scrollTo(4, 7, 3, 'k', key()), 3);
  t.equal(scrollTo(4, 7, 3, '', key({ downArrow: true })), 5);
  t.equal(scrollTo(4, 7, 3, '', key({ pageUp: true })), 1);
  t.equal(scrollTo(4, 7, 3, '', key({ pageDown: true })), 7, 'kept within the text');
  t.equal(scrollTo(4, 7, 3, 'g', key()), 0);
  t.equal(scrollTo(4, 7, 3, 'G', key()), 7);
  t.equal(scrollTo(4, 7, 3, 'x', key()), null, 'not a scroll key');
  const ui = renderAt(
    <ExecutionView
      execution={execution([])}
      logs={lines(14)}
      now={NOW}
      logRows={3}
      width={100}
      logEnd={5}
      logFocused
    />,
    100,
  );
  t.teardown(ui.unmount);
  const frame = ui.lastFrame();
  t.match(frame, /› log · scrolled up: 9 newer lines below \(G follows\)\n.*line 3\n.*line 4\n.*line 5\b/);
  t.notMatch(frame, /line (6|14)\b/);
});

t.test('the variables whole, indented; the task an execution waits on, for the answer form', async (t) => {
  t.same(prettyLines({ order: { id: 42 } }), ['{', '  "order": {', '    "id": 42', '  }', '}']);
  t.match(waitingTask(execution([timer, ask])), {
    processInstanceId: '01a1fe30-0000-7000-8000-000000000001',
    nodeId: 'ask',
    nodeType: 'inputNode',
    inputType: 'textbox',
    formTitle: 'Ship order 42?',
    environment: 'DEVELOPMENT',
    waitingSince: '2026-11-21T10:00:00.000Z',
  });
  t.equal(waitingTask(execution([timer])), null, 'no input waits: nothing to answer');
});
