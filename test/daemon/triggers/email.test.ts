import { liveInstances } from '../../helpers/state.js';
import t, { type Test } from 'tap';
import { EmailTriggers, passesFilters } from '../../../src/daemon/triggers/email.js';
import { engineHarness, type EngineHarness } from '../../helpers/engine.js';
import { eventually } from '../../helpers/eventually.js';
import { HAVE_DOVECOT, mail, startImapServer, type ImapServer } from '../../helpers/imap-server.js';

const FLOW = `
processId: AUTO
name: Orders by email
triggers:
  - { type: email, connection: orders, filters: { subjectContains: order, senderMatches: "@example\\\\.com$" } }
nodes:
  start: { type: startEvent, next: ask }
  ask: { type: inputNode, inputType: textbox, next: done }
  done: { type: endEvent }
`;

async function setup(
  t: Test,
  flow = FLOW,
): Promise<{ h: EngineHarness; server: ImapServer; email: EmailTriggers; pid: string }> {
  const server = await startImapServer(t);
  const h = await engineHarness(t);
  const at = h.clock.now().toISOString();
  await h.store.commit({
    type: 'emailConnection.saved',
    connection: {
      connectionId: 'c1',
      name: 'orders',
      organization: 'default',
      host: '127.0.0.1',
      port: server.port,
      security: 'NONE',
      user: server.user,
      password: server.password,
      mailbox: 'INBOX',
      createdAt: at,
      updatedAt: at,
    },
  });
  const pid = await h.publish(flow);
  const email = new EmailTriggers({
    store: h.store,
    engine: h.engine,
    files: h.files,
    backoff: { initialMs: 20, maxMs: 200 },
    pollMs: 60_000,
  });
  t.teardown(() => email.close());
  email.start();
  return { h, server, email, pid };
}

const runs = (h: EngineHarness, pid: string) => liveInstances(h.store.state).filter((i) => i.processId === pid);

t.test('filters: subject and body contain (any case), sender matches a regex', async (t) => {
  const m = { subject: 'New ORDER 42', sender: 'bob@example.com', body: 'two chairs' };
  t.ok(passesFilters(undefined, m));
  t.ok(passesFilters({ subjectContains: 'order', senderMatches: '@example\\.com$', bodyContains: 'CHAIRS' }, m));
  t.notOk(passesFilters({ subjectContains: 'invoice' }, m));
  t.notOk(passesFilters({ senderMatches: '^alice@' }, m));
  t.notOk(passesFilters({ bodyContains: 'table' }, m));
});

t.test(
  'a real IMAP server: a matching email starts the flow once with the email variables and is marked seen',
  { skip: !HAVE_DOVECOT && !process.env.CI && 'dovecot is not installed (apt-get install dovecot-imapd)' },
  async (t) => {
    const { h, server, email, pid } = await setup(t);
    await eventually('the trigger is connected', () => email.health()[0]?.state === 'active');
    await server.append(mail({ id: 'not-for-us', subject: 'Lunch?', from: 'carol@example.com' }));
    await server.append(
      mail({
        id: 'order-1',
        subject: 'Order 42',
        from: 'Alice <alice@example.com>',
        to: 'orders@example.com, sales@example.com',
        body: 'Two chairs, please.',
      }),
    );
    await h.waitFor((e) => e.type === 'PROCESS_STARTED' && e.processId === pid);
    const [run] = runs(h, pid);
    t.match(run!.variables, {
      emailSubject: 'Order 42',
      emailBody: /Two chairs, please\./,
      emailSender: 'alice@example.com',
      emailRecipients: ['orders@example.com', 'sales@example.com'],
      emailMessageId: '<order-1@example.com>',
      triggerType: 'email',
    });
    // The same Message-ID again, then another order: when that one has started, the duplicate was looked at.
    await server.append(mail({ id: 'order-1', subject: 'Order 42', body: 'Two chairs, please.' }));
    await server.append(mail({ id: 'order-2', subject: 'order 43' }));
    await h.waitFor((e) => e.type === 'PROCESS_STARTED' && e.processId === pid && runs(h, pid).length >= 2);
    await eventually(
      'the three orders are marked seen',
      async () => (await server.flags()).filter((f) => f.includes('\\Seen')).length === 3,
    );
    t.equal(runs(h, pid).length, 2, 'a repeated Message-ID starts nothing');
    t.same(
      (await server.flags()).map((f) => f.includes('\\Seen')),
      [false, true, true, true],
      'the email no trigger wanted stays unseen; the others are seen',
    );
    t.match(email.health(), [{ type: 'email', connection: 'orders', state: 'active', lastFire: String }]);
  },
);

