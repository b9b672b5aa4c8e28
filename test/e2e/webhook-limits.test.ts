import '../setup/fixtures.js'; // fixtures under the OS temp dir (see there)
import { createHash, randomBytes } from 'node:crypto';
import { connect } from 'node:net';
import { join } from 'node:path';
import t from 'tap';
import type { WfxClient } from '../../src/client/client.js';
import type { DeliveryRecord, DeliveryView } from '../../src/shared/api/index.js';
import { signDelivery, type Scheme } from '../../src/shared/webhooks/providers.js';
import { adminClient, startDaemon, wfxIn } from '../helpers/cli.js';
import { anyFileHolds, writtenBytes } from '../helpers/disk.js';
import { eventually } from '../helpers/eventually.js';

const flowFor = (name: string, n: number) => `processId: 00000000-0000-4000-8000-0000000005${String(n).padStart(2, '0')}
name: On ${name}
triggers:
  - { type: webhook, webhook: ${name} }
nodes:
  start: { type: startEvent, next: done }
  done: { type: endEvent }
`;

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/** Registers `name` with the CLI and answers its endpoint's URL on `base` and its secret. */
async function register(cwd: string, base: string, args: string[]): Promise<{ url: string; secret: string }> {
  const res = await wfxIn(['webhooks', 'create', ...args, '--json'], { cwd });
  if (res.code !== 0) throw new Error(res.stderr);
  const ep = (JSON.parse(res.stdout) as { endpoints: Array<{ url: string; secret: string }> }).endpoints[0]!;
  return { url: `${base}${new URL(ep.url).pathname}`, secret: ep.secret };
}

async function post(url: string, body: Buffer | string, headers: Record<string, string>): Promise<string> {
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });
  const answer = (await res.json()) as { deliveryId?: string };
  if (res.status !== 200 || typeof answer.deliveryId !== 'string') throw new Error(`answered ${res.status}`);
  return answer.deliveryId;
}

/** The record of delivery `id` once it is in the log (processed or refused). */
function recordOf(client: WfxClient, name: string, id: string): Promise<DeliveryRecord> {
  return eventually(`delivery ${id} is in the log`, async () => {
    const found = (await client.webhooks.deliveries(name)).items.find((d: DeliveryView) => d.deliveryId === id);
    return found && !('pending' in found) && found;
  });
}

const providers = ['GITHUB', 'STRIPE', 'SLACK', 'STANDARD', 'CUSTOM'] as const;

/**
 * One daemon for the tests that never stop it, in a directory of the providers' flows: each
 * registers webhooks of names of its own and reads their deliveries only.
 */
const shared = await (async () => {
  const cwd = t.testdir(Object.fromEntries(providers.map((p, i) => [`${p}.yaml`, flowFor(p.toLowerCase(), i)])));
  const info = await startDaemon(t, { cwd });
  return { cwd, info, client: await adminClient(cwd, info.url) };
})();

