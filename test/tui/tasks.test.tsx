import '../setup/fixtures.js'; // fixtures under the OS temp dir (see there)
import { render } from 'ink-testing-library';
import t from 'tap';
import { WfxError } from '../../src/shared/errors.js';
import { App } from '../../src/tui/app.js';
import { TasksScreen } from '../../src/tui/screens/tasks-screen.js';
import { adminClient, startDaemon, wfxIn } from '../helpers/cli.js';
import { TasksTable, taskColumns } from '../../src/tui/components/tasks-table.js';
import { clock } from '../../src/tui/format.js';
import { frameMatching, KEY, renderAt, until, widerThan } from '../helpers/ink.js';
import { openTask, renderTasks, task } from '../helpers/tui.js';
import { stubClient } from '../helpers/stub-client.js';

const NOW = new Date('2026-11-21T10:05:01.000Z');
const second = task({
  processInstanceId: '01a1fe31-0000-7000-8000-000000000002',
  nodeInstanceId: 'n2',
  nodeId: 'review',
  nodeName: 'Review the contract',
  nodeType: 'userTask',
  inputType: 'form',
  formTitle: 'Review contract 7',
  assignee: 'ann',
  fields: [{ name: 'ok', type: 'boolean' }],
  waitingSince: '2026-11-21T10:04:51.000Z',
});

t.test(
  'the tasks table: flow, node, input type, waiting since and for how long, the execution id; the selected one marked and its title below',
  async (t) => {
    const { lastFrame, unmount } = render(
      <TasksTable items={[task(), second]} selected={1} now={NOW} rows={10} width={100} />,
    );
    t.teardown(unmount);
    const frame = lastFrame()!;
    t.match(frame, /FLOW\s+NODE\s+INPUT\s+WAITING SINCE\s+ENV\s+ID/);
    t.match(
      frame,
      new RegExp(
        `  Order approval v3\\s+Approve\\s+textbox\\s+${clock('2026-11-21T10:04:11.000Z')} 50s\\s+PRODUCTION\\s+01a1fe30-ed…`,
      ),
    );
    t.match(
      frame,
      /› Order approval v3\s+Review the contract form\s+\S+ 10s\s+PRODUCTION\s+01a1fe31-00…/,
      'the selected row is marked (so it reads without colour)',
    );
    t.match(frame, /user task: Review contract 7 · for ann/, "the selected task's title");
    t.same(widerThan(frame, 100), [], 'fits 100 columns');
    const narrow = renderAt(<TasksTable items={[task(), second]} selected={0} now={NOW} rows={10} width={80} />, 80);
    t.teardown(narrow.unmount);
    t.same(widerThan(narrow.lastFrame(), 80), [], 'fits 80 columns');
    t.match(
      narrow.lastFrame(),
      /  01a1fe30-ed…\n/,
      'the id is cut to fit, keeping its head (what wfx takes as a prefix)',
    );
  },
);

const agentTask = task({
  processInstanceId: '01a1fe32-0000-7000-8000-000000000003',
  processName: 'Ask a supervisor',
  processVersion: '1',
  nodeInstanceId: 'n3',
  formTitle: 'Approve: refund 250 EUR',
  agent: {
    processInstanceId: '01a1fe31-0000-7000-8000-0000000000aa',
    nodeId: 'agent',
    nodeName: 'Refund agent',
    tool: 'ask_supervisor',
  },
});

