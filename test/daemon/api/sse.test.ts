import type { AddressInfo } from 'node:net';
import t from 'tap';
import { apiHarness, type ApiHarness } from '../../helpers/api.js';
import { eventually } from '../../helpers/eventually.js';
import { readSse, type SseEvent } from '../../helpers/sse.js';
import { eventView } from '../../../src/daemon/api/routes/meta.js';

const FLOW = `processId: AUTO
name: Wait
nodes:
  start: { type: startEvent, next: ask }
  ask: { type: inputNode, inputType: textbox, next: after }
  after: { type: setVariable, variables: { done: true }, next: done }
  done: { type: endEvent }
`;

async function listening(_t: unknown, h: ApiHarness): Promise<string> {
  await h.app.listen({ host: '127.0.0.1', port: 0 });
  return `http://127.0.0.1:${(h.app.server.address() as AddressInfo).port}`;
}

t.test('logs: every entry so far, then live ones, then event: end and the stream closes', async (t) => {
  const h = await apiHarness(t);
  const base = await listening(t, h);
  const key = await h.key('operator', 'default');
  const pid = await h.publish(FLOW);
  const inst = await h.engine.start({ processId: pid, organization: 'default' });
  const res = await fetch(`${base}/process/instance/${inst.processInstanceId}/logs`, {
    headers: { 'x-api-key': key.apiKey },
  });
  t.equal(res.status, 200);
  t.match(res.headers.get('content-type'), /text\/event-stream/);
  const events: SseEvent[] = [];
  for await (const ev of readSse(res)) {
    if (ev.comment !== undefined) continue;
    events.push(ev);
    if (ev.data && JSON.parse(ev.data).message === 'waiting for input') {
      // Answer once the stream has shown the wait: the rest must arrive live.
      await h.call(key, {
        method: 'POST',
        url: '/process/task',
        payload: {
          processInstanceId: inst.processInstanceId,
          nodeId: 'ask',
          action: 'COMPLETE',
          data: { inputValue: 'ok' },
        },
      });
    }
  }
  const logs = events.filter((e) => e.data !== undefined && e.event === undefined);
  t.same(
    logs.map((e) => Number(e.id)),
    logs.map((_, i) => i + 1),
    'ids number the entries from 1',
  );
  t.match(JSON.parse(logs[0]!.data!), {
    nodeType: 'process',
    message: /execution started/,
    level: 'INFO',
    timestamp: String,
  });
  t.match(JSON.parse(logs.at(-1)!.data!), { message: 'execution completed', variables: { done: true } });
  t.match(events.at(-1), { event: 'end' }, 'the last event is end');
  t.equal(h.app.streams.subscriberCount, 0, 'the finished stream left no listener');
});

t.test('Last-Event-ID resumes after the last entry seen; a finished execution replays and ends', async (t) => {
  const h = await apiHarness(t);
  const base = await listening(t, h);
  const key = await h.key('viewer', 'default');
  const pid = await h.publish(FLOW);
  const inst = await h.engine.start({ processId: pid, organization: 'default' });
  await h.engine.submitTask({
    organization: 'default',
    processInstanceId: inst.processInstanceId,
    nodeId: 'ask',
    action: 'COMPLETE',
    data: { inputValue: 'x' },
  });
  await h.archived(inst.processInstanceId);
  const read = async (headers: Record<string, string>) => {
    const res = await fetch(`${base}/process/instance/${inst.processInstanceId}/logs`, {
      headers: { 'x-api-key': key.apiKey, ...headers },
    });
    const out: SseEvent[] = [];
    for await (const ev of readSse(res)) if (ev.comment === undefined) out.push(ev);
    return out;
  };
  const all = await read({});
  const total = all.filter((e) => e.data !== undefined && e.event === undefined).length;
  t.ok(total >= 8, `${total} entries replayed from history`);
  const resumed = await read({ 'last-event-id': '5' });
  t.same(
    resumed.filter((e) => e.data !== undefined && e.event === undefined).map((e) => Number(e.id)),
    Array.from({ length: total - 5 }, (_, i) => i + 6),
  );
  t.equal(resumed.at(-1)!.event, 'end');
});