t.test(
  'a sender without the secret cannot fill the disk: 16 concurrent 500 KB bad-signature posts write under 1 MiB, each logged with size and hash',
  async (t) => {
    const cwd = t.testdir();
    const dataDir = join(cwd, '.wfx');
    let info = await startDaemon(t, { cwd });
    const gh = await register(cwd, info.url, ['--name', 'repo', '--provider', 'GITHUB']);
    const before = writtenBytes(dataDir);
    const bodies = Array.from({ length: 16 }, () =>
      Buffer.from(JSON.stringify({ junk: randomBytes(375_000).toString('base64') }).padEnd(512_000, ' ')),
    );
    const bad = { 'x-hub-signature-256': `sha256=${'0'.repeat(64)}`, 'x-github-event': 'push' };
    const ids = await Promise.all(bodies.map((b) => post(gh.url, b, bad)));
    t.equal(new Set(ids).size, 16, 'each answered 200 with its delivery id');
    // Measured while the daemon runs: an answered delivery is on disk if it is anywhere, and a
    // checkpoint at the stop would drop a journal that held the bodies.
    const running = writtenBytes(dataDir) - before;
    t.ok(running < 1024 * 1024, `the data directory grew by ${running} bytes for 8 MB refused`);
    const noBody = (when: string) => {
      t.notOk(anyFileHolds(dataDir, bodies[0]!.subarray(0, 3000).toString('base64')), `no body in base64 ${when}`);
      t.notOk(anyFileHolds(dataDir, bodies[0]!.subarray(100, 1100).toString('latin1')), `nor as it came ${when}`);
    };
    noBody('while running');

    // Stopped (the refused deliveries written, a final snapshot), then back: the log survived.
    t.equal((await wfxIn(['daemon', 'stop'], { cwd })).code, 0);
    const grew = writtenBytes(dataDir) - before;
    t.ok(grew < 1024 * 1024, `and by ${grew} bytes once stopped (their records written, a snapshot)`);
    noBody('once stopped');

    info = await startDaemon(t, { cwd });
    const client = await adminClient(cwd, info.url);
    const log = await client.webhooks.deliveries('repo');
    t.equal(log.refused, 16);
    for (const [i, id] of ids.entries()) {
      const d = log.items.find((x) => x.deliveryId === id) as DeliveryRecord | undefined;
      t.match(
        d,
        {
          signatureOk: false,
          refused: 'SIGNATURE',
          eventType: 'push',
          startedInstanceIds: [],
          body: {
            bytes: 512_000,
            sha256: `sha256:${createHash('sha256').update(bodies[i]!).digest('hex')}`,
            preview: /^\{"junk":"/,
            truncated: true,
          },
        },
        `refusal ${i} is in the log with its size and hash`,
      );
      t.ok(Buffer.byteLength(d?.body?.preview ?? '') <= 256, 'a short preview');
    }
  },
);

t.test(
  'what refused deliveries cost the disk comes back: the log keeps the newest, a checkpoint drops the rest',
  async (t) => {
    const cwd = t.testdir();
    const dataDir = join(cwd, '.wfx');
    const first = await startDaemon(t, { cwd });
    const gh = await register(cwd, first.url, ['--name', 'repo', '--provider', 'GITHUB']);
    t.equal((await wfxIn(['daemon', 'stop'], { cwd })).code, 0);
    const before = writtenBytes(dataDir);
    const again = await startDaemon(t, { cwd });
    const url = `${again.url}${new URL(gh.url).pathname}`;
    const bad = { 'x-hub-signature-256': `sha256=${'0'.repeat(64)}`, 'x-github-event': 'push' };
    const n = 4000;
    for (let sent = 0; sent < n; sent += 50)
      await Promise.all(Array.from({ length: 50 }, (_, i) => post(url, `{"n":${sent + i}}`, bad)));
    const client = await adminClient(cwd, again.url);
    await eventually('every refusal is written', async () => (await client.webhooks.deliveries('repo')).refused === n);
    const grown = writtenBytes(dataDir) - before;
    // The stop's checkpoint keeps the log's newest (100), and the journal that held the rest goes.
    t.equal((await wfxIn(['daemon', 'stop'], { cwd })).code, 0);
    const kept = writtenBytes(dataDir) - before;
    t.ok(
      kept < 64 * 1024,
      `${n} refused, then checkpointed: ${kept} bytes remain (the newest hundred's; ${grown} while running)`,
    );
    const back = await startDaemon(t, { cwd });
    const log = await (await adminClient(cwd, back.url)).webhooks.deliveries('repo');
    t.equal(log.refused, n, 'the count of refusals is kept');
    t.equal(log.items.length, 100, 'and the newest of them');
  },
);

t.test(
  'on every provider a valid signature with trailing garbage (or upper case, no padding, whitespace) is refused; the exact one starts',
  async (t) => {
    const { cwd, info, client } = shared;
    const customFlags = ['--signature-header', 'X-Sig', '--encoding', 'base64', '--event-id-header', 'X-Id'];
    for (const [i, p] of providers.entries()) {
      const name = p.toLowerCase();
      const secret = p === 'STANDARD' ? 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw' : `secret-of-${name}`;
      const flags = p === 'CUSTOM' ? customFlags : [];
      const ep = await register(cwd, info.url, ['--name', name, '--provider', p, '--secret', secret, ...flags]);
      t.equal((await wfxIn(['flow', 'publish', `${p}.yaml`], { cwd })).code, 0);
      const scheme: Scheme = {
        provider: p,
        authType: 'HMAC',
        ...(p === 'CUSTOM' && {
          custom: { signatureHeader: 'x-sig', algorithm: 'sha256', encoding: 'base64', eventIdHeader: 'x-id' },
        }),
      };
      const body = `{"id":"evt_${i}","type":"ping","event_id":"Ev${i}","event":{"type":"ping"}}`;
      const headers = signDelivery(scheme, secret, Buffer.from(body), new Date(), { eventId: `msg_${i}` });
      const sigHeader = Object.keys(headers).find((h) => /sig/i.test(h))!;
      const sig = headers[sigHeader]!;
      const variants =
        p === 'STANDARD' || p === 'CUSTOM'
          ? [`${sig}AAAA`, `${sig}x`, sig.replace(/=$/, ''), `${sig.slice(0, -8)} ${sig.slice(-7)}`]
          : [
              `${sig}zz`,
              `${sig}00`,
              sig.replace(/[0-9a-f]{64}/, (h) => h.toUpperCase()),
              `${sig.slice(0, -8)} ${sig.slice(-7)}`,
            ];
      for (const spelled of variants) {
        const id = await post(ep.url, body, { ...headers, [sigHeader]: spelled });
        t.match(
          await recordOf(client, name, id),
          { signatureOk: false, refused: 'SIGNATURE', startedInstanceIds: [] },
          `${p}: ${JSON.stringify(spelled.slice(-12))} refused`,
        );
      }
      const exact = await post(ep.url, body, headers);
      t.match(await recordOf(client, name, exact), { signatureOk: true, startedInstanceIds: [String] }, `${p}: exact`);
    }
  },
);

t.test(
  'a replayed Slack form body (a slash command, no event_id) starts nothing, before and after a SIGKILL',
  async (t) => {
    const cwd = t.testdir({ 'slack.yaml': flowFor('slack', 9) });
    let info = await startDaemon(t, { cwd });
    const slack = await register(cwd, info.url, ['--name', 'slack', '--provider', 'SLACK', '--secret', 'slack-secret']);
    t.equal((await wfxIn(['flow', 'publish', 'slack.yaml'], { cwd })).code, 0);
    const path = new URL(slack.url).pathname;
    const body =
      'token=t&team_id=T1&command=%2Fdeploy&text=prod&user_id=U1&response_url=https%3A%2F%2Fhooks.slack.com%2Fx';
    const headers = {
      ...signDelivery({ provider: 'SLACK', authType: 'HMAC' }, 'slack-secret', Buffer.from(body), new Date()),
      'content-type': 'application/x-www-form-urlencoded',
    };
    const first = await post(`${info.url}${path}`, body, headers);
    // Killed as soon as the first was acknowledged: it is journaled, and processed after the restart if not before.
    process.kill(info.pid, 'SIGKILL');
    await eventually('the daemon is gone', () => !alive(info.pid));
    info = await startDaemon(t, { cwd });
    const client = await adminClient(cwd, info.url);
    t.match(await recordOf(client, 'slack', first), { signatureOk: true, startedInstanceIds: [String] }, 'it started');
    for (const when of ['after the restart', 'again']) {
      const replay = await post(`${info.url}${path}`, body, headers);
      t.match(
        await recordOf(client, 'slack', replay),
        { signatureOk: true, refused: 'DUPLICATE', startedInstanceIds: [] },
        `replayed ${when}: a duplicate`,
      );
    }
    t.equal((await wfxIn(['daemon', 'stop'], { cwd })).code, 0);
    info = await startDaemon(t, { cwd });
    const replay = await post(`${info.url}${path}`, body, headers);
    t.match(
      await recordOf(await adminClient(cwd, info.url), 'slack', replay),
      { refused: 'DUPLICATE', startedInstanceIds: [] },
      'and after a graceful restart',
    );
    const started = (await (await adminClient(cwd, info.url)).webhooks.deliveries('slack')).items.filter(
      (d) => 'startedInstanceIds' in d && d.startedInstanceIds.length > 0,
    );
    t.equal(started.length, 1, 'one execution in all');
  },
);

/**
 * Sends a POST to `url` with `headers` and `body` over a raw socket, never ending the body: the
 * answer is read as soon as the daemon gives it (it must not wait for more). Resolves with its
 * status and JSON body.
 */
function answerBeforeTheEnd(url: string, headers: string[], body: Buffer): Promise<{ status: number; body: unknown }> {
  const { hostname, port, pathname } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname);
    let got = Buffer.alloc(0);
    socket.on('error', reject);
    socket.on('data', (d: Buffer) => {
      got = Buffer.concat([got, d]);
      const end = got.indexOf('\r\n\r\n');
      if (end < 0) return;
      const head = got.subarray(0, end).toString('latin1');
      const length = Number(/\r\ncontent-length: *(\d+)/i.exec(head)?.[1] ?? NaN);
      if (got.length < end + 4 + length) return;
      socket.destroy();
      resolve({
        status: Number(head.split(' ')[1]),
        body: JSON.parse(got.subarray(end + 4, end + 4 + length).toString('utf8')),
      });
    });
    socket.write(`POST ${pathname} HTTP/1.1\r\nHost: ${hostname}\r\n${headers.map((h) => `${h}\r\n`).join('')}\r\n`);
    socket.write(body);
  });
}

