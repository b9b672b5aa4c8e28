import t, { type Test } from 'tap';
import { once } from 'node:events';
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { createAiRunner } from '../../../src/daemon/ai/runner.js';
import { NetworkPolicy } from '../../../src/daemon/outbound/network-policy.js';
import type { AiAnswer, AiAttempt, AiCall } from '../../../src/daemon/ai/types.js';
import type { WorkResult } from '../../../src/daemon/outbound/result.js';
import { aiCall, aiProvider, CLASSIFY_SCHEMA, lookupOf } from '../../helpers/ai.js';
import { eventually } from '../../helpers/eventually.js';
import { reply, startOpenAiServer, type OpenAiServer } from '../../helpers/openai-server.js';

// What a tiny model cannot be made to do, scripted: each failure mapped to its code, with the
// number of requests it took counted on the server.

const KEY = 'sk-scripted-5e1d9a7c3b2f4e6a8c0d2f4b6e8a0c1d';
const runner = createAiRunner();
t.teardown(() => runner.close());
const signal = new AbortController().signal;
/** Everything the runner said in every test: the key must appear in none of it. */
const said: unknown[] = [];
t.teardown(() => {
  const text = JSON.stringify(said);
  if (text.includes(KEY)) throw new Error('the API key appears in a result or an attempt');
});

/** A scripted server (no model: a request beyond the script gets 503) with the key required. */
async function scripted(t: Test): Promise<OpenAiServer> {
  const server = await startOpenAiServer({ apiKey: KEY });
  t.teardown(() => server.close());
  return server;
}

const retry3 = { maxAttempts: 3, initialIntervalMs: 1, backoff: 1 };

async function run(
  server: OpenAiServer,
  over: Partial<AiCall> = {},
  options: { signal?: AbortSignal; deltas?: string[] } = {},
): Promise<{ result: WorkResult; attempts: AiAttempt[]; requests: number }> {
  const attempts: AiAttempt[] = [];
  const deltas = options.deltas;
  const result = await runner.run(
    aiCall({ retry: retry3, ...over }),
    lookupOf(aiProvider({ providerId: server.baseUrl, baseUrl: server.baseUrl, apiKey: KEY })),
    {
      signal: options.signal ?? signal,
      onAttempt: (a) => attempts.push(a),
      ...(deltas && { onDelta: (d: string) => deltas.push(d) }),
    },
  );
  said.push(result, attempts);
  return { result, attempts, requests: server.requestCount() };
}

t.test('429 is retried after Retry-After (seconds), capped by maxIntervalMs', async (t) => {
  const server = await scripted(t);
  server.script(reply.rateLimited('0'), reply.rateLimited('3600'), reply.text('hi'));
  // Backoff alone would wait a minute: Retry-After 0 is honoured; 3600 s is capped at 5 ms.
  const { result, attempts, requests } = await run(server, {
    retry: { maxAttempts: 3, initialIntervalMs: 60_000, backoff: 2, maxIntervalMs: 5 },
  });
  t.match(result, { ok: true, value: { text: 'hi' } });
  t.equal(requests, 3);
  t.match(attempts, [
    { attempt: 1, failure: { code: 'AI_RATE_LIMITED' }, next: { why: 'retry', delayMs: 0 } },
    { attempt: 2, failure: { code: 'AI_RATE_LIMITED' }, next: { why: 'retry', delayMs: 5 } },
    { attempt: 3, finishReason: 'stop' },
  ]);
});

t.test('Retry-After as an HTTP date in the past means at once', async (t) => {
  const server = await scripted(t);
  server.script(reply.rateLimited(new Date(0).toUTCString()), reply.text('hi'));
  const { result, attempts } = await run(server, { retry: { maxAttempts: 2, initialIntervalMs: 60_000, backoff: 2 } });
  t.ok(result.ok);
  t.equal(attempts[0]!.next!.delayMs, 0);
});

t.test('429 on every attempt fails with AI_RATE_LIMITED after maxAttempts requests', async (t) => {
  const server = await scripted(t);
  server.script(reply.rateLimited('0'), reply.rateLimited('0'), reply.rateLimited('0'), reply.text('never'));
  const { result, requests, attempts } = await run(server);
  t.match(result, { ok: false, code: 'AI_RATE_LIMITED', attempts: 3 }, 'the tries, for the node instance');
  t.equal(requests, 3);
  t.equal(attempts.at(-1)!.next, undefined);
});

