import '../setup/fixtures.js'; // fixtures under the OS temp dir (see there)
import t from 'tap';
import { WfxError } from '../../src/shared/errors.js';
import { App } from '../../src/tui/app.js';
import { TriggersTable } from '../../src/tui/components/triggers-table.js';
import { relativeTime } from '../../src/tui/format.js';
import type { TriggerHealth } from '../../src/tui/hooks/use-triggers.js';
import type { DomainHealth } from '../../src/tui/hooks/use-workers.js';
import { TriggersScreen } from '../../src/tui/screens/triggers-screen.js';
import { adminClient, startDaemon, wfxIn } from '../helpers/cli.js';
import { frameMatching, renderAt, widerThan } from '../helpers/ink.js';
import { stubClient } from '../helpers/stub-client.js';

const NOW = new Date('2026-11-21T10:05:00.000Z');
const subject = { processId: 'p', organization: 'default', environment: 'PRODUCTION', version: '3' } as const;
const TRIGGERS: TriggerHealth[] = [
  {
    ...subject,
    type: 'schedule',
    key: 'k',
    flowName: 'Nightly report',
    cron: '0 2 * * *',
    timezone: 'Europe/Berlin',
    missedRuns: 'last',
    overlap: 'allow',
    waiting: 0,
    state: 'active',
    lastFire: '2026-11-21T01:00:00.000Z',
    nextFire: '2026-11-22T01:00:00.000Z',
    nextFires: ['2026-11-22T01:00:00.000Z'],
    lastError: null,
  },
  {
    ...subject,
    type: 'schedule',
    key: 'k2',
    flowName: 'Hourly sync',
    cron: '0 * * * *',
    timezone: 'UTC',
    missedRuns: 'skip',
    overlap: 'skip',
    waiting: 2,
    state: 'disabled',
    lastFire: '2026-11-21T09:00:00.000Z',
    nextFire: null,
    nextFires: [],
    lastError: null,
  },
  {
    ...subject,
    type: 'webhook',
    flowName: 'On push',
    webhook: 'repo',
    state: 'failing',
    lastFire: '2026-11-21T10:02:00.000Z',
    nextFire: null,
    lastError: '2026-11-21T10:04:30.000Z: signature mismatch',
  },
  {
    ...subject,
    environment: 'DEVELOPMENT',
    type: 'webhook',
    flowName: 'Legacy hook',
    webhook: 'old',
    state: 'disabled',
    lastFire: null,
    nextFire: null,
    lastError: 'no webhook registration named "old"',
  },
  {
    ...subject,
    type: 'email',
    flowName: 'Support tickets',
    connection: 'support',
    state: 'active',
    lastFire: null,
    nextFire: null,
    lastError: null,
  },
];

t.test('fire times relative to now, compact enough for a 10-column cell', async (t) => {
  t.equal(relativeTime(null, NOW), '-');
  t.equal(relativeTime('2026-11-21T10:04:48.000Z', NOW), '12s ago');
  t.equal(relativeTime('2026-11-21T10:00:00.000Z', NOW), '5m ago');
  t.equal(relativeTime('2026-11-21T13:07:00.000Z', NOW), 'in 3h 02m');
  t.equal(relativeTime('2027-01-01T00:00:00.000Z', NOW), 'in 40d');
});

