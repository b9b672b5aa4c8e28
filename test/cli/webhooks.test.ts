import { spawn } from 'node:child_process';
import { once } from 'node:events';
import t from 'tap';
import { killIfAlive, wfx, WFX_BIN } from '../helpers/cli.js';

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
  const started = await wfx(['daemon', 'start', '--port', '0', '--json'], { cwd });
  const info = JSON.parse(started.stdout) as { pid: number };
  t.teardown(async () => {
    await wfx(['daemon', 'stop'], { cwd });
    killIfAlive(info.pid);
  });
  const created = await wfx(['webhooks', 'create', '--name', 'repo', '--provider', 'GITHUB', '--json'], { cwd });
  t.equal(created.code, 0);
  t.match(JSON.parse(created.stdout), { name: 'repo', provider: 'GITHUB', environmentMode: 'SHARED', endpoints: [{ environment: 'ALL', url: /\/webhook\/receive\//, secret: /^whsec_/ }] });
  t.equal((await wfx(['flow', 'publish', 'on-push.yaml'], { cwd })).code, 0);
  const sent = await wfx(['webhooks', 'send', 'repo', '--payload', 'push.json', '--event', 'push'], { cwd });
  t.equal(sent.code, 0, sent.stderr);
  t.match(sent.stdout, /delivered to ALL endpoint: 200 \{"received":true\}/);
  // Processing is asynchronous: read the log until the delivery is processed (bounded).
  let items: Array<{ signatureOk?: boolean; startedInstanceIds?: string[]; pending?: boolean }> = [];
  for (let i = 0; i < 100; i++) {
    items = JSON.parse((await wfx(['webhooks', 'deliveries', 'repo', '--json'], { cwd })).stdout);
    if (items.length > 0 && !items[0]!.pending) break;
  }
  t.match(items[0], { signatureOk: true, eventType: 'push', startedInstanceIds: [String] }, 'signed like GitHub, verified, the flow started');
  const table = await wfx(['webhooks', 'deliveries', 'repo'], { cwd });
  t.match(table.stdout, /RECEIVED\s+ENV\s+EVENT\s+SIGNATURE\s+STARTED/);
  t.notMatch((await wfx(['webhooks', 'list'], { cwd })).stdout, /whsec_/, 'no secret in the list');
});

t.test('wfx webhooks verify: the daemon\'s verifier offline, exit 0 valid, 1 invalid with the reason', async (t) => {
  const cwd = t.testdir({ 'body.txt': 'Hello, World!', 'tampered.txt': 'Hello, World?' });
  const args = ['webhooks', 'verify', '--provider', 'GITHUB', '--secret', "It's a Secret to Everybody", '--header', 'X-Hub-Signature-256: sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17'];
  const ok = await wfx([...args, '--body', 'body.txt'], { cwd });
  t.equal(ok.code, 0);
  t.equal(ok.stdout, 'valid\n');
  const bad = await wfx([...args, '--body', 'tampered.txt'], { cwd });
  t.equal(bad.code, 1);
  t.equal(bad.stdout, 'invalid: no signature matches the secret\n');
  const stale = await wfx(['webhooks', 'verify', '--provider', 'STANDARD', '--secret', 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', '--header', 'webhook-id: msg_p5jXN8AQM9LWM0D4loKWxJek', '--header', 'webhook-timestamp: 1614265330', '--header', 'webhook-signature: v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=', '--body', 'body.txt', '--at', '1614265330'], { cwd });
  t.equal(stale.code, 1, 'a different body than the vector');
  const missing = await wfx(['webhooks', 'verify', '--provider', 'STRIPE', '--secret', 'x', '--body', 'body.txt', '--json'], { cwd });
  t.same(JSON.parse(missing.stdout), { ok: false, reason: 'the Stripe-Signature header is missing' });
});

t.test('wfx email-connections: the password comes on stdin and is never shown', async (t) => {
  const cwd = t.testdir();
  const started = await wfx(['daemon', 'start', '--port', '0', '--json'], { cwd });
  const info = JSON.parse(started.stdout) as { pid: number };
  t.teardown(async () => {
    await wfx(['daemon', 'stop'], { cwd });
    killIfAlive(info.pid);
  });
  const child = spawn(process.execPath, [WFX_BIN, 'email-connections', 'create', '--name', 'support', '--host', 'imap.example.com', '--user', 'me@example.com', '--password-stdin', '--starttls'], { cwd, stdio: ['pipe', 'pipe', 'pipe'] });
  t.teardown(() => killIfAlive(child.pid));
  child.stdin!.end('s3cret-pass\n');
  let out = '';
  child.stdout!.on('data', (d) => (out += d));
  t.equal((await once(child, 'exit'))[0], 0);
  t.match(out, /email connection support added \(STARTTLS\)/);
  const list = await wfx(['email-connections', 'list', '--json'], { cwd });
  t.match(JSON.parse(list.stdout), [{ name: 'support', host: 'imap.example.com', port: 143, security: 'STARTTLS' }]);
  t.notMatch(list.stdout, /s3cret/);
  const noStdin = await wfx(['email-connections', 'create', '--name', 'x', '--host', 'h', '--user', 'u'], { cwd });
  t.equal(noStdin.code, 2, 'the password is never taken on the command line');
});
