import t from 'tap';
import { osc52, terminalCopy } from '../../src/tui/clipboard.js';
import { ExecutionsScreen } from '../../src/tui/screens/executions-screen.js';
import { TasksScreen } from '../../src/tui/screens/tasks-screen.js';
import type { ExecutionSummary } from '../../src/tui/types.js';
import { frameMatching, KEY, renderAt } from '../helpers/ink.js';
import { stubClient } from '../helpers/stub-client.js';
import { task, tasksClient } from '../helpers/tui.js';

const ID = '01a1fe30-edc6-7617-bd1f-84feb7474dfd';
const B64 = Buffer.from(ID).toString('base64');

t.test('osc52: the id in base64 between ESC ] 52 ; c ; and BEL; inside tmux wrapped, its ESCs doubled', async (t) => {
  t.equal(osc52(ID, false), `\u001b]52;c;${B64}\u0007`);
  t.equal(osc52(ID, true), `\u001bPtmux;\u001b\u001b]52;c;${B64}\u0007\u001b\\`);
  const written: string[] = [];
  terminalCopy((b) => written.push(b), {})(ID);
  terminalCopy((b) => written.push(b), { TMUX: '/tmp/tmux-1000/default,1,0' })(ID);
  t.same(written, [osc52(ID, false), osc52(ID, true)], 'wrapped for tmux when $TMUX is set');
});

const NOW = new Date('2026-11-21T10:05:00.000Z');
const ROW: ExecutionSummary = {
  processInstanceId: ID,
  processId: 'p',
  processName: 'Order approval',
  processVersion: '1',
  environment: 'PRODUCTION',
  stateCd: 0,
  state: 'RUNNING',
  errorCode: null,
  childCount: 0,
  startTime: '2026-11-21T10:00:00.000Z',
  endTime: null,
  correlationKey: null,
  parentInstanceId: null,
  waitingNodeIds: [],
};

t.test('executions: y copies the whole id of the selected row, and of the open execution, and says it', async (t) => {
  const copied: string[] = [];
  const client = stubClient(() => {
    throw new Error('not read');
  });
  const ui = renderAt(
    <ExecutionsScreen
      client={client}
      rows={23}
      now={NOW}
      active
      changes={0}
      setCapture={() => undefined}
      items={[ROW]}
      copy={(text) => copied.push(text)}
    />,
    80,
  );
  t.teardown(ui.unmount);
  t.match(ui.lastFrame(), /y\s+copy id/, 'the key bar says so');
  t.notMatch(ui.lastFrame(), new RegExp(ID), 'the row shows only the head at 80 columns');
  ui.stdin.write('y');
  await frameMatching(ui.lastFrame, new RegExp(`copied ${ID}`));
  t.same(copied, [ID]);
  ui.stdin.write(KEY.enter);
  await frameMatching(ui.lastFrame, /y\s+copy id[\s\S]*esc|esc\s+back\s+y\s+copy id/);
  ui.stdin.write('y');
  await frameMatching(ui.lastFrame, new RegExp(`copied ${ID}`));
  t.same(copied, [ID, ID], 'from the open execution too');
});

t.test('tasks: y copies the id of the execution the selected task waits in', async (t) => {
  const copied: string[] = [];
  const client = tasksClient([task()]);
  const ui = renderAt(
    <TasksScreen
      client={client}
      rows={23}
      now={NOW}
      active
      changes={0}
      setCapture={() => undefined}
      copy={(text) => copied.push(text)}
    />,
    80,
  );
  t.teardown(ui.unmount);
  await frameMatching(ui.lastFrame, /Order approval v3[\s\S]*y\s+copy id/);
  ui.stdin.write('y');
  await frameMatching(ui.lastFrame, new RegExp(`copied ${ID}`));
  t.same(copied, [ID]);
});