t.test(
  'the trigger table: state in a word with a symbol, type, flow and version, environment, fires, the detail, the last error',
  async (t) => {
    const ui = renderAt(<TriggersTable triggers={TRIGGERS} selected={2} now={NOW} rows={20} width={80} />, 80);
    t.teardown(ui.unmount);
    const frame = ui.lastFrame();
    t.match(frame, /STATE\s+TYPE\s+FLOW\s+ENV\s+LAST FIRE\s+NEXT FIRE/);
    t.match(
      frame,
      /  ● active\s+schedule\s+Nightly report v3\s+PRODUCTION\s+9h 05m ago\s+in 14h 55m\n\s+cron 0 2 \* \* \* Europe\/Berlin · missedRuns: last · next 2026-11-22T01:00Z\n/,
    );
    t.match(
      frame,
      /› ✖ failing\s+webhook\s+On push v3\s+PRODUCTION\s+3m ago\s+-\n\s+webhook repo\n\s+last error: 2026-11-21T10:04:30.000Z: signature mismatch/,
      'a failing trigger shows its last error',
    );
    t.match(
      frame,
      /  ○ disabled\s+webhook\s+Legacy hook v3\s+DEVELOPMENT\s+-\s+-\n\s+webhook old\n\s+why: no webhook registration named "old"/,
    );
    t.match(frame, /● active\s+email\s+Support tickets v3 .*\n\s+email connection support/);
    t.match(
      frame,
      /○ disabled\s+schedule\s+Hourly sync v3\s+PRODUCTION\s+1h 05m ago\s+-\n\s+cron 0 \* \* \* \* UTC · missedRuns: skip · overlap: skip · 2 waiting\n\s+paused: p resumes it \(or wfx schedules resume FLOW --env ENV\)/,
      'a paused schedule: its overlap, the fire times waiting, how to resume it',
    );
    t.same(widerThan(frame, 80), [], 'fits 80 columns');

    const few = renderAt(<TriggersTable triggers={TRIGGERS} selected={4} now={NOW} rows={5} width={80} />, 80);
    t.teardown(few.unmount);
    t.match(few.lastFrame(), /› ● active\s+email/, 'scrolls to keep the selected one in view');
    t.notMatch(few.lastFrame(), /Nightly report/);
    const none = renderAt(<TriggersTable triggers={[]} selected={0} now={NOW} rows={5} width={80} />, 80);
    t.teardown(none.unmount);
    t.match(none.lastFrame(), /no triggers: no active flow version has a schedule, webhook or email trigger/);
  },
);

t.test('a credential without WORKFLOW_READ gets a clear line, not a stack', async (t) => {
  const client = stubClient(() => {
    throw new WfxError('FORBIDDEN', 'this needs the WORKFLOW_READ permission');
  });
  const ui = renderAt(
    <TriggersScreen client={client} rows={23} now={NOW} active changes={0} setCapture={() => undefined} />,
    80,
  );
  t.teardown(ui.unmount);
  const frame = await frameMatching(ui.lastFrame, /FORBIDDEN/);
  t.match(frame, /✖ FORBIDDEN: this credential lacks WORKFLOW_READ, which trigger health needs/);
  t.notMatch(frame, /loading/);
});

t.test(
  'trigger health is re-read on its interval while shown, and its interval is cleared once unmounted',
  async (t) => {
    // The screen's interval is told apart by its period; clearing it is what stops the reads.
    const created: unknown[] = [];
    const cleared = new Set<unknown>();
    const realSet = globalThis.setInterval;
    const realClear = globalThis.clearInterval;
    globalThis.setInterval = ((fn: () => void, ms?: number) => {
      const id = realSet(fn, ms);
      if (ms === 30) created.push(id);
      return id;
    }) as typeof setInterval;
    globalThis.clearInterval = ((id?: Parameters<typeof clearInterval>[0]) => {
      cleared.add(id);
      realClear(id);
    }) as typeof clearInterval;
    t.teardown(() => {
      globalThis.setInterval = realSet;
      globalThis.clearInterval = realClear;
    });
    let health: TriggerHealth[] = [TRIGGERS[0]!];
    const client = stubClient((c) => ({ items: c.path.startsWith('/jobs/workers') ? [] : health }));
    const ui = renderAt(
      <TriggersScreen
        client={client}
        rows={23}
        now={NOW}
        active
        changes={0}
        setCapture={() => undefined}
        refreshMs={30}
      />,
      80,
    );
    await frameMatching(ui.lastFrame, /1 trigger · ● 1 active · ✖ 0 failing · ○ 0 disabled/);
    health = TRIGGERS; // no change event: only the interval's re-read can show these
    const all = await frameMatching(ui.lastFrame, /5 triggers · ● 2 active · ✖ 1 failing · ○ 2 disabled/);
    t.same(widerThan(all, 80), []);
    t.equal(created.length, 1, 'one interval while shown');
    ui.unmount();
    // React runs an unmounted tree's effect cleanups a moment after unmount: wait for that (bounded).
    for (let i = 0; i < 500 && !cleared.has(created[0]); i++) await new Promise((r) => setImmediate(r));
    t.ok(cleared.has(created[0]), 'the interval was cleared on unmount');
  },
);