t.test('heartbeat comments keep an idle stream alive', async (t) => {
  const h = await apiHarness(t, { heartbeatSeconds: 0.05 });
  const base = await listening(t, h);
  const key = await h.key('viewer', 'default');
  const inst = await h.engine.start({ processId: await h.publish(FLOW), organization: 'default' });
  const ac = new AbortController();
  const res = await fetch(`${base}/process/instance/${inst.processInstanceId}/logs`, {
    headers: { 'x-api-key': key.apiKey },
    signal: ac.signal,
  });
  let beats = 0;
  for await (const ev of readSse(res)) {
    if (ev.comment === 'heartbeat' && ++beats === 2) break;
  }
  ac.abort();
  t.equal(beats, 2);
});

t.test('many clients connecting and dropping leave no listener behind', async (t) => {
  const h = await apiHarness(t);
  const base = await listening(t, h);
  const key = await h.key('viewer', 'default');
  const inst = await h.engine.start({ processId: await h.publish(FLOW), organization: 'default' });
  for (let round = 0; round < 5; round++) {
    await Promise.all(
      Array.from({ length: 10 }, async () => {
        const ac = new AbortController();
        const url = round % 2 ? `${base}/events` : `${base}/process/instance/${inst.processInstanceId}/logs`;
        const res = await fetch(url, { headers: { 'x-api-key': key.apiKey }, signal: ac.signal });
        for await (const _ of readSse(res)) break; // first event, then go away
        ac.abort();
      }),
    );
  }
  // The server learns of each disconnect asynchronously: look until the count drops.
  await eventually('every subscriber is gone', () => h.app.streams.subscriberCount === 0);
  t.equal(h.app.streams.subscriberCount, 0, '50 clients came and went');
});

t.test("GET /events streams the lifecycle events of the caller's organization only", async (t) => {
  const h = await apiHarness(t);
  const base = await listening(t, h);
  const acme = await h.key('viewer', 'acme');
  const acmeFlow = await h.publish(FLOW, { organization: 'acme' });
  const otherFlow = await h.publish(FLOW, { organization: 'globex' });
  const ac = new AbortController();
  const res = await fetch(`${base}/events`, { headers: { 'x-api-key': acme.apiKey }, signal: ac.signal });
  const seen: Array<{ type: string; organization: string; processId: string }> = [];
  const it = readSse(res);
  await it.next(); // connected
  await h.engine.start({ processId: otherFlow, organization: 'globex' });
  const mine = await h.engine.start({ processId: acmeFlow, organization: 'acme' });
  for await (const ev of it) {
    if (!ev.data) continue;
    seen.push(JSON.parse(ev.data));
    if (ev.event === 'NODE_WAITING') break;
  }
  ac.abort();
  t.ok(
    seen.every((e) => e.organization === 'acme'),
    'nothing of globex',
  );
  t.match(
    seen[0],
    { type: 'PROCESS_STARTED', processId: acmeFlow, stateCd: 0, state: 'RUNNING' },
    'state beside stateCd',
  );
  t.notOk(
    seen.some((e) => e.type.startsWith('NODE_') && 'state' in e),
    'a node event has no execution state',
  );
  t.ok(seen.some((e) => (e as unknown as { processInstanceId: string }).processInstanceId === mine.processInstanceId));
});