t.test('5xx is retried with backoff; 5xx every time fails with AI_HTTP_<status>', async (t) => {
  const server = await scripted(t);
  server.script(reply.status(500), reply.text('recovered'));
  let r = await run(server, { retry: { maxAttempts: 3, initialIntervalMs: 3, backoff: 2 } });
  t.match(r.result, { ok: true, value: { text: 'recovered' } });
  t.equal(r.requests, 2);
  t.equal(r.attempts[0]!.next!.delayMs, 3);

  server.script(reply.status(503), reply.status(502), reply.status(503));
  r = await run(server, { retry: { maxAttempts: 3, initialIntervalMs: 3, backoff: 2 } });
  t.match(r.result, { ok: false, code: 'AI_HTTP_503' });
  t.equal(r.requests, 5);
  t.same(
    r.attempts.map((a) => a.next?.delayMs),
    [3, 6, undefined],
  );
});

t.test('401 and 403 fail with AI_AUTH at once; another 4xx with AI_HTTP_<status> at once', async (t) => {
  const server = await scripted(t);
  server.script(reply.status(401, `bad key ${KEY}`), reply.status(403), reply.status(404, 'no such model'));
  t.match((await run(server)).result, { ok: false, code: 'AI_AUTH' });
  t.equal(server.requestCount(), 1);
  t.match((await run(server)).result, { ok: false, code: 'AI_AUTH' });
  t.equal(server.requestCount(), 2);
  const r = await run(server);
  t.match(r.result, { ok: false, code: 'AI_HTTP_404' });
  t.equal(r.requests, 3);
});

t.test(
  'finish reason length fails with AI_TRUNCATED, content_filter with AI_CONTENT_FILTER; not retried',
  async (t) => {
    const server = await scripted(t);
    server.script(
      reply.text('cut sho', { finishReason: 'length' }),
      reply.text('', { finishReason: 'content_filter' }),
    );
    const a = await run(server);
    t.match(a.result, { ok: false, code: 'AI_TRUNCATED' });
    t.equal(a.requests, 1);
    const b = await run(server);
    t.match(b.result, { ok: false, code: 'AI_CONTENT_FILTER' });
    t.equal(b.requests, 2);
    t.match(b.attempts, [{ finishReason: 'content_filter', failure: { code: 'AI_CONTENT_FILTER' } }]);
  },
);

t.test('invalid JSON gets a repair request, then a valid answer; usage sums both', async (t) => {
  const server = await scripted(t);
  server.script(
    reply.text('Sure! {"label": "spam"', { usage: { inputTokens: 10, outputTokens: 5 } }),
    reply.text('```json\n{"label":"ham","urgent":true}\n```', { usage: { inputTokens: 20, outputTokens: 8 } }),
  );
  const { result, attempts, requests } = await run(server, { responseFormat: 'json', schema: CLASSIFY_SCHEMA });
  t.equal(requests, 2);
  t.match(result, {
    ok: true,
    value: { data: { label: 'ham', urgent: true }, usage: { inputTokens: 30, outputTokens: 13 } },
  });
  t.match(attempts, [{ failure: { code: 'AI_OUTPUT_INVALID' }, next: { why: 'repair', delayMs: 0 } }, { attempt: 2 }]);
  // The repair request is the conversation, the bad answer, and a message naming the violation.
  const messages = server.requests[1]!.body.messages as { role: string; content: string }[];
  t.same(
    messages.map((m) => m.role),
    ['system', 'user', 'assistant', 'user'],
  );
  t.equal(messages[2]!.content, 'Sure! {"label": "spam"');
  t.match(messages[3]!.content, /not JSON/);
});

t.test('an answer that violates the schema after its repairs fails with AI_OUTPUT_INVALID naming it', async (t) => {
  const server = await scripted(t);
  server.script(reply.text('{"label":"eggs","urgent":true}'), reply.text('{"label":"spam","urgent":"yes"}'));
  const { result, requests } = await run(server, { responseFormat: 'json', schema: CLASSIFY_SCHEMA });
  t.equal(requests, 2);
  t.match(result, { ok: false, code: 'AI_OUTPUT_INVALID' });
  if (!result.ok) t.match(result.message, /\/urgent must be boolean/);

  server.script(reply.text('{"label":"eggs","urgent":true}'));
  const none = await run(server, { responseFormat: 'json', schema: CLASSIFY_SCHEMA, repairs: 0 });
  t.equal(none.requests, 3, 'no repair with repairs: 0');
  if (!none.result.ok) t.match(none.result.message, /\/label must be equal to one of the allowed values/);
});