const SCHEDULED = `processId: 5b6c7d8e-9f0a-4b1c-8d2e-3f4a5b6c7d8e
name: Year end
triggers:
  - { type: schedule, cron: "0 0 31 12 *", timezone: Europe/Berlin, missedRuns: all }
nodes:
  start: { type: startEvent, next: done }
  done: { type: endEvent }
`;
const hooked = (processId: string, name: string, webhook: string) => `processId: ${processId}
name: ${name}
triggers:
  - { type: webhook, webhook: ${webhook} }
nodes:
  start: { type: startEvent, next: done }
  done: { type: endEvent }
`;

t.test(
  'the trigger-health screen against a real daemon: active, disabled, and failing after a refused delivery',
  async (t) => {
    const cwd = t.testdir({
      'year-end.yaml': SCHEDULED,
      'on-push.yaml': hooked('6c7d8e9f-0a1b-4c2d-9e3f-4a5b6c7d8e9f', 'On push', 'repo'),
      'legacy.yaml': hooked('7d8e9f0a-1b2c-4d3e-8f4a-5b6c7d8e9f0a', 'Legacy hook', 'old'),
    });
    const info = await startDaemon(t, { cwd });
    const run = (args: string[]) => wfxIn(args, { cwd });
    for (const name of ['repo', 'old'])
      t.equal((await run(['webhooks', 'create', '--name', name, '--provider', 'GITHUB'])).code, 0);
    for (const f of ['year-end.yaml', 'on-push.yaml', 'legacy.yaml'])
      t.equal((await run(['flow', 'publish', f])).code, 0, f);
    t.equal((await run(['webhooks', 'delete', 'old'])).code, 0);
    const client = await adminClient(cwd, info.url);

    const ui = renderAt(<App client={client} url={info.url} rows={24} />, 80);
    t.teardown(ui.unmount);
    await frameMatching(ui.lastFrame, /· live/);
    ui.stdin.write('4');
    const first = await frameMatching(ui.lastFrame, /3 triggers · ● 2 active · ✖ 0 failing · ○ 1 disabled/);
    t.match(first, /● active\s+webhook\s+On push v1\s+PRODUCTION\s+-\s+-\n\s+webhook repo/);
    t.match(
      first,
      /○ disabled\s+webhook\s+Legacy hook v1\s+PRODUCTION\s+-\s+-\n\s+webhook old\n\s+why: no webhook registration named "old"/,
    );
    t.match(
      first,
      /● active\s+schedule\s+Year end v1\s+PRODUCTION\s+-\s+in \d+d\n\s+cron 0 0 31 12 \* Europe\/Berlin · missedRuns: all · next \d{4}-12-30T23:00Z\n/,
    );
    t.same(widerThan(first, 80), [], 'the whole screen fits 80 columns');

    // A delivery with a bad signature: the sender hears 200, the trigger turns failing (seen on the 5 s re-read).
    const hooks = JSON.parse((await run(['webhooks', 'list', '--json'])).stdout) as Array<{
      name: string;
      endpoints: Array<{ url: string }>;
    }>;
    const url = hooks.find((h) => h.name === 'repo')!.endpoints[0]!.url;
    const res = await fetch(url.startsWith('http') ? url : `${info.url}${url}`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-github-event': 'push',
        'x-github-delivery': 'd-1',
        'x-hub-signature-256': `sha256=${'0'.repeat(64)}`,
      },
      body: '{"ref":"main"}',
    });
    t.equal(res.status, 200);
    const failing = await frameMatching(ui.lastFrame, /✖ failing\s+webhook\s+On push v1/);
    t.match(
      failing,
      /✖ failing\s+webhook\s+On push v1\s+PRODUCTION\s+-\s+-\n\s+webhook repo\n\s+last error: \S+: .*signature/,
    );
    t.match(failing, /3 triggers · ● 1 active · ✖ 1 failing · ○ 1 disabled/);
    t.same(widerThan(failing, 80), []);

    // p on the schedule (the third row) pauses its flow's schedules, and p again resumes them.
    ui.stdin.write('j');
    ui.stdin.write('j');
    await frameMatching(ui.lastFrame, /› ● active\s+schedule\s+Year end/);
    ui.stdin.write('p');
    const paused = await frameMatching(ui.lastFrame, /› ○ disabled\s+schedule\s+Year end/);
    t.match(
      paused,
      /○ disabled\s+schedule\s+Year end v1\s+PRODUCTION\s+-\s+-\n\s+cron 0 0 31 12 \* Europe\/Berlin · missedRuns: all\n\s+paused: p resumes it \(or wfx schedules resume FLOW --env ENV\)/,
      'a paused schedule says how to resume it, and has no next fire',
    );
    t.match(paused, /paused the schedules of Year end in PRODUCTION/, 'the notice says what was done');
    t.match((await run(['schedules', 'list'])).stdout, /paused/, 'the daemon has it paused');
    ui.stdin.write('p');
    const resumed = await frameMatching(ui.lastFrame, /› ● active\s+schedule\s+Year end v1\s+PRODUCTION\s+-\s+in \d+d/);
    t.match(resumed, /the schedules of Year end in PRODUCTION fire again/);
    t.same(widerThan(resumed, 80), []);
  },
);