t.test('the tasks table names the agent of a tool call: a column from 100 columns, the line below at 80', async (t) => {
  t.match(taskColumns(100, {}), { agent: 0, id: 12 });
  t.match(taskColumns(100, { agents: true }), { agent: 20, id: 12, env: 0 }, 'the agent before the environment');
  t.match(taskColumns(80, { agents: true }), { agent: 0, id: 12 }, 'narrow: no AGENT column, the id as without agents');
  const wide = renderAt(<TasksTable items={[task(), agentTask]} selected={1} now={NOW} rows={10} width={100} />, 100);
  t.teardown(wide.unmount);
  const frame = wide.lastFrame();
  t.match(frame, /FLOW\s+NODE\s+INPUT\s+WAITING SINCE\s+AGENT\s+ID/);
  t.match(frame, /› Ask a supervisor v1 Approve\s+textbox\s+\S+ 50s\s+Refund agent \(ask_s… 01a1fe32-00…/);
  t.match(frame, /  Order approval v3\s+Approve\s+textbox\s+\S+ 50s\s+01a1fe30-ed…/, 'no agent: an empty cell');
  t.match(frame, /input: Approve: refund 250 EUR · agent Refund agent \(ask_supervisor\)$/m);
  t.same(widerThan(frame, 100), []);

  const narrow = renderAt(<TasksTable items={[task(), agentTask]} selected={1} now={NOW} rows={10} width={80} />, 80);
  t.teardown(narrow.unmount);
  t.notMatch(narrow.lastFrame(), /AGENT/);
  t.match(
    narrow.lastFrame(),
    /input: Approve: refund 250 EUR · agent Refund agent \(ask_supervisor\)$/m,
    'the selected one names it',
  );
  t.same(widerThan(narrow.lastFrame(), 80), []);
});

t.test("answering an agent's tool task: the form says whose tool call it is", async (t) => {
  const { ui } = await openTask(agentTask);
  t.teardown(ui.unmount);
  t.match(
    ui.lastFrame(),
    /a tool call of agent Refund agent \(tool ask_supervisor\) in execution\s+01a1fe31-0000-7000-8000-0000000000aa/,
  );
});

t.test('the tasks table says when nothing waits, and while it reads', async (t) => {
  const empty = render(<TasksTable items={[]} selected={0} now={NOW} rows={5} width={80} />);
  t.teardown(empty.unmount);
  t.match(empty.lastFrame(), /no task waits for an answer/);
  const loading = render(<TasksTable items={null} selected={0} now={NOW} rows={5} width={80} />);
  t.teardown(loading.unmount);
  t.match(loading.lastFrame(), /reading the waiting tasks/);
});

t.test('the tasks screen: ↓ j ↑ k move, enter opens the selected task, esc comes back without sending', async (t) => {
  const { ui, sent, captures } = renderTasks([task(), second]);
  t.teardown(ui.unmount);
  await frameMatching(ui.lastFrame, /› Order approval v3\s+Approve/);
  t.match(ui.lastFrame(), /↑↓\s+move\s+enter\s+answer\s+c\s+claim\s+y\s+copy id\s+1-5\s+screens/);
  ui.stdin.write(KEY.down);
  await frameMatching(ui.lastFrame, /› Order approval v3\s+Review/);
  ui.stdin.write('k');
  await frameMatching(ui.lastFrame, /› Order approval v3\s+Approve/);
  ui.stdin.write('j');
  await frameMatching(ui.lastFrame, /› Order approval v3\s+Review/);
  ui.stdin.write(KEY.enter);
  const form = await frameMatching(ui.lastFrame, /Review contract 7/);
  t.match(form, /Order approval v3 · Review the contract \(user task\) · waiting since/);
  t.match(form, /execution 01a1fe31-0000-7000-8000-000000000002 · key order-42 · for ann/);
  await until(() => captures.at(-1) === true, 'capture on');
  ui.stdin.write('q'); // taken by the form (a choice field ignores it), never the shell
  ui.stdin.write(KEY.esc);
  await frameMatching(ui.lastFrame, /enter\s+answer/);
  await until(() => captures.at(-1) === false, 'capture off');
  t.same(captures, [true, false], 'the shell gets every key back');
  t.same(sent, []);
});

t.test('keys faster than paints each move the selection', async (t) => {
  const third = task({
    processInstanceId: '01a1fe32-0000-7000-8000-000000000003',
    nodeInstanceId: 'n3',
    nodeName: 'Third step',
    formTitle: 'Third?',
  });
  const { ui } = renderTasks([task(), second, third]);
  t.teardown(ui.unmount);
  await frameMatching(ui.lastFrame, /› Order approval v3\s+Approve/);
  ui.stdin.write('j');
  ui.stdin.write('j');
  await frameMatching(ui.lastFrame, /› Order approval v3\s+Third step/);
  ui.stdin.write('j'); // stays on the last
  ui.stdin.write('k');
  ui.stdin.write(KEY.up);
  await frameMatching(ui.lastFrame, /› Order approval v3\s+Approve/);
  ui.stdin.write(KEY.down);
  ui.stdin.write(KEY.enter);
  await frameMatching(ui.lastFrame, /Review contract 7/);
});

t.test('a failed read of the tasks says CODE: message, as every screen does', async (t) => {
  const client = stubClient(() => {
    throw new WfxError('FORBIDDEN', 'this key may not list tasks');
  });
  const ui = renderAt(
    <TasksScreen client={client} rows={23} now={NOW} active changes={0} setCapture={() => undefined} />,
    80,
  );
  t.teardown(ui.unmount);
  await frameMatching(ui.lastFrame, /cannot read the tasks: FORBIDDEN: this key may not list tasks/);
});

t.test('ctrl+x asks, n keeps the task, y sends CANCEL', async (t) => {
  const { ui, sent } = await openTask(task());
  t.teardown(ui.unmount);
  ui.stdin.write(KEY.ctrlX);
  await frameMatching(ui.lastFrame, /Cancel this task \(Approve of Order approval\)\? y \/ n/);
  t.match(ui.lastFrame(), /y\s+cancel the task\s+n\s+keep it/);
  ui.stdin.write('n');
  await frameMatching(ui.lastFrame, /enter\s+complete/);
  t.notMatch(ui.lastFrame(), /Cancel this task/);
  t.same(sent, [], 'n sends nothing');
  ui.stdin.write(KEY.ctrlX);
  await frameMatching(ui.lastFrame, /y \/ n/);
  ui.stdin.write('y');
  await frameMatching(ui.lastFrame, /cancelled Approve of Order approval \(01a1fe30-edc6-7617-bd1f-84feb7474dfd\)/);
  t.same(sent, [{ processInstanceId: '01a1fe30-edc6-7617-bd1f-84feb7474dfd', nodeId: 'ask', action: 'CANCEL' }]);
});

t.test(
  'the whole TUI: a lone q or 2 typed right after enter opens a form stays in the form (the shell neither quits nor switches)',
  async (t) => {
    const client = stubClient(({ method, path }) => {
      if (method === 'GET' && path.startsWith('/process/list')) return { items: [] };
      if (method === 'GET' && path.startsWith('/process/tasks')) return { items: [task()], nextCursor: null };
      throw new Error(`unexpected ${method} ${path}`);
    });
    const ui = renderAt(<App client={client} url="http://stub.invalid" rows={24} />, 100);
    t.teardown(ui.unmount);
    await frameMatching(ui.lastFrame, /executions/);
    ui.stdin.write('2');
    await frameMatching(ui.lastFrame, /› Order approval v3\s+Approve/);
    // Each key its own read, as a terminal delivers them: only the microtasks between them run.
    ui.stdin.write(KEY.enter);
    await Promise.resolve();
    ui.stdin.write('q');
    await Promise.resolve();
    ui.stdin.write('2');
    await Promise.resolve();
    ui.stdin.write('4');
    await until(
      () => ui.exited() || /Ship order 42 \(39 EUR\)\?/.test(ui.lastFrame()),
      'the form shows or the app exits',
    );
    t.notOk(ui.exited(), 'q did not quit');
    await frameMatching(ui.lastFrame, /Ship order 42/); // and let the form's key listener attach
    ui.stdin.write('ok');
    await until(() => ui.exited() || /ok▌\]/.test(ui.lastFrame()), 'typed text shows or the app exits');
    t.notOk(ui.exited(), 'still running');
    const frame = ui.lastFrame();
    t.match(
      frame,
      /Ship order 42 \(39 EUR\)\?\n\n› answer \[[q24]*ok▌\]/,
      'the form is still shown and takes the text',
    );
    t.notMatch(frame, /TRIGGER|no triggers|loading flows/, 'no other screen');
  },
);