t.test('json without a schema asks for json_object and takes any JSON', async (t) => {
  const server = await scripted(t);
  server.script(reply.text('[1, 2, 3]'));
  const { result } = await run(server, { responseFormat: 'json' });
  t.match(result, { ok: true, value: { data: [1, 2, 3] } });
  t.same(server.requests[0]!.body.response_format, { type: 'json_object' });
  t.match((server.requests[0]!.body.messages as { content: string }[])[0]!.content, /JSON value only/);
});

t.test('an SSE stream split mid-event across TCP chunks still makes the whole answer', async (t) => {
  const server = await scripted(t);
  const text = 'A split answer: ünïcödé and {"json": true} across many small chunks.';
  server.script(reply.text(text, { splitEvery: 7 }));
  const deltas: string[] = [];
  const { result } = await run(server, {}, { deltas });
  t.match(result, { ok: true, value: { text } });
  t.equal(deltas.join(''), text);
  t.ok(deltas.length >= 2);
});

t.test('a stream cut before its finish reason is a network failure, retried', async (t) => {
  const server = await scripted(t);
  server.script(reply.text('never finished', { cutAfter: 150 }), reply.text('done'));
  const { result, attempts, requests } = await run(server);
  t.match(result, { ok: true, value: { text: 'done' } });
  t.equal(requests, 2);
  t.match(attempts[0], { failure: { code: 'AI_NETWORK' }, next: { why: 'retry' } });
});

t.test('a provider that hangs times out per attempt: AI_TIMEOUT after every attempt', async (t) => {
  const server = await scripted(t);
  server.script(reply.hang(), reply.hang());
  const { result, requests, attempts } = await run(server, {
    timeoutMs: 1000, // long enough for a loaded machine to deliver each request before it times out
    retry: { maxAttempts: 2, initialIntervalMs: 1, backoff: 1 },
  });
  t.match(result, { ok: false, code: 'AI_TIMEOUT' });
  t.equal(requests, 2);
  t.match(attempts, [{ failure: { code: 'AI_TIMEOUT' }, next: { why: 'retry' } }, { failure: { code: 'AI_TIMEOUT' } }]);
});

t.test('a connection refused fails with AI_NETWORK after every attempt', async (t) => {
  const probe = createServer().listen(0, '127.0.0.1');
  await once(probe, 'listening');
  const { port } = probe.address() as AddressInfo;
  probe.close();
  await once(probe, 'close');
  const attempts: AiAttempt[] = [];
  const result = await runner.run(
    aiCall({ retry: { maxAttempts: 2, initialIntervalMs: 1, backoff: 1 } }),
    lookupOf(aiProvider({ baseUrl: `http://127.0.0.1:${port}/v1`, apiKey: KEY })),
    { signal, onAttempt: (a) => attempts.push(a) },
  );
  said.push(result, attempts);
  t.match(result, { ok: false, code: 'AI_NETWORK' });
  t.equal(attempts.length, 2);
});

t.test('a provider refusing json_schema gets the schema in the prompt and json_object, remembered', async (t) => {
  const server = await scripted(t);
  server.script(reply.refuseJsonSchema(), reply.text('{"label":"spam","urgent":false}'));
  const first = await run(server, { responseFormat: 'json', schema: CLASSIFY_SCHEMA });
  t.match(first.result, { ok: true, value: { data: { label: 'spam', urgent: false } } });
  t.equal(first.requests, 2);
  t.match(first.attempts, [{ failure: { code: 'AI_HTTP_400' }, next: { why: 'retry', delayMs: 0 } }, {}]);
  t.equal(
    server.requests[0]!.body.response_format && (server.requests[0]!.body.response_format as { type: string }).type,
    'json_schema',
  );
  t.same(server.requests[1]!.body.response_format, { type: 'json_object' });
  const system = (server.requests[1]!.body.messages as { role: string; content: string }[])[0]!;
  t.equal(system.role, 'system');
  t.ok(system.content.includes(JSON.stringify(CLASSIFY_SCHEMA)), 'the schema is in the prompt');

  // The same provider is asked with json_object straight away from now on.
  server.script(reply.text('{"label":"ham","urgent":true}'));
  const second = await run(server, { responseFormat: 'json', schema: CLASSIFY_SCHEMA });
  t.ok(second.result.ok);
  t.equal(second.requests, 3);
  t.same(server.requests[2]!.body.response_format, { type: 'json_object' });
});

