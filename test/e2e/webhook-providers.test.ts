import '../setup/fixtures.js'; // fixtures under the OS temp dir (see there)
import t from 'tap';
import { signDelivery, type Scheme } from '../../src/shared/webhooks/providers.js';
import { startDaemon, wfxIn } from '../helpers/cli.js';
import { eventually } from '../helpers/eventually.js';

const CASES = [
  {
    provider: 'GITHUB',
    flags: [],
    body: '{"action":"opened","number":1}',
    eventType: 'pull_request',
    timestamped: false,
  },
  {
    provider: 'STRIPE',
    flags: [],
    body: '{"id":"evt_9","type":"invoice.paid"}',
    eventType: 'invoice.paid',
    timestamped: true,
  },
  {
    provider: 'SLACK',
    flags: [],
    body: '{"type":"event_callback","event_id":"Ev9","event":{"type":"app_mention"}}',
    eventType: 'app_mention',
    timestamped: true,
  },
  {
    provider: 'STANDARD',
    flags: [],
    body: '{"type":"user.created","data":{"id":7}}',
    eventType: 'user.created',
    timestamped: true,
  },
  {
    provider: 'CUSTOM',
    flags: [
      '--signature-header',
      'X-Acme-Signature',
      '--algorithm',
      'sha256',
      '--encoding',
      'hex',
      '--prefix',
      'sha256=',
      '--event-type-path',
      'kind',
      '--event-id-path',
      'id',
    ],
    body: '{"id":"a-9","kind":"order.paid"}',
    eventType: 'order.paid',
    timestamped: false,
  },
] as const;

t.test(
  'every provider against a real daemon: valid, tampered, stale, replayed and filtered deliveries, read back from the delivery log',
  async (t) => {
    const files: Record<string, string> = {};
    for (const c of CASES) {
      const name = c.provider.toLowerCase();
      files[`${name}.yaml`] = `processId: 00000000-0000-4000-8000-0000000000${String(CASES.indexOf(c)).padStart(2, '0')}
name: On ${name}
triggers:
  - { type: webhook, webhook: ${name}, eventType: ${c.eventType} }
nodes:
  start: { type: startEvent, next: done }
  done: { type: endEvent }
`;
    }
    const cwd = t.testdir(files);
    const info = await startDaemon(t, { cwd });
    const run = (args: string[]) => wfxIn(args, { cwd });

    for (const c of CASES) {
      const name = c.provider.toLowerCase();
      const secret = c.provider === 'STANDARD' ? 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw' : `secret-of-${name}`;
      const created = await run([
        'webhooks',
        'create',
        '--name',
        name,
        '--provider',
        c.provider,
        '--secret',
        secret,
        ...c.flags,
        '--json',
      ]);
      t.equal(created.code, 0, created.stderr);
      const url = (JSON.parse(created.stdout) as { endpoints: Array<{ url: string }> }).endpoints[0]!.url;
      t.equal((await run(['flow', 'publish', `${name}.yaml`])).code, 0);
      const scheme = {
        provider: c.provider,
        authType: 'HMAC',
        ...(c.provider === 'CUSTOM' && {
          custom: {
            signatureHeader: 'X-Acme-Signature',
            algorithm: 'sha256',
            encoding: 'hex',
            prefix: 'sha256=',
            eventTypePath: 'kind',
            eventIdPath: 'id',
          },
        }),
      } as Scheme;
      const send = (body: string, headers: Record<string, string>) =>
        fetch(url.startsWith('http') ? url : `${info.url}${url}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', ...headers },
          body,
        }).then((r) => r.status);
      const sign = (body: string, at: Date, eventId: string, eventType: string = c.eventType) =>
        signDelivery(scheme, secret, Buffer.from(body), at, { eventType, eventId });

      const valid = sign(c.body, new Date(), `${name}-1`);
      const sent = [
        await send(c.body, valid), // started
        await send(c.body, valid), // replayed: the same event id
        await send(`${c.body} `, sign(c.body, new Date(), `${name}-2`)), // tampered
      ];
      if (c.timestamped) sent.push(await send(c.body, sign(c.body, new Date(Date.now() - 6 * 60_000), `${name}-3`))); // stale
      const other = '{"action":"closed","number":2}'; // another body: GitHub's replay check remembers bodies
      if (c.provider === 'GITHUB') sent.push(await send(other, sign(other, new Date(), `${name}-4`, 'issues'))); // filtered out
      t.ok(
        sent.every((s) => s === 200),
        `${c.provider}: every delivery answered 200, whatever happened`,
      );

      const log = await eventually(`${c.provider}: every delivery is processed`, async () => {
        const seen = JSON.parse((await run(['webhooks', 'deliveries', name, '--json'])).stdout) as Array<{
          signatureOk: boolean;
          reason: string | null;
          startedInstanceIds: string[];
          pending?: boolean;
        }>;
        return seen.length === sent.length && seen.every((d) => !d.pending) && seen;
      });
      const reasons = log.map((d) => d.reason ?? 'started');
      t.equal(
        log.filter((d) => d.startedInstanceIds.length > 0).length,
        1,
        `${c.provider}: exactly one delivery started the flow`,
      );
      t.ok(
        reasons.some((r) => /duplicate/.test(r)),
        `${c.provider}: the replay is a duplicate`,
      );
      t.ok(
        reasons.some((r) => /signature refused: no signature matches/.test(r)),
        `${c.provider}: the tampered body is refused`,
      );
      if (c.timestamped)
        t.ok(
          reasons.some((r) => /tolerance/.test(r)),
          `${c.provider}: the stale one is refused`,
        );
      if (c.provider === 'GITHUB')
        t.ok(
          reasons.some((r) => /takes event issues/.test(r)),
          'GITHUB: an event the trigger filters out starts nothing',
        );
    }
  },
);
