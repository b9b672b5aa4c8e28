import t from 'tap';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createAiRunner } from '../../../src/daemon/ai/runner.js';
import type { AiAnswer, AiAttempt } from '../../../src/daemon/ai/types.js';
import { aiCall, aiProvider, CLASSIFY_SCHEMA, lookupOf, TINY_MODEL_TOOLS } from '../../helpers/ai.js';
import { reply, startOpenAiServer } from '../../helpers/openai-server.js';
import { writeTinyGguf } from '../../helpers/tiny-gguf.js';

// The openai-compatible kind over real HTTP, against a server that runs the real tiny model.

const dir = mkdtempSync(join(tmpdir(), 'wfx-openai-compatible-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));
const modelPath = join(dir, 'tiny.gguf');
writeTinyGguf(modelPath, { seed: 7, contextLength: 4096 });

const KEY = 'sk-test-7f3a9c1e5b2d4a6f8e0c2b4d6f8a0c2e';
const server = await startOpenAiServer({ modelPath, apiKey: KEY, modelName: 'tiny-served' });
t.teardown(() => server.close());
const runner = createAiRunner();
t.teardown(() => runner.close());
const provider = aiProvider({ baseUrl: server.baseUrl, apiKey: KEY, model: 'tiny-served' });
const lookup = lookupOf(provider);
const signal = new AbortController().signal;

t.test('a text answer streams: deltas make up the text; usage is the model’s count', async (t) => {
  const deltas: string[] = [];
  const attempts: AiAttempt[] = [];
  const before = server.requestCount();
  const result = await runner.run(aiCall(), lookup, {
    signal,
    onDelta: (d) => deltas.push(d),
    onAttempt: (a) => attempts.push(a),
  });
  t.ok(result.ok, JSON.stringify(result));
  if (!result.ok) return;
  const answer = result.value as AiAnswer;
  t.equal(server.requestCount() - before, 1);
  const sent = server.requests.at(-1)!;
  t.equal(sent.answeredBy, 'model');
  t.equal(sent.body.stream, true);
  t.same(sent.body.stream_options, { include_usage: true });
  t.equal(sent.body.model, 'tiny-served');
  t.equal(sent.body.seed, 1);
  t.equal(sent.body.max_tokens, 64);
  t.equal(sent.body.response_format, undefined);
  t.equal(sent.headers.authorization, `Bearer ${KEY}`);
  t.equal(answer.model, 'tiny-served');
  t.equal(answer.finishReason, 'stop');
  t.equal(deltas.join(''), answer.text);
  t.ok(answer.usage.inputTokens > 0 && answer.usage.outputTokens > 0, JSON.stringify(answer.usage));
  t.equal(attempts.length, 1);
  t.same(attempts[0]!.usage, answer.usage);
});

t.test('the same seed gives the same answer over HTTP', async (t) => {
  const texts: string[] = [];
  for (const seed of [11, 11]) {
    const result = await runner.run(aiCall({ seed }), lookup, { signal });
    if (!result.ok) return t.fail(JSON.stringify(result));
    texts.push((result.value as AiAnswer).text);
  }
  t.equal(texts[0], texts[1]);
});

t.test('json with a schema: json_schema is requested, the model answers under a grammar, Ajv checks', async (t) => {
  const result = await runner.run(aiCall({ responseFormat: 'json', schema: CLASSIFY_SCHEMA }), lookup, { signal });
  t.ok(result.ok, JSON.stringify(result));
  if (!result.ok) return;
  const answer = result.value as AiAnswer;
  t.match(server.requests.at(-1)!.body.response_format, {
    type: 'json_schema',
    json_schema: { name: 'answer', schema: CLASSIFY_SCHEMA, strict: true },
  });
  t.same(answer.data, JSON.parse(answer.text));
  t.ok(['spam', 'ham'].includes((answer.data as { label: string }).label));
});

t.test('a wrong key fails with AI_AUTH at once, and the key is in no message', async (t) => {
  const wrong = 'sk-wrong-0123456789abcdef0123456789';
  const attempts: AiAttempt[] = [];
  const before = server.requestCount();
  const result = await runner.run(
    aiCall({ retry: { maxAttempts: 3, initialIntervalMs: 1, backoff: 1 } }),
    lookupOf(aiProvider({ baseUrl: server.baseUrl, apiKey: wrong })),
    { signal, onAttempt: (a) => attempts.push(a) },
  );
  t.match(result, { ok: false, code: 'AI_AUTH' });
  t.equal(server.requestCount() - before, 1, 'not retried');
  // The server echoes the refused key, as some do: it must be scrubbed.
  const shown = JSON.stringify([result, attempts]);
  t.notOk(shown.includes(wrong), shown);
  t.notOk(shown.includes(KEY));
});

t.test('a provider without a key sends no Authorization header', async (t) => {
  const open = await startOpenAiServer({ modelPath });
  t.teardown(() => open.close());
  const result = await runner.run(aiCall(), lookupOf(aiProvider({ baseUrl: open.baseUrl })), { signal });
  t.ok(result.ok, JSON.stringify(result));
  t.equal(open.requests[0]!.headers.authorization, undefined);
  t.equal(open.requests[0]!.headers['openai-organization'], undefined);
});

t.test('the base URL’s query goes along; its credentials become basic auth and appear in no message', async (t) => {
  const open = await startOpenAiServer();
  t.teardown(() => open.close());
  open.script({ kind: 'status', status: 418, message: 'teapot' });
  const base = new URL(open.baseUrl);
  base.username = 'user';
  base.password = 's3cret-pass';
  base.search = '?api-version=2026-01-01';
  const result = await runner.run(aiCall(), lookupOf(aiProvider({ baseUrl: base.href })), { signal });
  t.match(result, { ok: false, code: 'AI_HTTP_418' });
  t.equal(open.requests[0]!.url, '/v1/chat/completions?api-version=2026-01-01');
  t.equal(open.requests[0]!.headers.authorization, `Basic ${Buffer.from('user:s3cret-pass').toString('base64')}`);
  if (!result.ok) {
    t.notOk(result.message.includes('s3cret-pass'));
    t.notOk(result.message.includes('api-version'));
  }
});

t.test('tool calls stream in pieces across TCP chunks and come back whole; the request offers the tools', async (t) => {
  const open = await startOpenAiServer();
  t.teardown(() => open.close());
  open.script(
    reply.toolCalls(
      [
        { id: 'call_a', name: 'lookup', arguments: { orderId: 'A-1' } },
        { id: 'call_b', name: 'notify', arguments: { urgent: true } },
      ],
      { splitEvery: 7 },
    ),
  );
  const result = await runner.run(
    aiCall({ tools: TINY_MODEL_TOOLS, parallelToolCalls: false }),
    lookupOf(aiProvider({ baseUrl: open.baseUrl })),
    { signal },
  );
  t.ok(result.ok, JSON.stringify(result));
  if (!result.ok) return;
  const answer = result.value as AiAnswer;
  t.equal(answer.finishReason, 'tool_calls');
  t.same(answer.toolCalls, [
    { id: 'call_a', name: 'lookup', arguments: '{"orderId":"A-1"}' },
    { id: 'call_b', name: 'notify', arguments: '{"urgent":true}' },
  ]);
  const body = open.requests[0]!.body;
  t.same(
    (body.tools as Array<{ type: string; function: { name: string } }>).map((x) => [x.type, x.function.name]),
    [
      ['function', 'lookup'],
      ['function', 'notify'],
    ],
  );
  t.equal(body.parallel_tool_calls, false, 'parallel calls turned off when asked');
});

t.test('a conversation with tool calls and results is sent in the protocol’s shape', async (t) => {
  const open = await startOpenAiServer();
  t.teardown(() => open.close());
  open.script(reply.text('done'));
  const result = await runner.run(
    aiCall({
      tools: TINY_MODEL_TOOLS,
      messages: [
        { role: 'user', content: 'Find A-1.' },
        {
          role: 'assistant',
          content: '',
          toolCalls: [{ id: 'call_a', name: 'lookup', arguments: '{"orderId":"A-1"}' }],
        },
        { role: 'tool', toolCallId: 'call_a', name: 'lookup', content: '{"status":"shipped"}' },
      ],
    }),
    lookupOf(aiProvider({ baseUrl: open.baseUrl })),
    { signal },
  );
  t.match(result, { ok: true, value: { text: 'done' } });
  const body = open.requests[0]!.body;
  t.same(body.messages, [
    { role: 'user', content: 'Find A-1.' },
    {
      role: 'assistant',
      content: null,
      tool_calls: [{ id: 'call_a', type: 'function', function: { name: 'lookup', arguments: '{"orderId":"A-1"}' } }],
    },
    { role: 'tool', tool_call_id: 'call_a', content: '{"status":"shipped"}' },
  ]);
  t.equal(body.parallel_tool_calls, undefined, 'not sent when parallel calls are allowed');
});

t.test('the real model behind the protocol calls tools: each call names a tool, its arguments match', async (t) => {
  let calls = 0;
  let answers = 0;
  for (let seed = 1; seed <= 12; seed++) {
    const result = await runner.run(
      aiCall({ tools: TINY_MODEL_TOOLS, seed, maxTokens: 150, responseFormat: 'json', schema: CLASSIFY_SCHEMA }),
      lookup,
      { signal },
    );
    if (!result.ok) {
      t.equal(result.code, 'AI_TRUNCATED', 'a random model may ramble to maxTokens, nothing else');
      continue;
    }
    const answer = result.value as AiAnswer;
    if (answer.toolCalls) {
      calls++;
      t.equal(answer.finishReason, 'tool_calls');
      for (const c of answer.toolCalls) {
        const args = JSON.parse(c.arguments) as Record<string, unknown>;
        if (c.name === 'lookup') t.ok(['A-1', 'A-2'].includes(args.orderId as string), c.arguments);
        else t.same([c.name, typeof args.urgent], ['notify', 'boolean'], c.arguments);
      }
    } else {
      answers++;
      t.ok(['spam', 'ham'].includes((answer.data as { label: string }).label), answer.text);
    }
  }
  t.ok(calls > 0, `the model called tools (${calls} of 12)`);
  t.ok(answers > 0, `the model answered (${answers} of 12)`);
});
