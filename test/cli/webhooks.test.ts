import '../setup/fixtures.js'; // fixtures under the OS temp dir (see there)
import { once } from 'node:events';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { describeDelivery } from '../../src/cli/commands/webhooks.js';
import { EXIT } from '../../src/cli/exit-codes.js';
import { callDaemon, spawnWfx, startDaemon, wfxIn } from '../helpers/cli.js';
import { eventually } from '../helpers/eventually.js';

const FLOW = `processId: 3c4d5e6f-7081-4a92-8b3c-4d5e6f708192
name: On push
triggers:
  - { type: webhook, webhook: repo, eventType: push }
nodes:
  start: { type: startEvent, next: done }
  done: { type: endEvent }
`;

t.test("wfx webhooks verify: the daemon's verifier offline, exit 0 valid, 1 invalid with the reason", async (t) => {
  const cwd = t.testdir({ 'body.txt': 'Hello, World!', 'tampered.txt': 'Hello, World?' });
  const args = [
    'webhooks',
    'verify',
    '--provider',
    'GITHUB',
    '--secret',
    "It's a Secret to Everybody",
    '--header',
    'X-Hub-Signature-256: sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17',
  ];
  const ok = await wfxIn([...args, '--body', 'body.txt'], { cwd });
  t.equal(ok.code, 0);
  t.equal(ok.stdout, 'valid\n');
  const bad = await wfxIn([...args, '--body', 'tampered.txt'], { cwd });
  t.equal(bad.code, 1);
  t.equal(bad.stdout, 'invalid: no signature matches the secret\n');
  const stale = await wfxIn(
    [
      'webhooks',
      'verify',
      '--provider',
      'STANDARD',
      '--secret',
      'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
      '--header',
      'webhook-id: msg_p5jXN8AQM9LWM0D4loKWxJek',
      '--header',
      'webhook-timestamp: 1614265330',
      '--header',
      'webhook-signature: v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=',
      '--body',
      'body.txt',
      '--at',
      '1614265330',
    ],
    { cwd },
  );
  t.equal(stale.code, 1, 'a different body than the vector');
  const missing = await wfxIn(
    ['webhooks', 'verify', '--provider', 'STRIPE', '--secret', 'x', '--body', 'body.txt', '--json'],
    { cwd },
  );
  t.same(JSON.parse(missing.stdout), { ok: false, reason: 'the Stripe-Signature header is missing' });
});

t.test('describeDelivery: one line a delivery, what it started or why not', async (t) => {
  const base = {
    deliveryId: 'd',
    receivedAt: '2026-11-24T10:00:00.000Z',
    environment: 'ALL' as const,
    eventType: 'push',
    eventId: 'g-1',
  };
  t.equal(
    describeDelivery({ ...base, signatureOk: true, reason: null, startedInstanceIds: ['i-1'] }),
    '2026-11-24T10:00:00.000Z  ALL  push g-1  signature ok  started i-1',
  );
  t.equal(
    describeDelivery({ ...base, signatureOk: false, reason: 'signature refused: no match', startedInstanceIds: [] }),
    '2026-11-24T10:00:00.000Z  ALL  push g-1  signature REFUSED  nothing started: signature refused: no match',
  );
  t.match(
    describeDelivery({
      ...base,
      signatureOk: false,
      refused: 'TOO_LARGE',
      reason: 'body too large',
      startedInstanceIds: [],
      body: { bytes: 5_000_000, truncated: true },
    }),
    /push g-1 {2}body TOO LARGE {2}nothing started: /,
    'a body refused unread: no verdict on its signature',
  );
});

const PAID = `processId: 4d5e6f70-8192-4aa3-8c4d-5e6f70819203
name: On payment
triggers:
  - { type: webhook, webhook: pay, eventType: payment_intent.succeeded }
nodes:
  start: { type: startEvent, next: done }
  done: { type: endEvent }
`;

