import t from 'tap';
import { startDaemon, wfxIn } from '../helpers/cli.js';
import { eventually } from '../helpers/eventually.js';

const FLOW = `processId: 3c4d5e6f-7081-4a92-8b3c-4d5e6f708192
name: On push
triggers:
  - { type: webhook, webhook: repo, eventType: push }
nodes:
  start: { type: startEvent, next: done }
  done: { type: endEvent }
`;

t.test('wfx webhooks: create, send signed as the provider would, read the deliveries', async (t) => {
  const cwd = t.testdir({ 'on-push.yaml': FLOW, 'push.json': '{"ref":"refs/heads/main"}' });
  await startDaemon(t, { cwd });
  const created = await wfxIn(['webhooks', 'create', '--name', 'repo', '--provider', 'GITHUB', '--json'], { cwd });
  t.equal(created.code, 0);
  t.match(JSON.parse(created.stdout), {
    name: 'repo',
    provider: 'GITHUB',
    environmentMode: 'SHARED',
    endpoints: [{ environment: 'ALL', url: /\/webhook\/receive\//, secret: /^whsec_/ }],
  });
  t.equal((await wfxIn(['flow', 'publish', 'on-push.yaml'], { cwd })).code, 0);
  const sent = await wfxIn(['webhooks', 'send', 'repo', '--payload', 'push.json', '--event', 'push'], { cwd });
  t.equal(sent.code, 0, sent.stderr);
  t.match(sent.stdout, /delivered to ALL endpoint: 200 \{"received":true\}/);
  // Processing is asynchronous: read the log until the delivery is processed.
  const items = await eventually('the delivery is processed', async () => {
    const seen = JSON.parse((await wfxIn(['webhooks', 'deliveries', 'repo', '--json'], { cwd })).stdout) as Array<{
      signatureOk?: boolean;
      startedInstanceIds?: string[];
      pending?: boolean;
    }>;
    return seen.length > 0 && !seen[0]!.pending && seen;
  });
  t.match(
    items[0],
    { signatureOk: true, eventType: 'push', startedInstanceIds: [String] },
    'signed like GitHub, verified, the flow started',
  );
  const table = await wfxIn(['webhooks', 'deliveries', 'repo'], { cwd });
  t.match(table.stdout, /RECEIVED\s+ENV\s+EVENT\s+SIGNATURE\s+STARTED/);
  t.notMatch((await wfxIn(['webhooks', 'list'], { cwd })).stdout, /whsec_/, 'no secret in the list');
});

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

t.test('wfx email-connections: the password comes on stdin and is never shown', async (t) => {
  const cwd = t.testdir();
  await startDaemon(t, { cwd });
  const created = await wfxIn(
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
    { cwd, stdin: 's3cret-pass\n' },
  );
  t.equal(created.code, 0, created.stderr);
  t.match(created.stdout, /email connection support added \(STARTTLS\)/);
  const list = await wfxIn(['email-connections', 'list', '--json'], { cwd });
  t.match(JSON.parse(list.stdout), [{ name: 'support', host: 'imap.example.com', port: 143, security: 'STARTTLS' }]);
  t.notMatch(list.stdout, /s3cret/);
  const noStdin = await wfxIn(['email-connections', 'create', '--name', 'x', '--host', 'h', '--user', 'u'], { cwd });
  t.equal(noStdin.code, 2, 'the password is never taken on the command line');
});
