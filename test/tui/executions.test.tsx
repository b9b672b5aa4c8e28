import '../setup/fixtures.js'; // fixtures under the OS temp dir (see there)
import { stateName } from '../../src/shared/api/index.js';
import t from 'tap';
import { App } from '../../src/tui/app.js';
import { executionColumns, ExecutionsTable } from '../../src/tui/components/executions-table.js';
import { ExecutionsScreen, matchesSearch, nextFlowFilter } from '../../src/tui/screens/executions-screen.js';
import type { ExecutionSummary } from '../../src/tui/types.js';
import { adminClient, startDaemon, wfxIn } from '../helpers/cli.js';
import { frameMatching, KEY, renderAt, widerThan } from '../helpers/ink.js';
import { stubClient } from '../helpers/stub-client.js';

const NOW = new Date('2026-11-21T10:05:00.000Z');

const summary = (n: number, processName: string, correlationKey: string | null, stateCd = 0): ExecutionSummary => ({
  // Started milliseconds apart: uuidv7 ids that differ in their timestamp.
  processInstanceId: `01a1fe30-ed${n}c-7000-8000-00000000000${n}`,
  processId: processName === 'Invoice' ? 'pi' : 'po',
  processName,
  processVersion: '1',
  environment: 'PRODUCTION',
  stateCd,
  state: stateName(stateCd),
  errorCode: null,
  childCount: 0,
  startTime: '2026-11-21T10:00:00.000Z',
  endTime: stateCd === 0 ? null : '2026-11-21T10:01:05.000Z',
  correlationKey,
  parentInstanceId: null,
  waitingNodeIds: [],
});
const ITEMS = [
  summary(4, 'Order approval', 'order-42'),
  summary(3, 'Invoice', 'INV-2026-7'),
  summary(2, 'Order approval', 'order-43', 1),
  summary(1, 'Invoice', null, 2),
];

t.test(
  'search and flow filter, pure: substring of id or correlation key in any case; flows cycle all, each, all',
  async (t) => {
    t.ok(matchesSearch(ITEMS[0]!, 'ORDER-4'));
    t.ok(matchesSearch(ITEMS[0]!, '0004'));
    t.ok(matchesSearch(ITEMS[3]!, ''));
    t.notOk(matchesSearch(ITEMS[3]!, 'order'), 'no correlation key: only the id is searched');
    t.equal(nextFlowFilter(null, ['Invoice', 'Order approval']), 'Invoice');
    t.equal(nextFlowFilter('Invoice', ['Invoice', 'Order approval']), 'Order approval');
    t.equal(nextFlowFilter('Order approval', ['Invoice', 'Order approval']), null);
    t.equal(nextFlowFilter('Gone', ['Invoice']), 'Invoice', 'a flow no longer listed moves on');
  },
);

t.test(
  'the table shows the correlation key when some execution has one, and fits 80 columns (the id cut to its head)',
  async (t) => {
    const narrow = renderAt(<ExecutionsTable items={ITEMS} selected={0} now={NOW} rows={10} width={80} />, 80);
    t.teardown(narrow.unmount);
    const frame = narrow.lastFrame();
    t.match(frame, /STATE\s+FLOW\s+STARTED\s+TIME\s+KEY\s+ID/);
    t.match(frame, /› ● running\s+Order approval v1\s+\d\d:\d\d:\d\d\s+5m 00s\s+order-42\s+01a1fe30-ed4…/);
    t.match(frame, /  ✖ failed\s+Invoice v1 .* 1m 05s\s+01a1fe30-ed1…/, 'no key: the cell is empty');
    t.same(widerThan(frame, 80), [], 'no line wider than 80');
    t.match(executionColumns(80, true), { id: 13, key: 12 });

    const wide = renderAt(<ExecutionsTable items={ITEMS} selected={0} now={NOW} rows={10} width={120} />, 120);
    t.teardown(wide.unmount);
    t.match(
      wide.lastFrame(),
      /Order approval v1\s+.*order-42\s+PRODUCTION\s+01a1fe30-ed4c-7000-8000-000000000004/,
      'at 120 columns the whole id as well',
    );
    t.same(widerThan(wide.lastFrame(), 120), []);
    t.match(executionColumns(100, true), { flow: 28, id: 13 }, 'at 100 the flow name comes before the whole id');
    t.match(executionColumns(100, false), { flow: 25, id: 36, env: 4 });
    t.match(executionColumns(140, true), { id: 36, key: 24 }, 'wider still: the key column grows');
    t.match(
      executionColumns(160, false, false, 64),
      { flow: 64, id: 36 },
      'a long flow name whole while there is room',
    );
    t.match(executionColumns(100, false, false, 64), { flow: 30 }, 'cut only when there is none');
  },
);