const FLOW = `processId: 5e6f7a8b-9c0d-4e1f-8a2b-3c4d5e6f7a8b
name: Approve order
nodes:
  start: { type: startEvent, next: ask }
  ask:
    type: inputNode
    name: Approve
    formTitle: "Approve order {order.id}?"
    inputType: form
    fields:
      - { name: approve, type: boolean, required: true }
      - { name: comment, type: text }
    next: done
  done: { type: endEvent }
`;

t.test(
  'the TUI against a real daemon: screen 2 lists the waiting task, its form is answered, the execution completes',
  async (t) => {
    const cwd = t.testdir({ 'flow.yaml': FLOW });
    const info = await startDaemon(t, { cwd });
    t.equal((await wfxIn(['flow', 'publish', 'flow.yaml'], { cwd })).code, 0);
    const client = await adminClient(cwd, info.url);
    const run = await client.process.startAny({
      processId: '5e6f7a8b-9c0d-4e1f-8a2b-3c4d5e6f7a8b',
      data: { order: { id: 42 } },
    });

    const app = <App client={client} url={info.url} rows={24} />;
    const ui = render(app);
    t.teardown(() => ui.unmount());
    await frameMatching(ui.lastFrame, /· live/);
    ui.stdin.write('2');
    await frameMatching(
      ui.lastFrame,
      new RegExp(`› Approve order v1\\s+Approve\\s+form\\s+.*${run.processInstanceId.slice(0, 11)}`),
    );
    t.match(ui.lastFrame(), /input: Approve order 42\?/, 'the resolved title under the table');
    ui.stdin.write(KEY.enter);
    await frameMatching(ui.lastFrame, /Approve order 42\?\n\n› approve \*/);
    // The form's key listener is attached in an effect, which a busy machine may not have run yet
    // after frameMatching's yield (the space was lost once): a render runs React's pending
    // effects first (Ink renders in React's legacy mode, synchronously).
    ui.rerender(app);
    ui.stdin.write(' ');
    await frameMatching(ui.lastFrame, /›\(•\) yes/);
    ui.stdin.write(KEY.tab);
    ui.stdin.write('q2 ok'); // q and 2 are text here, not quit or screen 2
    await frameMatching(ui.lastFrame, /› comment \[q2 ok▌\]/);
    ui.stdin.write(KEY.ctrlS);
    await frameMatching(ui.lastFrame, new RegExp(`completed Approve of Approve order \\(${run.processInstanceId}\\)`));
    await frameMatching(ui.lastFrame, /no task waits for an answer/);
    const done = await client.instances.get(run.processInstanceId);
    t.equal(done.stateCd, 1, 'the execution completed');
    t.same(done.data.formData, { approve: true, comment: 'q2 ok' });
    ui.stdin.write('1'); // the shell has its keys back
    await frameMatching(ui.lastFrame, new RegExp(`✔ completed\\s+Approve order v1 .*${run.processInstanceId}`));
  },
);

