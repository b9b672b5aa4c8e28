import t from 'tap';
import { startDaemon, wfx } from '../helpers/cli.js';

const SCHEDULED = `processId: 8a9b0c1d-2e3f-4a5b-8c6d-7e8f9a0b1c2d
name: New year
triggers:
  - { type: schedule, cron: "0 0 1 1 *", timezone: Europe/Berlin }
nodes:
  start: { type: startEvent, next: done }
  done: { type: endEvent }
`;
const HOOKED = `processId: 9b0c1d2e-3f4a-4b5c-9d6e-8f9a0b1c2d3e
name: On push
triggers:
  - { type: webhook, webhook: repo, eventType: push }
nodes:
  start: { type: startEvent, next: done }
  done: { type: endEvent }
`;

t.test('wfx daemon status shows every trigger: a schedule with its next fire, a webhook failing on a bad signature', async (t) => {
  const cwd = t.testdir({ 'new-year.yaml': SCHEDULED, 'on-push.yaml': HOOKED, 'push.json': '{"ref":"main"}' });
  const info = await startDaemon(t, { cwd });
  const run = (args: string[]) => wfx(args, { cwd });
  t.equal((await run(['webhooks', 'create', '--name', 'repo', '--provider', 'GITHUB'])).code, 0);
  for (const f of ['new-year.yaml', 'on-push.yaml']) t.equal((await run(['flow', 'publish', f])).code, 0, f);

  const status = await run(['daemon', 'status', '--json']);
  t.equal(status.code, 0);
  const triggers = JSON.parse(status.stdout).triggers as Array<Record<string, unknown>>;
  t.match(triggers, [
    { type: 'schedule', flowName: 'New year', cron: '0 0 1 1 *', timezone: 'Europe/Berlin', state: 'active', nextFire: /^20\d\d-12-31T23:00:00.000Z$/ },
    { type: 'webhook', flowName: 'On push', webhook: 'repo', state: 'active', lastFire: null },
  ]);

  // A delivery with a wrong signature: refused, and the trigger says so.
  const token = (JSON.parse((await run(['webhooks', 'list', '--json'])).stdout) as Array<{ endpoints: Array<{ url: string }> }>)[0]!.endpoints[0]!.url;
  const res = await fetch(token.startsWith('http') ? token : `${info.url}${token}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-github-event': 'push', 'x-github-delivery': 'd-1', 'x-hub-signature-256': `sha256=${'0'.repeat(64)}` },
    body: '{"ref":"main"}',
  });
  t.equal(res.status, 200, 'the sender learns nothing');
  let hook: Record<string, unknown> | undefined;
  for (let i = 0; i < 100 && hook?.state !== 'failing'; i++) {
    hook = (JSON.parse((await run(['daemon', 'status', '--json'])).stdout).triggers as Array<Record<string, unknown>>).find((h) => h.type === 'webhook');
  }
  t.match(hook, { state: 'failing', lastError: /signature/ }, 'the refusal shows in trigger health');
  const human = await run(['daemon', 'status']);
  t.match(human.stdout, /TRIGGER\s+FLOW\s+ENV\s+STATE\s+LAST FIRE\s+NEXT FIRE\s+LAST ERROR/);
  t.match(human.stdout, /schedule 0 0 1 1 \* Europe\/Berlin\s+New year v1\s+PRODUCTION\s+active/);
});
