import t from 'tap';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { reply, startOpenAiServer } from '../../helpers/openai-server.js';
import { writeTinyGguf } from '../../helpers/tiny-gguf.js';

// The test server itself, spoken to with plain fetch: what the end-to-end tests rely on.

const dir = mkdtempSync(join(tmpdir(), 'wfx-openai-server-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));
const modelPath = join(dir, 'tiny.gguf');
writeTinyGguf(modelPath, { seed: 7 });
const server = await startOpenAiServer({ modelPath, apiKey: 'k-1', modelName: 'tiny-x' });
t.teardown(() => server.close());
const auth = { authorization: 'Bearer k-1', 'content-type': 'application/json' };

t.test('lists its model; refuses a missing key with 401', async (t) => {
  const models = await fetch(`${server.baseUrl}/models`, { headers: auth });
  t.equal(models.status, 200);
  t.match(await models.json(), { object: 'list', data: [{ id: 'tiny-x' }] });
  const refused = await fetch(`${server.baseUrl}/models`);
  t.equal(refused.status, 401);
  t.match(await refused.json(), { error: { message: String } });
});

t.test('answers a non-streamed completion with the real model, counted and recorded', async (t) => {
  const before = server.requestCount();
  const res = await fetch(`${server.baseUrl}/chat/completions`, {
    method: 'POST',
    headers: auth,
    body: JSON.stringify({
      model: 'tiny-x',
      messages: [{ role: 'user', content: 'hi' }],
      max_tokens: 64,
      seed: 2,
      temperature: 0.8,
      response_format: {
        type: 'json_schema',
        json_schema: {
          name: 'a',
          schema: { type: 'object', properties: { ok: { type: 'boolean' } }, required: ['ok'] },
        },
      },
    }),
  });
  t.equal(res.status, 200);
  const body = (await res.json()) as {
    choices: { message: { content: string }; finish_reason: string }[];
    usage: { prompt_tokens: number; completion_tokens: number };
  };
  t.type(JSON.parse(body.choices[0]!.message.content).ok, 'boolean');
  t.equal(body.choices[0]!.finish_reason, 'stop');
  t.ok(body.usage.prompt_tokens > 0 && body.usage.completion_tokens > 0);
  t.equal(server.requestCount() - before, 1);
  t.equal(server.requests.at(-1)!.answeredBy, 'model');
});

t.test('scripted replies are taken one per request, in order, before the model', async (t) => {
  server.script(reply.status(429, 'slow down', { 'retry-after': '2' }), reply.text('scripted'));
  const post = (): Promise<Response> =>
    fetch(`${server.baseUrl}/chat/completions`, {
      method: 'POST',
      headers: auth,
      body: JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'x' }] }),
    });
  const first = await post();
  t.equal(first.status, 429);
  t.equal(first.headers.get('retry-after'), '2');
  await first.body?.cancel();
  const second = await post();
  t.match(await second.json(), { choices: [{ message: { content: 'scripted' }, finish_reason: 'stop' }] });
  t.same(
    server.requests.slice(-2).map((r) => r.answeredBy),
    ['script', 'script'],
  );
});