t.test(
  'the tasks table budgets its columns: the flow and node names whole at 120, the id a head unless room is left',
  async (t) => {
    const long = task({
      processName: 'Customer onboarding review',
      processVersion: '12',
      nodeName: 'Check identity documents',
      environment: 'DEVELOPMENT',
    });
    const items = [long, second];
    for (const width of [80, 100, 120, 160]) {
      const ui = renderAt(<TasksTable items={items} selected={0} now={NOW} rows={10} width={width} />, width);
      t.teardown(ui.unmount);
      const frame = ui.lastFrame();
      t.same(widerThan(frame, width), [], `fits ${width} columns`);
      t.match(frame, /01a1fe31-00\S*\n/, `${width}: the id's head is there`);
      t.match(frame, /ENV/, `${width}: two environments listed: an ENV column`);
      if (width >= 100) t.match(frame, /› Customer onboarding review v12 /, `${width}: the flow's name whole`);
      if (width >= 120) t.match(frame, /v12 Check identity documents /, `${width}: the node's name whole`);
      if (width === 120) t.match(frame, /\bDEV(ELOPMENT)?\s.*\n.*\bPROD(UCTION)?\s/, 'each row its environment');
      if (width === 160) t.match(frame, /01a1fe31-0000-7000-8000-000000000002/, 'room to spare: the id whole');
    }
    const narrow = taskColumns(80, { environments: 2, longestFlow: 30, longestNode: 24 });
    t.equal(narrow.id, 12, 'at 80 the id keeps its head in 12 columns');
    t.equal(narrow.env, 4, 'and the environment is abbreviated');
  },
);