t.test(
  'a stream whose API key is revoked, suspended or expires sends nothing more: an error event, then it ends',
  async (t) => {
    const h = await apiHarness(t);
    const base = await listening(t, h);
    const flow = await h.publish(FLOW, { organization: 'acme' });
    const revoke = (keyId: string, status: 'REVOKED' | 'SUSPENDED') =>
      h.store.commit({ type: 'apiKey.statusChanged', keyId, status, at: h.clock.now().toISOString() });

    // GET /events: the key revoked, then an execution starts.
    const watcher = await h.key('viewer', 'acme');
    const events = readSse(await fetch(`${base}/events`, { headers: { 'x-api-key': watcher.apiKey } }));
    await events.next(); // connected
    await revoke(watcher.keyId, 'REVOKED');
    await h.engine.start({ processId: flow, organization: 'acme' });
    const after: SseEvent[] = [];
    for await (const ev of events) if (ev.comment === undefined) after.push(ev);
    t.equal(after.length, 1, 'one event, then the stream ended');
    t.match(after[0], { event: 'error' });
    t.match(JSON.parse(after[0]!.data!), { error: 'UNAUTHORIZED', message: /revoked/ });

    // A log stream: the key suspended while the execution waits, then the task answered.
    const reader = await h.key('viewer', 'acme');
    const inst = await h.engine.start({ processId: flow, organization: 'acme' });
    const logs = readSse(
      await fetch(`${base}/process/instance/${inst.processInstanceId}/logs`, {
        headers: { 'x-api-key': reader.apiKey },
      }),
    );
    const seen: SseEvent[] = [];
    // Read by hand: leaving a for-await loop would close the stream.
    for (let next = await logs.next(); !next.done; next = await logs.next()) {
      if (next.value.comment !== undefined) continue;
      seen.push(next.value);
      if (next.value.data && JSON.parse(next.value.data).message === 'waiting for input') break;
    }
    const before = seen.length;
    await revoke(reader.keyId, 'SUSPENDED');
    await h.engine.submitTask({
      organization: 'acme',
      processInstanceId: inst.processInstanceId,
      nodeId: 'ask',
      action: 'COMPLETE',
      data: { inputValue: 'x' },
    });
    for await (const ev of logs) if (ev.comment === undefined) seen.push(ev);
    t.equal(seen.length, before + 1, 'no entry after the suspension');
    t.match(seen.at(-1), { event: 'error' });
    t.match(JSON.parse(seen.at(-1)!.data!), { error: 'UNAUTHORIZED', message: /suspended/ });

    // An expiry reached while a stream is idle: its next heartbeat ends it.
    const expiring = await h.key('viewer', 'acme', {
      expiresAt: new Date(h.clock.now().getTime() + 60_000).toISOString(),
    });
    const idle = readSse(await fetch(`${base}/events`, { headers: { 'x-api-key': expiring.apiKey } }));
    await idle.next(); // connected
    h.clock.advance(120_000);
    await h.engine.start({ processId: flow, organization: 'acme' });
    const last: SseEvent[] = [];
    for await (const ev of idle) if (ev.comment === undefined) last.push(ev);
    t.match(last, [{ event: 'error' }]);
    t.match(JSON.parse(last[0]!.data!), { message: /expired/ });
    t.equal(h.app.streams.subscriberCount, 0, 'the ended streams left no listener');
  },
);

t.test('eventView: an execution event names its state beside stateCd, as the rest of the API does', async (t) => {
  const base = { processInstanceId: 'i', processId: 'p', organization: 'o', timestamp: 't' };
  t.same(eventView({ type: 'PROCESS_COMPLETED', ...base, stateCd: 1 }), {
    type: 'PROCESS_COMPLETED',
    ...base,
    stateCd: 1,
    state: 'COMPLETED',
  });
  t.match(eventView({ type: 'PROCESS_FAILED', ...base, stateCd: 2 }), { state: 'FAILED' });
  t.match(eventView({ type: 'PROCESS_CANCELLED', ...base, stateCd: 3 }), { state: 'CANCELLED' });
  const node = { type: 'NODE_WAITING' as const, ...base, nodeId: 'ask', statusCd: 1 };
  t.same(eventView(node), node, 'a node event as it is');
});

t.test('logs: an execution handed over to another daemon ends its stream without end', async (t) => {
  const h = await apiHarness(t);
  const base = await listening(t, h);
  const key = await h.key('operator', 'default');
  const pid = await h.publish(FLOW);
  const moving = await h.engine.start({ processId: pid, organization: 'default' });
  const staying = await h.engine.start({ processId: pid, organization: 'default' });
  const open = (id: string) => fetch(`${base}/process/instance/${id}/logs`, { headers: { 'x-api-key': key.apiKey } });
  const [moved, kept] = await Promise.all([open(moving.processInstanceId), open(staying.processInstanceId)]);
  const events: SseEvent[] = [];
  let perStream = 0;
  for await (const ev of readSse(moved)) {
    if (ev.comment !== undefined) continue;
    events.push(ev);
    // Once the stream has shown the wait, its execution leaves with its partition (Engine.handOver).
    if (ev.data && JSON.parse(ev.data).message === 'waiting for input') {
      await eventually(
        'both streams listen',
        () => h.app.streams.subscriberCount % 2 === 0 && h.app.streams.subscriberCount > 0,
      );
      perStream = h.app.streams.subscriberCount / 2;
      h.engine.emit('handedOver', (id) => id === moving.processInstanceId);
    }
  }
  t.notOk(
    events.some((e) => e.event === 'end'),
    'no end: the client reconnects with Last-Event-ID, to the new holder',
  );
  t.ok(perStream > 0);
  await eventually(
    'only the stream of the execution that stayed is open',
    () => h.app.streams.subscriberCount === perStream,
  );
  await kept.body?.cancel();
  await eventually('every subscriber is gone', () => h.app.streams.subscriberCount === 0);
});
