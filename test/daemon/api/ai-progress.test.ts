import type { AddressInfo } from 'node:net';
import t from 'tap';
import { apiHarness } from '../../helpers/api.js';
import { eventually } from '../../helpers/eventually.js';
import { FakeAiRunner, saveProvider } from '../../helpers/fake-ai.js';
import { readSse, type SseEvent } from '../../helpers/sse.js';

const FLOW = `processId: AUTO
name: Ask
nodes:
  start: { type: startEvent, next: ask }
  ask: { type: aiTask, prompt: "Say hello", next: done }
  done: { type: endEvent }
`;

t.test('a log stream shows the answer growing as progress events without ids; the resource has usage', async (t) => {
  let open!: () => void;
  const held = new Promise<void>((resolve) => (open = resolve));
  const ai = new FakeAiRunner(() => ({ gate: held, text: 'Hello, world', deltas: ['Hel', 'lo, ', 'world'] }));
  const h = await apiHarness(t, { engine: { ai } });
  await saveProvider(h.store, 'default');
  await h.app.listen({ host: '127.0.0.1', port: 0 });
  const base = `http://127.0.0.1:${(h.app.server.address() as AddressInfo).port}`;
  const key = await h.key('viewer', 'default');
  const inst = await h.engine.start({ processId: await h.publish(FLOW), organization: 'default' });
  const res = await fetch(`${base}/process/instance/${inst.processInstanceId}/logs?follow=true`, {
    headers: { 'x-api-key': key.apiKey },
  });
  const events: SseEvent[] = [];
  for await (const ev of readSse(res)) {
    if (ev.comment !== undefined || ev.data === undefined) continue;
    events.push(ev);
    const entry = ev.event === undefined && ev.data ? JSON.parse(ev.data) : null;
    // The model answers once the stream shows its node started: the progress must arrive live.
    if (entry?.nodeId === 'ask' && entry.message === 'started') open();
  }
  const progress = events.filter((e) => e.event === 'progress');
  const nodeInstanceId = (await h.get(inst.processInstanceId)).nodes.n2!.id;
  t.same(
    progress.map((e) => JSON.parse(e.data!)),
    ['Hel', 'lo, ', 'world'].map((delta) => ({ nodeId: 'ask', nodeInstanceId, delta })),
    'each piece, in order',
  );
  t.ok(
    progress.every((e) => e.id === undefined),
    'progress has no event id',
  );
  const logs = events.filter((e) => e.event === undefined);
  t.same(
    logs.map((e) => Number(e.id)),
    logs.map((_, i) => i + 1),
    'log entries keep their ids, 1.. without gaps',
  );
  const lastProgress = events.indexOf(progress.at(-1)!);
  t.ok(
    events.slice(lastProgress).some((e) => e.event === undefined && JSON.parse(e.data!).message === 'completed'),
    'the completion follows the progress',
  );
  t.match(events.at(-1), { event: 'end' });
  await eventually('the stream left no listener', () => h.app.streams.subscriberCount === 0);
  t.equal(h.engine.listenerCount('progress'), 0, 'nor a progress listener on the engine');

  const again = await fetch(`${base}/process/instance/${inst.processInstanceId}/logs`, {
    headers: { 'x-api-key': key.apiKey, 'last-event-id': String(logs.length - 1) },
  });
  const replayed: SseEvent[] = [];
  for await (const ev of readSse(again)) if (ev.data !== undefined) replayed.push(ev);
  t.same(
    replayed.map((e) => e.event ?? Number(e.id)),
    [logs.length, 'end'],
    'Last-Event-ID resumes after log entries; progress is never replayed',
  );

  const resource = await h.call(key, { method: 'GET', url: `/process/instance/${inst.processInstanceId}` });
  t.equal(resource.statusCode, 200);
  t.same(resource.json().usage, { inputTokens: 10, outputTokens: 5, calls: 1 });
  t.match(resource.json().data.ask, { text: 'Hello, world', finishReason: 'stop' });
});
