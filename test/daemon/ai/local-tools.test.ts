import t from 'tap';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Ajv } from 'ajv';
import { LocalModelKind } from '../../../src/daemon/ai/local-model.js';
import { toolEnvelope, toolInstruction, unwrapEnvelope } from '../../../src/daemon/ai/local-tools.js';
import { createAiRunner } from '../../../src/daemon/ai/runner.js';
import type { AiAnswer } from '../../../src/daemon/ai/types.js';
import { aiCall, aiProvider, CLASSIFY_SCHEMA, lookupOf, TINY_MODEL_TOOLS } from '../../helpers/ai.js';
import { writeTinyGguf } from '../../helpers/tiny-gguf.js';

const ANSWER = {
  kind: 'answer',
  text: '',
  model: 'tiny',
  finishReason: 'stop',
  usage: { inputTokens: 3, outputTokens: 2 },
} as const;

t.test('the envelope: tool calls of the given tools, or an answer of the schema (a string without one)', async (t) => {
  const ajv = new Ajv({ strict: false });
  const check = ajv.compile(toolEnvelope(TINY_MODEL_TOOLS, CLASSIFY_SCHEMA, true));
  t.ok(check({ tool_calls: [{ name: 'lookup', arguments: { orderId: 'A-1' } }] }));
  t.ok(
    check({
      tool_calls: [
        { name: 'notify', arguments: { urgent: false } },
        { name: 'lookup', arguments: { orderId: 'A-2' } },
      ],
    }),
  );
  t.ok(check({ answer: { label: 'ham', urgent: true } }));
  t.notOk(check({ tool_calls: [{ name: 'lookup', arguments: { orderId: 'B' } }] }), 'arguments of the tool’s schema');
  t.notOk(check({ tool_calls: [{ name: 'other', arguments: {} }] }), 'only the tools given');
  t.notOk(check({ tool_calls: [] }), 'at least one call');
  t.notOk(check({ answer: 'text' }), 'the answer of the schema');
  const one = ajv.compile(toolEnvelope(TINY_MODEL_TOOLS, undefined, false));
  t.notOk(
    one({
      tool_calls: [
        { name: 'notify', arguments: { urgent: false } },
        { name: 'notify', arguments: { urgent: true } },
      ],
    }),
    'one call at most when not parallel',
  );
  t.ok(one({ answer: 'plain text' }));
  t.match(
    toolInstruction(TINY_MODEL_TOOLS).content,
    /- lookup: Finds an order\n {2}arguments \(JSON Schema\): \{"type":"object"/,
  );
});

t.test('an envelope back as tool calls (ids by turn) or as the answer’s text; other text as it is', async (t) => {
  const history = [
    { role: 'user' as const, content: 'hi' },
    { role: 'assistant' as const, content: '', toolCalls: [{ id: 'call_1_1', name: 'lookup', arguments: '{}' }] },
  ];
  t.match(
    unwrapEnvelope(
      {
        ...ANSWER,
        text: '{"tool_calls":[{"name":"lookup","arguments":{"orderId":"A-1"}},{"name":"notify","arguments":{"urgent":true}}]}',
      },
      history,
    ),
    {
      finishReason: 'tool_calls',
      text: '',
      toolCalls: [
        { id: 'call_2_1', name: 'lookup', arguments: '{"orderId":"A-1"}' },
        { id: 'call_2_2', name: 'notify', arguments: '{"urgent":true}' },
      ],
    },
  );
  t.match(unwrapEnvelope({ ...ANSWER, text: '{"answer":"All done."}' }, []), {
    text: 'All done.',
    finishReason: 'stop',
  });
  t.match(unwrapEnvelope({ ...ANSWER, text: '{"answer":{"label":"ham"}}' }, []), { text: '{"label":"ham"}' });
  t.match(unwrapEnvelope({ ...ANSWER, text: 'not json' }, []), { text: 'not json' });
});

const dir = mkdtempSync(join(tmpdir(), 'wfx-local-tools-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));
const modelPath = join(dir, 'tiny.gguf');
writeTinyGguf(modelPath, { seed: 7, contextLength: 4096 });
const runner = createAiRunner({ kinds: { local: new LocalModelKind() } });
t.teardown(() => runner.close());
const lookup = lookupOf(aiProvider({ kind: 'local', modelPath, threads: 1 }));
const signal = new AbortController().signal;

t.test('a real local model calls tools under the grammar, or answers; every call is well-formed', async (t) => {
  const seen = { calls: 0, answers: 0 };
  for (let seed = 1; seed <= 16; seed++) {
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
      seen.calls++;
      t.equal(answer.finishReason, 'tool_calls');
      answer.toolCalls.forEach((c, i) => t.equal(c.id, `call_1_${i + 1}`));
      for (const c of answer.toolCalls) t.ok(['lookup', 'notify'].includes(c.name), c.name);
    } else {
      seen.answers++;
      t.same(JSON.parse(answer.text), answer.data);
    }
  }
  t.ok(seen.calls > 0 && seen.answers > 0, JSON.stringify(seen));
});

t.test('parallelToolCalls false: a local model asks for one call at most', async (t) => {
  for (let seed = 1; seed <= 8; seed++) {
    const result = await runner.run(
      aiCall({ tools: TINY_MODEL_TOOLS, parallelToolCalls: false, seed, maxTokens: 150 }),
      lookup,
      {
        signal,
      },
    );
    if (result.ok) t.ok(((result.value as AiAnswer).toolCalls?.length ?? 0) <= 1);
  }
});
