import '../setup/fixtures.js'; // fixtures under the OS temp dir (see there)
import t from 'tap';
import { startDaemon, wfxIn } from '../helpers/cli.js';
import { eventually } from '../helpers/eventually.js';
import { HAVE_DOVECOT, mail, startImapServer } from '../helpers/imap-server.js';

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

t.test(
  'wfx daemon status shows every trigger: a schedule with its next fire, a webhook failing on a bad signature',
  async (t) => {
    const cwd = t.testdir({ 'new-year.yaml': SCHEDULED, 'on-push.yaml': HOOKED, 'push.json': '{"ref":"main"}' });
    const info = await startDaemon(t, { cwd });
    const run = (args: string[]) => wfxIn(args, { cwd });
    t.equal((await run(['webhooks', 'create', '--name', 'repo', '--provider', 'GITHUB'])).code, 0);
    for (const f of ['new-year.yaml', 'on-push.yaml']) t.equal((await run(['flow', 'publish', f])).code, 0, f);

    const status = await run(['daemon', 'status', '--json']);
    t.equal(status.code, 0);
    const triggers = JSON.parse(status.stdout).triggers as Array<Record<string, unknown>>;
    t.match(triggers, [
      {
        type: 'schedule',
        flowName: 'New year',
        cron: '0 0 1 1 *',
        timezone: 'Europe/Berlin',
        state: 'active',
        nextFire: /^20\d\d-12-31T23:00:00.000Z$/,
      },
      { type: 'webhook', flowName: 'On push', webhook: 'repo', state: 'active', lastFire: null },
    ]);

    // A delivery with a wrong signature: refused, and the trigger says so.
    const token = (
      JSON.parse((await run(['webhooks', 'list', '--json'])).stdout) as Array<{ endpoints: Array<{ url: string }> }>
    )[0]!.endpoints[0]!.url;
    const res = await fetch(token.startsWith('http') ? token : `${info.url}${token}`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-github-event': 'push',
        'x-github-delivery': 'd-1',
        'x-hub-signature-256': `sha256=${'0'.repeat(64)}`,
      },
      body: '{"ref":"main"}',
    });
    t.equal(res.status, 200, 'the sender learns nothing');
    const hook = await eventually('the webhook trigger says failing', async () => {
      const seen = (
        JSON.parse((await run(['daemon', 'status', '--json'])).stdout).triggers as Array<Record<string, unknown>>
      ).find((h) => h.type === 'webhook');
      return seen?.state === 'failing' && seen;
    });
    t.match(hook, { state: 'failing', lastError: /signature/ }, 'the refusal shows in trigger health');
    const human = await run(['daemon', 'status']);
    t.match(human.stdout, /TRIGGER\s+FLOW\s+ENV\s+STATE\s+LAST FIRE\s+NEXT FIRE\s+LAST ERROR/);
    t.match(human.stdout, /schedule 0 0 1 1 \* Europe\/Berlin\s+New year v1\s+PRODUCTION\s+active/);
  },
);

t.test(
  'an email trigger over a real daemon and a real IMAP server: match, no match, duplicate',
  { skip: !HAVE_DOVECOT && !process.env.CI && 'dovecot is not installed (apt-get install dovecot-imapd)' },
  async (t) => {
    const imap = await startImapServer(t);
    const cwd = t.testdir({
      'support.yaml': `processId: 0c1d2e3f-4a5b-4c6d-8e7f-9a0b1c2d3e4f
name: Support tickets
triggers:
  - { type: email, connection: support, filters: { subjectContains: ticket } }
nodes:
  start: { type: startEvent, next: done }
  done: { type: outputNode, outputs: { subject: "{emailSubject}", from: "{emailSender}" }, next: end }
  end: { type: endEvent }
`,
    });
    await startDaemon(t, { cwd });
    const run = (args: string[]) => wfxIn(args, { cwd });
    const created = await wfxIn(
      [
        'email-connections',
        'create',
        '--name',
        'support',
        '--host',
        '127.0.0.1',
        '--port',
        String(imap.port),
        '--user',
        imap.user,
        '--password-stdin',
        '--no-tls',
      ],
      { cwd, stdin: imap.password },
    );
    t.equal(created.code, 0, `connection created ${created.stderr}`);
    t.equal((await run(['flow', 'publish', 'support.yaml'])).code, 0);

    await imap.append(mail({ id: 'm1', subject: 'Weekly newsletter' }));
    await imap.append(mail({ id: 'm2', subject: 'New ticket: printer on fire', from: 'dave@example.com' }));
    await imap.append(mail({ id: 'm2', subject: 'New ticket: printer on fire', from: 'dave@example.com' }));
    await imap.append(mail({ id: 'm3', subject: 'Another ticket' }));
    const ran = async () =>
      JSON.parse((await run(['instances', 'list', '0c1d2e3f-4a5b-4c6d-8e7f-9a0b1c2d3e4f', '--json'])).stdout) as Array<{
        processInstanceId: string;
      }>;
    // IDLE tells the trigger of new mail (the test server looks at its mailbox every second).
    const items = await eventually('two executions started', async () => {
      const seen = await ran();
      return seen.length >= 2 && seen;
    });
    t.equal(items.length, 2, 'two tickets started the flow: not the newsletter, not the repeated Message-ID');
    const outputs = await Promise.all(
      items.map(
        async (i) =>
          JSON.parse((await run(['instances', 'get', i.processInstanceId, '--json'])).stdout).output as {
            subject: string;
          },
      ),
    );
    t.same(outputs.map((o) => o.subject).sort(), ['Another ticket', 'New ticket: printer on fire']);
    const status = JSON.parse((await run(['daemon', 'status', '--json'])).stdout) as {
      triggers: Array<Record<string, unknown>>;
    };
    t.match(status.triggers, [{ type: 'email', connection: 'support', state: 'active', lastFire: String }]);
  },
);