t.test('wfx webhooks and email connections against a daemon', async (t) => {
  // One daemon; each test in an organization of its own (its webhooks, flows, deliveries and
  // connections, as with a daemon of its own), its files in a directory of its own.
  const { url } = await startDaemon(t, { cwd: t.testdir({}) });
  const system = (await readFile(join(t.testdirName, '.wfx', 'bootstrap.key'), 'utf8')).trim();
  let organizations = 0;
  /** A directory of `files` for test `t`, an admin key of a new organization, and `wfx` run in-process with it there. */
  const organization = async (t: Test, files: Record<string, string>) => {
    const cwd = t.testdir(files);
    const made = await callDaemon(url, system, 'POST', '/admin/api-keys', {
      name: 'admin',
      role: 'admin',
      organization: `hooks-${++organizations}`,
    });
    const key = made.body.apiKey as string;
    const run = (args: string[], stdin?: string) =>
      wfxIn(['--url', url, '--api-key', key, ...args], { cwd, ...(stdin !== undefined && { stdin }) });
    return { cwd, key, run };
  };

  await t.test('wfx webhooks: create, send signed as the provider would, read the deliveries', async (t) => {
    const { run } = await organization(t, { 'on-push.yaml': FLOW, 'push.json': '{"ref":"refs/heads/main"}' });
    const created = await run(['webhooks', 'create', '--name', 'repo', '--provider', 'GITHUB', '--json']);
    t.equal(created.code, 0);
    t.match(JSON.parse(created.stdout), {
      name: 'repo',
      provider: 'GITHUB',
      environmentMode: 'SHARED',
      endpoints: [{ environment: 'ALL', url: /\/webhook\/receive\//, secret: /^whsec_/ }],
    });
    t.equal((await run(['flow', 'publish', 'on-push.yaml'])).code, 0);
    const send = (...extra: string[]) =>
      run(['webhooks', 'send', 'repo', '--payload', 'push.json', '--event', 'push', ...extra]);
    const sent = await send();
    t.equal(sent.code, 0, sent.stderr);
    t.match(sent.stdout, /^delivered push [0-9a-z_]+ to the ALL endpoint: started [0-9a-f-]{36}\n$/);

    // The same payload again is a new event, as GitHub's next push would be: it starts again.
    const again = await send('--json');
    t.equal(again.code, 0, again.stderr);
    const second = JSON.parse(again.stdout) as {
      signatureOk: boolean;
      eventType: string;
      startedInstanceIds: string[];
    };
    t.match(second, { signatureOk: true, eventType: 'push', startedInstanceIds: [String], reason: null });

    // --replay sends it as it is: the daemon sees the body it has seen, a duplicate; exit 1, why.
    await run(['webhooks', 'send', 'repo', '--payload', 'push.json', '--event', 'push', '--replay']);
    const replayed = await send('--replay');
    t.equal(replayed.code, 1);
    t.match(replayed.stderr, /^WEBHOOK_NOTHING_STARTED: delivered push .* started nothing: duplicate: /);

    const other = await send('--event', 'issues');
    t.equal(other.code, 1, 'an event no flow takes');
    t.match(
      other.stderr,
      /started nothing: no flow active in PRODUCTION has a webhook trigger for "repo" that takes event issues/,
    );

    const items = JSON.parse((await run(['webhooks', 'deliveries', 'repo', '--json'])).stdout) as unknown[];
    t.equal(items.length, 5, 'every send is in the log');
    t.match(
      items.at(-1),
      { signatureOk: true, eventType: 'push', startedInstanceIds: [String] },
      'signed like GitHub, verified, the flow started',
    );
    const table = await run(['webhooks', 'deliveries', 'repo']);
    t.match(table.stdout, /RECEIVED\s+ID\s+ENV\s+EVENT\s+SIGNATURE\s+BYTES\s+STARTED/);

    // One delivery with its headers and body; then redelivered: it starts the flow again.
    const started = items.at(-1) as { deliveryId: string };
    const shown = await run(['webhooks', 'deliveries', 'repo', started.deliveryId]);
    t.equal(shown.code, 0, shown.stderr);
    t.match(shown.stdout, /\nheaders\n(.*\n)*  x-github-event: push\n(.*\n)*body\n\{/, 'its kept headers and body');
    t.notMatch(shown.stdout, /x-hub-signature/i, 'never its signature');
    const redelivered = await run(['webhooks', 'redeliver', 'repo', started.deliveryId]);
    t.equal(redelivered.code, 0, redelivered.stderr);
    t.match(
      redelivered.stdout,
      new RegExp(`^redelivered ${started.deliveryId} as [0-9a-f-]{36}: started [0-9a-f-]{36}\n$`),
    );
    const refused = items.find((d) => (d as { refused?: string }).refused === 'DUPLICATE') as { deliveryId: string };
    const notAgain = await run(['webhooks', 'redeliver', 'repo', refused.deliveryId]);
    t.equal(notAgain.code, 1);
    t.match(notAgain.stderr, /^DELIVERY_NOT_REDELIVERABLE: /, 'a duplicate is not redelivered');
    t.notMatch((await run(['webhooks', 'list'])).stdout, /whsec_/, 'no secret in the list');

    // The body limit: 1 MiB unless the registration says otherwise, changed in place.
    t.equal((JSON.parse(created.stdout) as { maxBodyBytes: number }).maxBodyBytes, 1024 * 1024, 'the default limit');
    const updated = await run(['webhooks', 'update', 'repo', '--max-body-bytes', '2KiB', '--json']);
    t.equal(updated.code, 0, updated.stderr);
    t.match(JSON.parse(updated.stdout), { name: 'repo', maxBodyBytes: 2048 });
    for (const bad of ['26MiB', '1000', 'lots'])
      t.equal(
        (await run(['webhooks', 'update', 'repo', '--max-body-bytes', bad])).code,
        EXIT.USAGE,
        `--max-body-bytes ${bad} is refused`,
      );
    const withLimit = await run([
      'webhooks',
      'create',
      '--name',
      'small',
      '--provider',
      'STRIPE',
      '--max-body-bytes',
      '65536',
      '--json',
    ]);
    t.equal(withLimit.code, 0, withLimit.stderr);
    t.match(JSON.parse(withLimit.stdout), { name: 'small', maxBodyBytes: 65536 });
  });

  await t.test('wfx email-connections: the password comes on stdin and is never shown', async (t) => {
    const { run } = await organization(t, {});
    const created = await run(
      [
        'email-connections',
        'create',
        '--name',
        'support',
        '--host',
        'imap.example.com',
        '--user',
        'me@example.com',
        '--password-stdin',
        '--starttls',
      ],
      's3cret-pass\n',
    );
    t.equal(created.code, 0, created.stderr);
    t.match(created.stdout, /email connection support added \(STARTTLS\)/);
    const list = await run(['email-connections', 'list', '--json']);
    t.match(JSON.parse(list.stdout), [{ name: 'support', host: 'imap.example.com', port: 143, security: 'STARTTLS' }]);
    t.notMatch(list.stdout, /s3cret/);
    const noStdin = await run(['email-connections', 'create', '--name', 'x', '--host', 'h', '--user', 'u']);
    t.equal(noStdin.code, 2, 'the password is never taken on the command line');
  });

  await t.test('wfx webhooks send to Stripe: each send a new event id, --replay a duplicate of it', async (t) => {
    const event = { id: 'evt_fixture', object: 'event', type: 'payment_intent.succeeded', created: 1, data: {} };
    const { run } = await organization(t, { 'paid.yaml': PAID, 'event.json': JSON.stringify(event) });
    t.equal((await run(['webhooks', 'create', '--name', 'pay', '--provider', 'STRIPE'])).code, 0);
    t.equal((await run(['flow', 'publish', 'paid.yaml'])).code, 0);
    const send = (...extra: string[]) =>
      run(['webhooks', 'send', 'pay', '--payload', 'event.json', '--json', ...extra]);
    const ids: string[] = [];
    for (let i = 0; i < 2; i++) {
      const sent = await send();
      t.equal(sent.code, 0, sent.stderr);
      const d = JSON.parse(sent.stdout) as { eventId: string; startedInstanceIds: string[] };
      t.match(d.eventId, /^evt_[0-9a-f]{24}$/, 'a fresh event id');
      t.equal(d.startedInstanceIds.length, 1);
      ids.push(d.eventId);
    }
    t.not(ids[0], ids[1]);
    t.equal((await send('--replay')).code, 0, 'the file as it is: its own id, new to the daemon');
    const dup = await send('--replay');
    t.equal(dup.code, 1);
    t.match(JSON.parse(dup.stdout), {
      eventId: 'evt_fixture',
      startedInstanceIds: [],
      reason: /^duplicate: event evt_fixture/,
    });
  });

  await t.test('wfx webhooks listen: each delivery as it arrives, until Ctrl-C (exit 0)', async (t) => {
    // The flow of the first test, under a processId of its own: a processId belongs to one organization.
    const { cwd, run, key } = await organization(t, {
      'on-push.yaml': FLOW.replace('3c4d5e6f-7081-4a92-8b3c-4d5e6f708192', '5e6f7081-92a3-4b4c-8d5e-6f7081920314'),
      'push.json': '{"ref":"refs/heads/main"}',
    });
    t.equal((await run(['webhooks', 'create', '--name', 'repo', '--provider', 'GITHUB'])).code, 0);
    t.equal((await run(['flow', 'publish', 'on-push.yaml'])).code, 0);
    const child = spawnWfx(t, ['--url', url, '--api-key', key, 'webhooks', 'listen', 'repo', '--json'], { cwd });
    const exited = once(child, 'exit');
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
    // The listener may not be connected yet when the first send arrives: send until it shows one.
    await eventually('the listener shows a delivery', async () => {
      await run(['webhooks', 'send', 'repo', '--payload', 'push.json', '--event', 'push']);
      return out.includes('\n');
    });
    const first = JSON.parse(out.split('\n')[0]!) as Record<string, unknown>;
    t.match(first, { signatureOk: true, eventType: 'push', startedInstanceIds: [String], reason: null });
    t.equal((await run(['webhooks', 'send', 'repo', '--payload', 'push.json', '--event', 'issues'])).code, 1);
    const refused = await eventually('the refused one too', async () =>
      out.split('\n').find((l) => l.includes('"eventType":"issues"')),
    );
    t.match(JSON.parse(refused), {
      eventType: 'issues',
      startedInstanceIds: [],
      reason: /no flow/,
    });
    child.kill('SIGINT');
    t.equal((await exited)[0], 0, 'Ctrl-C stops it, exit 0');
  });
});