t.test(
  'the executions table says where a running execution waits; at 80 columns with keys too, STARTED gives way',
  async (t) => {
    const items = [{ ...ITEMS[0]!, waitingNodeIds: ['approve'] }, ...ITEMS.slice(1)];
    const narrow = renderAt(<ExecutionsTable items={items} selected={0} now={NOW} rows={10} width={80} />, 80);
    t.teardown(narrow.unmount);
    const frame = narrow.lastFrame()!;
    t.match(frame, /STATE\s+FLOW\s+TIME\s+WAITING\s+KEY\s+ID/);
    t.notMatch(frame, /STARTED/);
    t.match(frame, /› ● running\s+Order approval v1\s+5m 00s\s+approve\s+order-42\s+01a1fe30-ed4…/);
    t.match(frame, /✖ failed\s+Invoice v1\s+1m 05s\s+01a1fe30-ed1…/, 'nothing waits: the cells are empty');
    t.same(widerThan(frame, 80), [], 'no line wider than 80');
    t.match(executionColumns(80, true, true), { started: 0, waiting: 10, key: 12, id: 13, flow: 18 });
    t.match(executionColumns(100, true, true), { started: 8, waiting: 10, key: 12, id: 13, flow: 24 });
    t.match(executionColumns(80, false, true), { started: 8, waiting: 10, key: 0 });
    const wide = renderAt(<ExecutionsTable items={items} selected={0} now={NOW} rows={10} width={100} />, 100);
    t.teardown(wide.unmount);
    t.match(wide.lastFrame(), /STATE\s+FLOW\s+STARTED\s+TIME\s+WAITING\s+KEY\s+ENV\s+ID/);
    t.same(widerThan(wide.lastFrame()!, 100), []);
  },
);

