import '../setup/fixtures.js'; // fixtures under the OS temp dir (see there)
import { setImmediate as yieldToReact } from 'node:timers/promises';
import t from 'tap';
import { WfxError } from '../../src/shared/errors.js';
import { App } from '../../src/tui/app.js';
import { FlowView } from '../../src/tui/components/flow-view.js';
import { FlowsTable } from '../../src/tui/components/flows-table.js';
import { dataTemplate, inputRows } from '../../src/tui/components/run-form.js';
import type { FlowSummary } from '../../src/tui/hooks/use-flows.js';
import { FlowsScreen } from '../../src/tui/screens/flows-screen.js';
import { adminClient, startDaemon, wfxIn } from '../helpers/cli.js';
import { frameMatching, KEY, renderAt, until, widerThan } from '../helpers/ink.js';
import { stubClient } from '../helpers/stub-client.js';

const ORDER_ID = '3f4a5b6c-7d8e-4f9a-8b1c-2d3e4f5a6b7c';
const order = (label: string) => `processId: ${ORDER_ID}
name: Order intake
nodes:
  start: { type: startEvent, next: ask }
  ask: { type: inputNode, inputType: textbox, formTitle: "${label} {orderId}?", next: done }
  done: { type: endEvent }
`;
const DRAFT = `processId: 4a5b6c7d-8e9f-4a1b-9c2d-3e4f5a6b7c8d
name: Draft refunds
nodes:
  start: { type: startEvent, next: done }
  done: { type: endEvent }
`;

const flow = (extra: Partial<FlowSummary> = {}): FlowSummary => ({
  processId: '0b7c6a3e-2f0e-4a57-9a43-3d4f1c9e8b11',
  name: 'Order approval',
  triggers: [],
  organization: 'default',
  public: false,
  active: { PRODUCTION: '2', DEVELOPMENT: '3' },
  versions: [
    { version: '1', publishedAt: '2026-11-19T08:00:00.000Z' },
    { version: '2', publishedAt: '2026-11-20T09:00:00.000Z' },
    { version: '3', publishedAt: '2026-11-21T10:04:10.000Z' },
  ],
  ...extra,
});

t.test('the flows table: latest version and the active one per environment, at 80 columns and wider', async (t) => {
  const flows = [
    flow(),
    flow({
      processId: '1c8d7b4f-3a1f-4b68-8b54-4e5f2a0d9c22',
      name: 'Wait for payment',
      active: { DEVELOPMENT: '1' },
      versions: [{ version: '1', publishedAt: '2026-11-21T10:00:00.000Z' }],
    }),
  ];
  const narrow = renderAt(
    <FlowsTable flows={flows} environments={['PRODUCTION', 'DEVELOPMENT']} selected={1} rows={10} width={80} />,
    80,
  );
  t.teardown(narrow.unmount);
  const frame = narrow.lastFrame();
  t.match(frame, /FLOW\s+PROCESS ID\s+LATEST\s+PRODUCTION\s+DEVELOPMENT/);
  t.match(
    frame,
    /  Order approval\s+0b7c6a3e…\s+v3\s+v2\s+v3/,
    'at 80 columns the processId is cut to its first 8 characters',
  );
  t.match(
    frame,
    /› Wait for payment\s+1c8d7b4f…\s+v1\s+-\s+v1/,
    'no active version is a dash; the selected row is marked',
  );
  t.same(widerThan(frame, 80), [], 'no line wider than 80');

  const wide = renderAt(
    <FlowsTable flows={flows} environments={['PRODUCTION', 'DEVELOPMENT']} selected={0} rows={10} width={100} />,
    100,
  );
  t.teardown(wide.unmount);
  t.match(
    wide.lastFrame(),
    /› Order approval\s+0b7c6a3e-2f0e-4a57-9a43-3d4f1c9e8b11\s+v3\s+v2\s+v3/,
    'wider: the whole processId',
  );
  t.same(widerThan(wide.lastFrame(), 100), []);
  t.notMatch(wide.lastFrame(), /TRIGGERS/, 'at 100 columns the whole processId comes before the triggers');

  const wider = renderAt(
    <FlowsTable
      flows={[flow({ triggers: ['on-demand', 'webhook', 'schedule'] }), flows[1]!]}
      environments={['PRODUCTION', 'DEVELOPMENT']}
      selected={0}
      rows={10}
      width={120}
    />,
    120,
  );
  t.teardown(wider.unmount);
  t.match(wider.lastFrame(), /FLOW\s+PROCESS ID\s+TRIGGERS\s+LATEST/);
  t.match(
    wider.lastFrame(),
    /› Order approval\s+0b7c6a3e-2f0e-4a57-9a43-3d4f1c9e8b11 on-demand,webhook… +v3/,
    'at 120 columns each flow says what starts it, cut to its column',
  );
  t.match(wider.lastFrame(), /  Wait for payment\s+1c8d7b4f-\S+\s+-\s+v1/, 'a flow without triggers: a dash');
  t.same(widerThan(wider.lastFrame(), 120), []);

  const none = renderAt(
    <FlowsTable flows={[]} environments={['PRODUCTION', 'DEVELOPMENT']} selected={0} rows={10} width={80} />,
    80,
  );
  t.teardown(none.unmount);
  t.match(none.lastFrame(), /no flows: publish one with wfx flow publish FILE/);
});