t.test(
  'the IMAP server goes away: the trigger says failing, reconnects, and goes on',
  { skip: !HAVE_DOVECOT && !process.env.CI && 'dovecot is not installed (apt-get install dovecot-imapd)' },
  async (t) => {
    const { h, server, email, pid } = await setup(t);
    await eventually('the trigger is connected', () => email.health()[0]?.state === 'active');
    await server.stop();
    await eventually('the trigger notices', () => email.health()[0]?.state === 'failing');
    t.match(email.health()[0], { state: 'failing', lastError: String });
    await server.start();
    await eventually('it reconnected', () => email.health()[0]?.state === 'active');
    await server.append(mail({ id: 'after-restart', subject: 'Order after the restart' }));
    await h.waitFor((e) => e.type === 'PROCESS_STARTED' && e.processId === pid);
    t.equal(runs(h, pid)[0]!.variables.emailSubject, 'Order after the restart');
  },
);

t.test(
  "an email the flow's inputs refuse starts nothing; the trigger's health says why until an email starts the flow",
  { skip: !HAVE_DOVECOT && !process.env.CI && 'dovecot is not installed (apt-get install dovecot-imapd)' },
  async (t) => {
    const strict = FLOW.replace(
      'nodes:',
      'inputs: { type: object, properties: { emailSubject: { type: string, pattern: "^Order [0-9]+$" } } }\nnodes:',
    );
    const { h, server, email, pid } = await setup(t, strict);
    await eventually('the trigger is connected', () => email.health()[0]?.state === 'active');
    await server.append(mail({ id: 'vague', subject: 'an order, some day' }));
    const failing = await eventually('the refusal shows in the health', () => {
      const health = email.health()[0];
      return health?.state === 'failing' ? health : undefined;
    });
    t.match(
      failing.lastError,
      /^\S+: mail <vague@example\.com> not started: VALIDATION_ERROR: data\.emailSubject must match/,
      'when, which email, and why',
    );
    // Marked seen once its refusal is journaled: done with, not tried again.
    await eventually('the refused email is marked seen', async () => (await server.flags())[0]?.includes('\\Seen'));
    t.equal(runs(h, pid).length, 0, 'nothing started');

    await server.append(mail({ id: 'good', subject: 'Order 45' }));
    await h.waitFor((e) => e.type === 'PROCESS_STARTED' && e.processId === pid);
    await eventually('the trigger is healthy again', () => email.health()[0]?.state === 'active');
    t.match(email.health()[0], { state: 'active', lastError: null, lastFire: String });
  },
);

t.test('a trigger naming no connection is refused at publish', async (t) => {
  const h = await engineHarness(t);
  await t.rejects(h.publish(FLOW), /UNKNOWN_CONNECTION|no email connection named "orders"/);
});

t.test(
  "an email's attachments are kept in the file store, named in {emailAttachments}, journaled with the start",
  { skip: !HAVE_DOVECOT && !process.env.CI && 'dovecot is not installed (apt-get install dovecot-imapd)' },
  async (t) => {
    const { h, server, email, pid } = await setup(t);
    await eventually('the trigger is connected', () => email.health()[0]?.state === 'active');
    const pdf = Buffer.from('%PDF-1.7 an invoice');
    await server.append(
      mail({
        id: 'with-files',
        subject: 'Order 44',
        body: 'The invoice is attached.',
        attachments: [
          { name: 'invoice.pdf', type: 'application/pdf', content: pdf },
          { name: 'notes.txt', type: 'text/plain', content: Buffer.from('two chairs') },
        ],
      }),
    );
    await h.waitFor((e) => e.type === 'PROCESS_STARTED' && e.processId === pid);
    const [run] = runs(h, pid);
    const attachments = run!.variables.emailAttachments as Array<{
      fileId: string;
      name: string;
      mimeType: string;
      bytes: number;
    }>;
    t.match(attachments, [
      { name: 'invoice.pdf', mimeType: 'application/pdf', bytes: pdf.length },
      { name: 'notes.txt', mimeType: 'text/plain', bytes: 10 },
    ]);
    const file = h.store.state.files[attachments[0]!.fileId]!;
    t.equal(file.organization, 'default');
    t.same(await h.files.readAll(file), pdf, 'the content as sent');
    const restarted = await h.restart();
    t.ok(restarted.store.state.files[attachments[1]!.fileId], 'journaled');
  },
);