/** `data` as one chunk of a chunked body. */
const chunk = (data: Buffer) =>
  Buffer.concat([Buffer.from(`${data.length.toString(16)}\r\n`), data, Buffer.from('\r\n')]);

t.test(
  'a body over the registration limit is answered 413 and logged with its size, by length or cut off',
  async (t) => {
    const { cwd, info, client } = shared;
    const ep = await register(cwd, info.url, [
      '--name',
      'small',
      '--provider',
      'STRIPE',
      '--secret',
      'whsec_x1',
      '--max-body-bytes',
      '64KiB',
    ]);
    // Its Content-Length says 100,000 bytes and none is sent: answered at once, without reading.
    const declared = await answerBeforeTheEnd(
      ep.url,
      ['Content-Type: application/json', 'Content-Length: 100000'],
      Buffer.alloc(0),
    );
    t.match(declared, { status: 413, body: { error: 'PAYLOAD_TOO_LARGE' } });
    // No length (chunked), 80 KiB sent and more to come: answered once past the limit.
    const chunked = await answerBeforeTheEnd(
      ep.url,
      ['Content-Type: application/json', 'Transfer-Encoding: chunked'],
      Buffer.concat(Array.from({ length: 5 }, () => chunk(Buffer.alloc(16 * 1024, 'b')))),
    );
    t.match(chunked, { status: 413, body: { error: 'PAYLOAD_TOO_LARGE' } });
    const log = await eventually('both are logged', async () => {
      const items = (await client.webhooks.deliveries('small')).items as DeliveryRecord[];
      return items.length === 2 && items;
    });
    const [cut, byLength] = log as [DeliveryRecord, DeliveryRecord];
    t.match(
      byLength,
      { refused: 'TOO_LARGE', startedInstanceIds: [], body: { bytes: 100_000 } },
      'by its Content-Length',
    );
    t.match(cut, { refused: 'TOO_LARGE', body: { truncated: true } }, 'cut off while read');
    t.ok(cut.body!.bytes > 64 * 1024 && cut.body!.bytes <= 80 * 1024, `cut after ${cut.body!.bytes} bytes`);
    t.equal((await client.webhooks.deliveries('small')).refused, 2);
    t.equal((await fetch(`${info.url}/health`)).status, 200, 'the daemon answers');
  },
);