t.test('one flow: its versions newest first, when each was published, where each is active', async (t) => {
  const view = renderAt(<FlowView flow={flow()} environments={['PRODUCTION', 'DEVELOPMENT']} rows={2} />, 80);
  t.teardown(view.unmount);
  const frame = view.lastFrame();
  t.match(frame, /Order approval · 0b7c6a3e-2f0e-4a57-9a43-3d4f1c9e8b11/);
  t.match(frame, /organization default · not public · 3 versions/);
  t.match(frame, /VERSION\s+PUBLISHED\s+ACTIVE IN/);
  t.match(
    frame,
    /● v3\s+2026-11-2\d \d\d:\d\d:10\s+DEVELOPMENT\n/,
    'newest first, active where it is (marked without colour too)',
  );
  t.match(frame, /● v2\s+.*PRODUCTION\n/);
  t.match(frame, /… 1 older/, 'versions beyond the rows are counted');
  t.notMatch(frame, /v1 /);
  t.same(widerThan(frame, 80), []);
});

t.test(
  'a start that answers after its form was closed with esc neither closes nor writes into the form open now',
  async (t) => {
    const pending: Array<{ resolve: (v: unknown) => void; reject: (e: unknown) => void }> = [];
    const client = stubClient(({ method, path }) => {
      if (path === '/admin/flows') return { items: [flow()] };
      if (path === '/auth/whoami') return { system: false };
      if (method === 'POST' && path.startsWith('/process/exec'))
        return new Promise((resolve, reject) => pending.push({ resolve, reject }));
      throw new Error(`unexpected ${method} ${path}`);
    });
    const ui = renderAt(
      <FlowsScreen client={client} rows={23} now={new Date()} active changes={0} setCapture={() => undefined} />,
      80,
    );
    t.teardown(ui.unmount);
    const openForm = async () => {
      ui.stdin.write('r');
      await frameMatching(ui.lastFrame, /start a run of Order approval/);
    };
    const closeForm = async () => {
      ui.stdin.write(KEY.esc);
      await frameMatching(ui.lastFrame, /› Order approval(?![\s\S]*start a run)/);
    };
    const send = async (data: string, n: number) => {
      ui.stdin.write(data);
      ui.stdin.write(KEY.enter);
      await until(() => pending.length === n, `start ${data} is sent`);
    };
    await frameMatching(ui.lastFrame, /› Order approval/);
    await openForm();
    await send('{"n": 1}', 1);
    await closeForm();
    await openForm();
    pending[0]!.resolve({ processInstanceId: 'late-1' });
    await yieldToReact(); // the late success has run its course
    ui.stdin.write('{"n": 2}');
    const frame = await frameMatching(ui.lastFrame, /\{"n": 2\}/);
    t.match(frame, /start a run of Order approval/, 'the late success did not close the new form');
    t.notMatch(frame, /late-1/);

    await send('', 2); // the second form's start hangs too: esc, a third form, its start sent
    await closeForm();
    await openForm();
    await send('{"n": 3}', 3);
    pending[1]!.reject(new WfxError('PROCESS_NOT_PUBLISHED', 'late failure'));
    await yieldToReact(); // the rejection has run its course
    t.notMatch(ui.lastFrame(), /late failure/, 'the late failure is not written into the busy third form');
    pending[2]!.resolve({ processInstanceId: 'third-3' });
    await frameMatching(ui.lastFrame, /✔ started third-3/);
    t.same(
      client.calls.filter((c) => c.method === 'POST').map((c) => c.body),
      [1, 2, 3].map((n) => ({ processId: flow().processId, data: { n } })),
    );
    // The notice stays until the operator presses a key, then goes.
    await yieldToReact();
    t.match(ui.lastFrame(), /✔ started third-3/);
    ui.stdin.write(KEY.down);
    await frameMatching(ui.lastFrame, /^(?![\s\S]*started third-3)/);
  },
);