t.test('the tasks table counts down to a task timer, and says when it is overdue', async (t) => {
  const due = task({ dueAt: '2026-11-21T10:09:13.000Z' }); // NOW + 4m 12s
  const late = task({ nodeInstanceId: 'late', nodeName: 'Late', dueAt: '2026-11-21T10:04:49.000Z' });
  const wide = renderAt(<TasksTable items={[due, late]} selected={0} now={NOW} rows={10} width={120} />, 120);
  t.teardown(wide.unmount);
  t.match(wide.lastFrame(), /WAITING SINCE\s+DUE\s/);
  t.match(wide.lastFrame(), /› Order approval v3\s+Approve\s+textbox\s+\S+ 50s\s+in 4m 12s\s/);
  t.match(wide.lastFrame(), /Late\s+textbox\s+\S+ 50s\s+overdue 12s\s/);
  const later = renderAt(
    <TasksTable items={[due, late]} selected={0} now={new Date(NOW.getTime() + 12_000)} rows={10} width={120} />,
    120,
  );
  t.teardown(later.unmount);
  t.match(later.lastFrame(), /in 4m 00s\s[\s\S]*overdue 24s/, 'it counts with the clock');
  const narrow = renderAt(<TasksTable items={[due, late]} selected={0} now={NOW} rows={10} width={80} />, 80);
  t.teardown(narrow.unmount);
  t.notMatch(narrow.lastFrame(), /DUE/);
  t.match(narrow.lastFrame(), /input: Ship order 42 \(39 EUR\)\? · due in 4m 12s/, 'narrow: the line below says it');
});

t.test('c claims the selected task, or gives back one claimed; a refusal is said under the table', async (t) => {
  const claimed = task({
    processInstanceId: '01a1fe31-0000-7000-8000-000000000003',
    nodeInstanceId: 'n3',
    claim: { by: 'key:k_ada', name: 'Ada', at: '2026-11-21T10:04:30.000Z' },
  });
  const { ui, sent } = renderTasks([task(), claimed], {
    answer: (body) =>
      body.action === 'UNCLAIM'
        ? Promise.reject(new Error('TASK_CLAIMED: task ask of 01a1fe31 is claimed by key:k_ada'))
        : Promise.resolve({ status: 'claimed' }),
  });
  t.teardown(ui.unmount);
  await frameMatching(ui.lastFrame, /c\s+claim/);
  ui.stdin.write('c');
  await frameMatching(ui.lastFrame, /claimed Approve of 01a1fe30-edc6-7617-bd1f-84feb7474dfd/);
  t.match(sent.at(-1), { processInstanceId: '01a1fe30-edc6-7617-bd1f-84feb7474dfd', nodeId: 'ask', action: 'CLAIM' });
  ui.stdin.write(KEY.down);
  const frame = await frameMatching(ui.lastFrame, /c\s+unclaim/);
  t.match(frame, /· claimed by Ada/, 'the line under the table says who has it');
  ui.stdin.write('c');
  await frameMatching(ui.lastFrame, /not unclaimed: TASK_CLAIMED: task ask of 01a1fe31 is claimed by key:k_ada/);
  t.match(sent.at(-1), { action: 'UNCLAIM' });
});