t.test('domains of workers under the triggers: a stalled one says so, workers and last seen', async (t) => {
  const domains: DomainHealth[] = [
    {
      organization: 'default',
      domain: 'billing',
      state: 'stalled',
      waiting: 3,
      locked: 0,
      oldestWaiting: '2026-11-21T10:00:00.000Z',
      workers: [],
      lastSeen: null,
    },
    {
      organization: 'default',
      domain: 'crm',
      state: 'active',
      waiting: 0,
      locked: 2,
      oldestWaiting: null,
      workers: [
        { worker: 'crm-1', lastSeen: '2026-11-21T10:04:50.000Z', polling: true },
        { worker: 'crm-2', lastSeen: '2026-11-21T10:03:00.000Z', polling: false },
      ],
      lastSeen: '2026-11-21T10:04:50.000Z',
    },
  ];
  const client = stubClient((c) => ({ items: c.path.startsWith('/jobs/workers') ? domains : [TRIGGERS[0]] }));
  const ui = renderAt(
    <TriggersScreen client={client} rows={23} now={NOW} active changes={0} setCapture={() => undefined} />,
    80,
  );
  t.teardown(ui.unmount);
  const frame = await frameMatching(ui.lastFrame, /2 domains of workers/);
  t.match(frame, /2 domains of workers · ✖ 1 stalled: jobs wait and no worker was seen/);
  t.match(frame, /✖ stalled\s+billing \(default\)\s+3 waiting · 0 locked\n\s+no worker seen/);
  t.match(frame, /● active\s+crm \(default\)\s+0 waiting · 2 locked\n\s+workers crm-1\*, crm-2 · seen 10s ago/);
  t.same(widerThan(frame, 80), [], 'fits 80 columns');
});