t.test(
  'the run form checks the data is a JSON object before asking the daemon, and shows the API error as CODE: message',
  async (t) => {
    const client = stubClient(({ method, path }) => {
      if (path === '/admin/flows') return { items: [flow()] };
      if (path === '/auth/whoami') return { system: false };
      if (method === 'POST' && path.startsWith('/process/exec'))
        throw new WfxError(
          'PROCESS_NOT_PUBLISHED',
          'flow 0b7c6a3e-2f0e-4a57-9a43-3d4f1c9e8b11 has no active version in PRODUCTION',
        );
      throw new Error(`unexpected ${method} ${path}`);
    });
    let capture = false;
    const ui = renderAt(
      <FlowsScreen client={client} rows={23} now={new Date()} active changes={0} setCapture={(c) => (capture = c)} />,
      80,
    );
    t.teardown(ui.unmount);
    await frameMatching(ui.lastFrame, /› Order approval/);
    ui.stdin.write('r');
    await frameMatching(
      ui.lastFrame,
      /start a run of Order approval[\s\S]*environment PRODUCTION \(active v2\)[\s\S]*data\s+a JSON object, e\.g\./,
    ); // empty: the placeholder
    t.equal(capture, true, 'the form takes every key while open');
    ui.stdin.write(KEY.ctrlU);
    ui.stdin.write('{orderId: 42');
    ui.stdin.write(KEY.enter);
    await frameMatching(ui.lastFrame, /✖ data is not valid JSON: /);
    ui.stdin.write(KEY.ctrlU);
    ui.stdin.write('[1, 2]');
    ui.stdin.write(KEY.enter);
    await frameMatching(ui.lastFrame, /✖ data must be a JSON object, not an array/);
    t.notOk(
      client.calls.some((c) => c.method === 'POST'),
      'nothing was sent for data that is not an object',
    );
    ui.stdin.write(KEY.ctrlU);
    ui.stdin.write('{"orderId": 42}');
    ui.stdin.write(KEY.enter);
    const refused = await frameMatching(
      ui.lastFrame,
      /✖ PROCESS_NOT_PUBLISHED: flow 0b7c6a3e\S* has no\s+active\s+version\s+in\s+PRODUCTION/,
    );
    t.notMatch(refused, /at .*\.js:\d+/, 'no stack');
    t.match(
      client.calls.find((c) => c.method === 'POST'),
      {
        path: '/process/exec?environment=PRODUCTION',
        body: { processId: '0b7c6a3e-2f0e-4a57-9a43-3d4f1c9e8b11', data: { orderId: 42 } },
      },
      'an organization key starts through /process/exec',
    );
    ui.stdin.write(KEY.down);
    await frameMatching(ui.lastFrame, /version\s+v3/);
    ui.stdin.write(KEY.esc);
    const closed = await frameMatching(ui.lastFrame, /› Order approval(?![\s\S]*start a run)/);
    t.notMatch(closed, /start a run/, 'esc cancels the form');
    t.equal(capture, false, 'and gives the keys back');
    t.same(widerThan(closed, 80), []);
  },
);