t.test('a provider that refuses max_tokens is sent max_completion_tokens, remembered', async (t) => {
  const server = await scripted(t);
  server.script(
    reply.status(
      400,
      "Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.",
    ),
    reply.text('first'),
    reply.text('second'),
  );
  t.match((await run(server)).result, { ok: true, value: { text: 'first' } });
  t.match((await run(server)).result, { ok: true, value: { text: 'second' } });
  t.same(
    server.requests.map((r) => [r.body.max_tokens, r.body.max_completion_tokens]),
    [
      [64, undefined],
      [undefined, 64],
      [undefined, 64],
    ],
  );
});

t.test('an aborted call ends CANCELLED, also while waiting to retry', async (t) => {
  const server = await scripted(t);
  server.script(reply.hang());
  const controller = new AbortController();
  const running = run(server, {}, { signal: controller.signal });
  await eventually('the request arrived', () => server.requestCount() === 1);
  controller.abort();
  t.match((await running).result, { ok: false, code: 'CANCELLED' });

  server.script(reply.status(500));
  const waiting = new AbortController();
  const backingOff = run(
    server,
    { retry: { maxAttempts: 2, initialIntervalMs: 600_000, backoff: 1 } },
    {
      signal: waiting.signal,
    },
  );
  await eventually('the failed request arrived', () => server.requestCount() === 2);
  waiting.abort();
  t.match((await backingOff).result, { ok: false, code: 'CANCELLED' });
});

t.test('close() ends calls under way with CANCELLED', async (t) => {
  const server = await scripted(t);
  server.script(reply.hang());
  const own = createAiRunner();
  const running = own.run(aiCall(), lookupOf(aiProvider({ baseUrl: server.baseUrl, apiKey: KEY })), { signal });
  await eventually('the request arrived', () => server.requestCount() === 1);
  await own.close();
  t.match(await running, { ok: false, code: 'CANCELLED' });
  t.match(await own.run(aiCall(), lookupOf(aiProvider({ baseUrl: server.baseUrl })), { signal }), {
    code: 'CANCELLED',
  });
});

t.test('an unknown provider, or no default, fails with AI_PROVIDER_NOT_FOUND', async (t) => {
  const lookup = lookupOf(aiProvider({ isDefault: false, baseUrl: 'http://127.0.0.1:9/v1' }));
  t.match(await runner.run(aiCall(), lookup, { signal }), { ok: false, code: 'AI_PROVIDER_NOT_FOUND' });
  t.match(await runner.run(aiCall({ provider: 'other' }), lookup, { signal }), {
    ok: false,
    code: 'AI_PROVIDER_NOT_FOUND',
  });
  t.match(await runner.run(aiCall({ organization: 'globex', provider: 'main' }), lookup, { signal }), {
    ok: false,
    code: 'AI_PROVIDER_NOT_FOUND',
  });
});

t.test('the call’s model overrides the provider’s', async (t) => {
  const server = await scripted(t);
  server.script(reply.text('ok'));
  const { result } = await run(server, { model: 'other-model' });
  t.equal(server.requests[0]!.body.model, 'other-model');
  t.equal(result.ok && (result.value as AiAnswer).model, 'other-model');
});

t.test('the network policy refuses a provider address: AI_FORBIDDEN_ADDRESS, no request, not retried', async (t) => {
  const server = await scripted(t);
  const network = new NetworkPolicy({ deny: ['127.0.0.1'] });
  t.teardown(() => network.close());
  const policed = createAiRunner({ network });
  t.teardown(() => policed.close());
  const attempts: AiAttempt[] = [];
  const result = await policed.run(
    aiCall({ retry: retry3 }),
    lookupOf(aiProvider({ baseUrl: server.baseUrl, apiKey: KEY })),
    { signal, onAttempt: (a) => attempts.push(a) },
  );
  said.push(result, attempts);
  t.match(result, { ok: false, code: 'AI_FORBIDDEN_ADDRESS', message: /refused by the network policy/ });
  t.equal(server.requestCount(), 0, 'the request never reached the server');
  t.equal(attempts.length, 1, 'not retried');
});