t.test(
  'the executions screen: f cycles the flow filter, / searches as it is typed, enter keeps it, esc clears it',
  async (t) => {
    const client = stubClient(() => ({}));
    const capture: boolean[] = [];
    const ui = renderAt(
      <ExecutionsScreen
        client={client}
        rows={23}
        now={NOW}
        active
        changes={0}
        setCapture={(c) => capture.push(c)}
        items={ITEMS}
      />,
      80,
    );
    t.teardown(ui.unmount);
    t.match(ui.lastFrame(), /f\s+flow: all\s+\/\s+search/);
    ui.stdin.write('f');
    let frame = await frameMatching(ui.lastFrame, /flow: Invoice/);
    t.match(frame, /INV-2026-7/);
    t.notMatch(frame, /Order approval v1/);
    ui.stdin.write('f');
    frame = await frameMatching(ui.lastFrame, /flow: Order approval/);
    t.notMatch(frame, /Invoice v1/);
    ui.stdin.write('f');
    frame = await frameMatching(ui.lastFrame, /flow: all/);
    t.match(frame, /Invoice v1[\s\S]*Order approval v1|Order approval v1[\s\S]*Invoice v1/);

    ui.stdin.write('/');
    await frameMatching(ui.lastFrame, /search \/ .*part of an id, a correlation key or a search value/);
    t.same(capture, [true], 'typing takes every key');
    ui.stdin.write('order-4');
    frame = await frameMatching(ui.lastFrame, /search \/ order-4/);
    t.match(frame, /order-42/);
    t.match(frame, /order-43/);
    t.notMatch(frame, /INV-2026-7/, 'filtered as it is typed');
    ui.stdin.write('2');
    frame = await frameMatching(ui.lastFrame, /search \/ order-42/);
    t.notMatch(frame, /order-43/);
    ui.stdin.write(KEY.backspace);
    await frameMatching(ui.lastFrame, /search \/ order-4\n/);
    ui.stdin.write('2q');
    frame = await frameMatching(ui.lastFrame, /search \/ order-42q/);
    t.match(frame, /none of the 4 executions match the filters/, 'q is text here');
    ui.stdin.write(KEY.backspace);
    ui.stdin.write(KEY.enter);
    frame = await frameMatching(ui.lastFrame, /\/\s+search: order-42/);
    t.notMatch(frame, /search \//, 'enter keeps the search and closes the field');
    t.match(frame, /› ● running\s+Order approval v1 .*order-42/);
    t.notMatch(frame, /order-43/);
    t.same(capture, [true, false]);
    t.same(widerThan(frame, 80), []);

    ui.stdin.write('s'); // the filters combine: state running
    frame = await frameMatching(ui.lastFrame, /state: running/);
    t.match(frame, /order-42/);
    ui.stdin.write('/');
    await frameMatching(ui.lastFrame, /search \/ order-42/);
    ui.stdin.write(KEY.ctrlU);
    await frameMatching(ui.lastFrame, /search \/ .*part of an id/);
    ui.stdin.write('inv');
    frame = await frameMatching(ui.lastFrame, /search \/ inv\n/);
    t.match(frame, /● running\s+Invoice v1 .*INV-2026-7/, 'any case, and combined with the state filter');
    t.notMatch(frame, /order-42|failed/);
    ui.stdin.write(KEY.esc);
    frame = await frameMatching(ui.lastFrame, /\/\s+search(?!:)/);
    t.match(frame, /order-42/, 'esc clears the search');
    t.match(frame, /INV-2026-7/);
    t.same(capture, [true, false, true, false]);
  },
);

const flowFile = (processId: string, name: string) => `processId: ${processId}
name: ${name}
nodes:
  start: { type: startEvent, next: wait }
  wait: { type: inputNode, inputType: textbox, formTitle: "Go on?", next: done }
  done: { type: endEvent }
`;

t.test('search and flow filter against a real daemon, at 80 columns', async (t) => {
  const orders = '8e9f0a1b-2c3d-4e4f-9a5b-6c7d8e9f0a1b';
  const invoices = '9f0a1b2c-3d4e-4f5a-8b6c-7d8e9f0a1b2c';
  const cwd = t.testdir({ 'orders.yaml': flowFile(orders, 'Orders'), 'invoices.yaml': flowFile(invoices, 'Invoices') });
  const info = await startDaemon(t, { cwd });
  for (const f of ['orders.yaml', 'invoices.yaml']) t.equal((await wfxIn(['flow', 'publish', f], { cwd })).code, 0);
  const client = await adminClient(cwd, info.url);
  const start = (processId: string, correlationKey: string) =>
    client.process.startAny({ processId, correlationKey, data: {} });
  const o1 = await start(orders, 'order-1001');
  const o2 = await start(orders, 'order-1002');
  const i1 = await start(invoices, 'inv-77');

  const ui = renderAt(<App client={client} url={info.url} rows={24} />, 80);
  t.teardown(ui.unmount);
  let frame = await frameMatching(ui.lastFrame, /inv-77[\s\S]*order-1001|order-1001[\s\S]*inv-77/);
  t.same(widerThan(frame, 80), [], 'the list with its key column fits 80 columns');

  ui.stdin.write('/');
  await frameMatching(ui.lastFrame, /search \//);
  // 'r-1002', not '1002': a random hex id can contain '1002' (it did, once, on CI), never an 'r'.
  ui.stdin.write('r-1002');
  frame = await frameMatching(ui.lastFrame, /search \/ r-1002/);
  t.match(frame, new RegExp(`order-1002\\s+${o2.processInstanceId.slice(0, 12)}`));
  t.notMatch(frame, /order-1001|inv-77/);
  ui.stdin.write(KEY.ctrlU);
  const idPart = i1.processInstanceId.slice(-10); // part of an id; 10 hex digits another random id shares by chance ~never
  ui.stdin.write(idPart);
  frame = await frameMatching(ui.lastFrame, new RegExp(`search / ${idPart}`));
  t.match(frame, /Invoices v1 .*inv-77/);
  t.notMatch(frame, /order-100/);
  ui.stdin.write(KEY.esc);
  await frameMatching(ui.lastFrame, /order-1001/);

  ui.stdin.write('f');
  frame = await frameMatching(ui.lastFrame, /flow: Invoices/);
  t.notMatch(frame, /order-100/);
  ui.stdin.write('f');
  frame = await frameMatching(ui.lastFrame, /flow: Orders/);
  t.match(frame, /order-1001/);
  t.notMatch(frame, /inv-77/);

  // Still live under a filter: a new Orders execution appears, a new invoice does not.
  const o3 = await start(orders, 'order-1003');
  await start(invoices, 'inv-78');
  frame = await frameMatching(ui.lastFrame, new RegExp(o3.processInstanceId.slice(0, 12)));
  t.notMatch(frame, /inv-78/);
  t.match(frame, new RegExp(o1.processInstanceId.slice(0, 12)));
  t.same(widerThan(frame, 80), []);
});

t.test("a search kept as name=value asks the daemon, past the list's 50 of a flow", async (t) => {
  const pid = 'af0a1b2c-3d4e-4f5a-8b6c-7d8e9f0a1b2d';
  const flow = `processId: ${pid}
name: Orders
search: { orderId: "{orderId}" }
nodes:
  start: { type: startEvent, next: done }
  done: { type: endEvent }
`;
  const cwd = t.testdir({ 'orders.yaml': flow });
  const info = await startDaemon(t, { cwd });
  t.equal((await wfxIn(['flow', 'publish', 'orders.yaml'], { cwd })).code, 0);
  const client = await adminClient(cwd, info.url);
  // Each run's correlation key k<i> tells the rows apart (ids started in one millisecond share their head).
  for (let i = 0; i < 60; i++)
    await client.process.startAny({
      processId: pid,
      correlationKey: `k${i}`,
      data: { orderId: `A-${String(i).padStart(4, '0')}` },
    });
  const ui = renderAt(<App client={client} url={info.url} rows={24} />, 100);
  t.teardown(ui.unmount);
  await frameMatching(ui.lastFrame, /\bk59\b/);

  // Typed, a value filters the list as it is; A-0059 is in it.
  ui.stdin.write('/');
  await frameMatching(ui.lastFrame, /search \//);
  ui.stdin.write('A-0059');
  let frame = await frameMatching(ui.lastFrame, /search \/ A-0059/);
  t.match(frame, /\bk59\b/);
  t.notMatch(frame, /\bk58\b/);
  // The oldest is past the list's 50: kept as name=value, the daemon finds it.
  ui.stdin.write(KEY.ctrlU);
  ui.stdin.write('orderId=A-0000');
  frame = await frameMatching(ui.lastFrame, /search \/ orderId=A-0000/);
  t.match(frame, /none of the 50 executions match/, 'not in the list as it is: its newest 50');
  ui.stdin.write(KEY.enter);
  frame = await frameMatching(ui.lastFrame, /\bk0\b/);
  t.match(frame, /search: orderId=A-0000 \(every run\)/, 'the key bar says the daemon answered');
  t.notMatch(frame, /\bk1\b/);
  ui.stdin.write('/');
  ui.stdin.write(KEY.ctrlU);
  ui.stdin.write('orderId=B-1');
  ui.stdin.write(KEY.enter);
  frame = await frameMatching(ui.lastFrame, /no execution has orderId=B-1/);
  t.pass('a search nothing has says so');
});

t.test(
  'the executions table names the environment: always when the list mixes them, else when there is room',
  async (t) => {
    const mixed = [{ ...ITEMS[0]!, environment: 'DEVELOPMENT' as const }, ...ITEMS.slice(1)];
    for (const width of [80, 100, 120, 160]) {
      const ui = renderAt(<ExecutionsTable items={mixed} selected={0} now={NOW} rows={10} width={width} />, width);
      t.teardown(ui.unmount);
      const frame = ui.lastFrame();
      t.same(widerThan(frame, width), [], `fits ${width} columns`);
      t.match(frame, /KEY\s+ENV\s+ID/, `${width}: an ENV column`);
      t.match(frame, /order-42\s+DEV(ELOPMENT)?\s+01a1fe30-ed4\S*\n/, `${width}: the first runs in DEVELOPMENT`);
      t.match(frame, /INV-2026-7\s+PROD(UCTION)?\s/, `${width}: the second in PRODUCTION`);
    }
    t.equal(executionColumns(80, true, false, 17, 2).env, 4, 'narrow: PROD / DEV');
    t.equal(executionColumns(140, true, false, 17, 2).env, 11, 'wide: the whole name');
    t.equal(executionColumns(80, true, false, 17, 1).env, 0, 'one environment, no room: no column');
    const one = renderAt(<ExecutionsTable items={ITEMS} selected={0} now={NOW} rows={10} width={120} />, 120);
    t.teardown(one.unmount);
    t.match(one.lastFrame(), /order-42\s+PRODUCTION\s+01a1fe30/, 'one environment and room for it: shown whole');
  },
);

t.test('a run waiting for a person says waiting, and s filters to those', async (t) => {
  const person: ExecutionSummary = {
    ...summary(4, 'Order approval', 'order-42'),
    waitingNodeIds: ['ask'],
    waits: [{ nodeId: 'ask', nodeName: 'Ask for approval', for: 'person' }],
  };
  const timer: ExecutionSummary = {
    ...summary(3, 'Invoice', 'INV-2026-7'),
    waitingNodeIds: ['nap'],
    waits: [{ nodeId: 'nap', nodeName: 'nap', for: 'timer' }],
  };
  const items = [person, timer, summary(2, 'Order approval', 'order-43', 1)];
  const ui = renderAt(
    <ExecutionsScreen
      client={stubClient(() => ({}))}
      rows={23}
      now={NOW}
      active
      changes={0}
      setCapture={() => undefined}
      items={items}
    />,
    80,
  );
  t.teardown(ui.unmount);
  const all = ui.lastFrame() ?? '';
  t.match(all, /◷ waiting\s+Order approval v1/, 'waiting for a person: not running');
  t.match(all, /● running\s+Invoice v1/, 'waiting for a timer: running');
  ui.stdin.write('s');
  await frameMatching(ui.lastFrame, /state: running/);
  ui.stdin.write('s');
  const people = await frameMatching(ui.lastFrame, /state: waiting for a person/);
  t.match(people, /Order approval v1/);
  t.notMatch(people, /Invoice v1/, 'the timer one is left out');
  t.notMatch(people, /completed/, 'and the ended one');
});