t.test(
  'the flows screen against a real daemon: versions per environment, and a run started with typed data',
  async (t) => {
    const cwd = t.testdir({
      'order-v1.yaml': order('Take order'),
      'order-v2.yaml': order('Accept order'),
      'draft.yaml': DRAFT,
    });
    const info = await startDaemon(t, { cwd });
    t.equal((await wfxIn(['flow', 'publish', 'order-v1.yaml'], { cwd })).code, 0);
    t.equal((await wfxIn(['flow', 'publish', 'order-v2.yaml', '--env', 'DEVELOPMENT'], { cwd })).code, 0);
    t.equal((await wfxIn(['flow', 'publish', 'draft.yaml', '--env', 'DEVELOPMENT'], { cwd })).code, 0);
    const client = await adminClient(cwd, info.url);

    const ui = renderAt(<App client={client} url={info.url} rows={24} />, 80);
    t.teardown(ui.unmount);
    await frameMatching(ui.lastFrame, /· live/);
    ui.stdin.write('3');
    const list = await frameMatching(ui.lastFrame, /Order intake/);
    t.match(list, /› Draft refunds\s+4a5b6c7d…\s+v1\s+-\s+v1/, 'sorted by name; not active in PRODUCTION');
    t.match(list, /  Order intake\s+3f4a5b6c…\s+v2\s+v1\s+v2/, 'v1 runs in PRODUCTION, v2 in DEVELOPMENT');
    t.same(widerThan(list, 80), [], 'the whole screen fits 80 columns');

    ui.stdin.write('j');
    await frameMatching(ui.lastFrame, /› Order intake/);
    ui.stdin.write(KEY.enter);
    const versions = await frameMatching(ui.lastFrame, /Order intake · 3f4a5b6c-7d8e-4f9a-8b1c-2d3e4f5a6b7c/);
    t.match(versions, /● v2\s+\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\s+DEVELOPMENT/);
    t.match(versions, /● v1\s+\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\s+PRODUCTION/);

    // r from the open flow: typed data with q, ? and digits in it (the form has the keys, not the shell).
    ui.stdin.write('r');
    await frameMatching(ui.lastFrame, /start a run of Order intake/);
    ui.stdin.write(KEY.ctrlU);
    ui.stdin.write('{"orderId": 7, "note": "q? 1-4"}');
    ui.stdin.write(KEY.tab);
    await frameMatching(ui.lastFrame, /environment DEVELOPMENT \(active v2\)/);
    t.match(ui.lastFrame(), /data\s+\{"orderId": 7, "note": "q\? 1-4"\}/);
    ui.stdin.write(KEY.enter);
    const started = await frameMatching(ui.lastFrame, /✔ started \S+ · Order intake · DEVELOPMENT/);
    const id = /✔ started (\S+)/.exec(started)![1]!;
    const instance = await client.instances.get(id);
    t.match(
      instance,
      { processVersion: '2', environment: 'DEVELOPMENT', data: { orderId: 7, note: 'q? 1-4' } },
      'the daemon has it, with the typed data',
    );

    // A version chosen explicitly, in PRODUCTION.
    ui.stdin.write('r');
    const form = await frameMatching(ui.lastFrame, /start a run of Order intake[\s\S]*environment PRODUCTION/);
    t.match(form, /tab\s+environment\s+← →\s+version/, 'the key bar says which keys move the version');
    ui.stdin.write(KEY.right); // active -> v2, along the line
    await frameMatching(ui.lastFrame, /version\s+v2/);
    ui.stdin.write(KEY.enter); // nothing typed: no data
    const second = await frameMatching(ui.lastFrame, /✔ started \S+ · Order intake · PRODUCTION v2/);
    const id2 = /✔ started (\S+)/.exec(second)![1]!;
    t.match(await client.instances.get(id2), { processVersion: '2', environment: 'PRODUCTION' });

    // The daemon's refusal, in words: Draft refunds has no PRODUCTION version.
    ui.stdin.write(KEY.esc);
    await frameMatching(ui.lastFrame, /› Order intake/);
    ui.stdin.write('k');
    await frameMatching(ui.lastFrame, /› Draft refunds/);
    ui.stdin.write('r');
    await frameMatching(ui.lastFrame, /environment PRODUCTION \(no active version: pick one with ← →\)/);
    ui.stdin.write(KEY.enter);
    const refused = await frameMatching(ui.lastFrame, /✖ PROCESS_NOT_PUBLISHED: /);
    t.same(widerThan(refused, 80), []);
    ui.stdin.write(KEY.esc);
    await frameMatching(ui.lastFrame, /› Draft refunds(?![\s\S]*start a run)/);
    ui.stdin.write('1');
    await frameMatching(ui.lastFrame, new RegExp(`Order intake v2 .*${id2.slice(0, 12)}`));
  },
);

const INPUTS = {
  type: 'object',
  required: ['orderId', 'amount'],
  properties: {
    orderId: { type: 'string', description: 'the order to refund' },
    amount: { type: 'number' },
    verbose: { type: 'boolean', default: false },
    priority: { enum: ['low', 'high'] },
  },
};

t.test('the run form: placeholder from the required inputs; rows for the inputs', async (t) => {
  const fields = [
    { name: 'orderId', type: 'string', required: true },
    { name: 'count', type: 'integer|null', required: true },
    { name: 'tags', type: 'array', required: true },
    { name: 'priority', type: 'any', required: true, enum: ['low', 'high'] },
    { name: 'verbose', type: 'boolean', required: true, default: true },
    { name: 'note', type: 'string', required: false },
  ];
  t.equal(dataTemplate(fields), '{"orderId": "", "count": 0, "tags": [], "priority": "low", "verbose": true}');
  t.equal(dataTemplate([{ name: 'note', type: 'string', required: false }]), null, 'nothing required');
  t.equal(inputRows(null), 0);
  t.equal(inputRows('any'), 1);
  t.equal(inputRows([]), 1);
  t.equal(inputRows(fields), 5, 'at most five rows, the last counting the rest');
});

