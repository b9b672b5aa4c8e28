import '../setup/fixtures.js'; // fixtures under the OS temp dir (see there)
import t from 'tap';
import { signDelivery } from '../../src/shared/webhooks/providers.js';
import { adminClient, startDaemon, wfxIn } from '../helpers/cli.js';
import { eventually } from '../helpers/eventually.js';

const SECRET = 'secret-of-repo';
const FLOW = `processId: 00000000-0000-4000-8000-00000000c007
name: On push
triggers:
  - { type: webhook, webhook: repo, eventType: push }
nodes:
  start: { type: startEvent, next: done }
  done: { type: endEvent }
`;

interface Delivery {
  eventId?: string | null;
  reason?: string | null;
  startedInstanceIds?: string[];
  pending?: boolean;
}

t.test(
  'GitHub: a delivery replayed byte for byte after 1,001 others, and after a restart, starts nothing',
  async (t) => {
    const cwd = t.testdir({ 'push.yaml': FLOW });
    let info = await startDaemon(t, { cwd });
    const created = await wfxIn(
      ['webhooks', 'create', '--name', 'repo', '--provider', 'GITHUB', '--secret', SECRET, '--json'],
      { cwd },
    );
    t.equal(created.code, 0, created.stderr);
    const path = new URL(
      (JSON.parse(created.stdout) as { endpoints: Array<{ url: string }> }).endpoints[0]!.url,
      info.url,
    ).pathname;
    t.equal((await wfxIn(['flow', 'publish', 'push.yaml'], { cwd })).code, 0);

    const signed = (body: string, eventId: string, eventType: string) => ({
      body,
      headers: signDelivery({ provider: 'GITHUB', authType: 'HMAC' }, SECRET, Buffer.from(body), new Date(), {
        eventId,
        eventType,
      }),
    });
    const send = async (d: { body: string; headers: Record<string, string> }) => {
      const res = await fetch(`${info.url}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...d.headers },
        body: d.body,
      });
      await res.arrayBuffer();
      if (res.status !== 200) throw new Error(`the delivery was answered ${res.status}`);
    };
    /** The newest delivery once it is processed and carries `eventId` (deliveries are processed in order). */
    const processed = async (eventId: string): Promise<Delivery> => {
      const client = await adminClient(cwd, info.url);
      return eventually(`delivery ${eventId} is processed`, async () => {
        const items = (await client.webhooks.deliveries('repo')).items as readonly Delivery[];
        return items.length > 0 && !items.some((d) => d.pending) && items[0]!.eventId === eventId && items[0]!;
      });
    };

    const d0 = signed('{"ref":"refs/heads/main","after":"c0ffee"}', 'delivery-0', 'push');
    await send(d0);
    t.equal((await processed('delivery-0')).startedInstanceIds?.length, 1, 'the first delivery starts the flow');
    // Two ids each (the delivery id and the body hash): more than the 2,000 the daemon once kept.
    for (let i = 1; i <= 1001; i++) await send(signed(`{"zen":"ping ${i}"}`, `ping-${i}`, 'ping'));
    await processed('ping-1001');

    await send(d0);
    t.match(
      await processed('delivery-0'),
      { startedInstanceIds: [], reason: /duplicate/ },
      'replayed after 1,001 deliveries: a duplicate',
    );

    t.equal((await wfxIn(['daemon', 'stop'], { cwd })).code, 0);
    info = await startDaemon(t, { cwd });
    await send(d0);
    t.match(
      await processed('delivery-0'),
      { startedInstanceIds: [], reason: /duplicate/ },
      'replayed after a restart: a duplicate',
    );
  },
);