t.test(
  "the run form lists the chosen version's inputs under the data line, and its placeholder names the required ones",
  async (t) => {
    const withInputs = flow({
      versions: [
        { version: '1', publishedAt: '2026-11-19T08:00:00.000Z' },
        { version: '2', publishedAt: '2026-11-20T09:00:00.000Z' },
        { version: '3', publishedAt: '2026-11-21T10:04:10.000Z', inputs: INPUTS },
      ],
    });
    const client = stubClient(({ method, path }) => {
      if (path === '/admin/flows') return { items: [withInputs] };
      throw new Error(`unexpected ${method} ${path}`);
    });
    const ui = renderAt(
      <FlowsScreen client={client} rows={23} now={new Date()} active changes={0} setCapture={() => undefined} />,
      80,
    );
    t.teardown(ui.unmount);
    await frameMatching(ui.lastFrame, /› Order approval/);
    ui.stdin.write('r');
    const v2 = await frameMatching(ui.lastFrame, /environment PRODUCTION \(active v2\)/);
    t.match(v2, /data\s+▌?\s*a JSON object, e\.g\. \{"orderId": 42\}/, 'no inputs: the usual placeholder');
    t.match(v2, /^inputs\s+any JSON object \(this version declares no inputs\)$/m);

    ui.stdin.write(KEY.tab);
    const v3 = await frameMatching(ui.lastFrame, /environment DEVELOPMENT \(active v3\)/);
    t.match(v3, /^data\s+.*\{"orderId": "", "amount": 0\}$/m, 'the required inputs as the placeholder');
    t.match(v3, /^inputs\s+orderId\s+string\s+required\s+the order to refund$/m);
    t.match(v3, /^\s{12}amount\s+number\s+required$/m);
    t.match(v3, /^\s{12}verbose\s+boolean\s+optional\s+\(default false\)$/m);
    t.match(v3, /^\s{12}priority\s+"low"\|"high"\s+optional$/m, 'allowed values for the type');
    t.match(v3, /› Order approval/, 'the list still shows above the form');
    t.same(widerThan(v3, 80), []);
    t.ok(v3.split('\n').length <= 23, 'within the rows');

    ui.stdin.write(KEY.up); // active -> v1 (the versions go round)
    const v1 = await frameMatching(ui.lastFrame, /version\s+v1/);
    t.match(v1, /^inputs\s+any JSON object/m, "v1's inputs: it declares none");
    ui.stdin.write('{"orderId": "A1"}');
    const typed = await frameMatching(ui.lastFrame, /data\s+\{"orderId": "A1"\}/);
    t.notMatch(typed, /e\.g\./, 'typed: no placeholder');
  },
);

t.test('against a real daemon: the run form shows the inputs a published version declares', async (t) => {
  const cwd = t.testdir({
    'refund.yaml': `processId: 6c7d8e9f-0a1b-4c2d-9e3f-4a5b6c7d8e9f
name: Refund
inputs:
  type: object
  required: [orderId]
  properties:
    orderId: { type: string, description: the order to refund }
    amount: { type: number, default: 10 }
nodes:
  start: { type: startEvent, next: done }
  done: { type: endEvent }
`,
  });
  const info = await startDaemon(t, { cwd });
  t.equal((await wfxIn(['flow', 'publish', 'refund.yaml'], { cwd })).code, 0);
  const client = await adminClient(cwd, info.url);
  const ui = renderAt(
    <FlowsScreen client={client} rows={23} now={new Date()} active changes={0} setCapture={() => undefined} />,
    80,
  );
  t.teardown(ui.unmount);
  await frameMatching(ui.lastFrame, /› Refund/);
  ui.stdin.write('r');
  const form = await frameMatching(ui.lastFrame, /start a run of Refund/);
  t.match(form, /^data\s+.*\{"orderId": ""\}$/m);
  t.match(form, /^inputs\s+orderId\s+string\s+required\s+the order to refund$/m);
  t.match(form, /^\s{12}amount\s+number\s+optional\s+\(default 10\)$/m);
  ui.stdin.write('{"orderId": "A1"}');
  ui.stdin.write(KEY.enter);
  const started = await frameMatching(ui.lastFrame, /✔ started (\S+) · Refund/);
  const id = /✔ started (\S+)/.exec(started)![1]!;
  t.match(await client.instances.get(id), { data: { orderId: 'A1', amount: 10 } }, 'the default filled in');
});
