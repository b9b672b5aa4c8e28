import t from 'tap';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { defaultLocalThreads, LocalModelKind, Turns } from '../../../src/daemon/ai/local-model.js';
import { createAiRunner } from '../../../src/daemon/ai/runner.js';
import type { AiAnswer, AiAttempt } from '../../../src/daemon/ai/types.js';
import type { AiProvider } from '../../../src/daemon/state/state.js';
import { aiCall, aiProvider, CLASSIFY_SCHEMA, lookupOf } from '../../helpers/ai.js';
import { writeTinyGguf } from '../../helpers/tiny-gguf.js';

const dir = mkdtempSync(join(tmpdir(), 'wfx-local-model-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));
const modelPath = join(dir, 'tiny.gguf');
writeTinyGguf(modelPath, { seed: 7 });
/** A model that (almost) never ends its answer: every call runs to maxTokens. */
const ramblingPath = join(dir, 'rambling.gguf');
writeTinyGguf(ramblingPath, { seed: 7, eosBias: 0 });

function provider(over: Partial<AiProvider> = {}): AiProvider {
  return aiProvider({ kind: 'local', modelPath, threads: 1, ...over });
}
const call = aiCall;

const local = new LocalModelKind();
const runner = createAiRunner({ kinds: { local } });
t.teardown(() => runner.close());
const lookup = lookupOf(provider());
const signal = new AbortController().signal;

const SCHEMA = CLASSIFY_SCHEMA;

t.test('a text answer: deltas make up the text, usage is counted, attempts are reported', async (t) => {
  const deltas: string[] = [];
  const attempts: AiAttempt[] = [];
  const result = await runner.run(call({ maxTokens: 200 }), lookup, {
    signal,
    onDelta: (d) => deltas.push(d),
    onAttempt: (a) => attempts.push(a),
  });
  t.ok(result.ok, JSON.stringify(result));
  if (!result.ok) return;
  const answer = result.value as AiAnswer;
  t.equal(answer.model, 'tiny');
  t.equal(deltas.join(''), answer.text);
  t.ok(answer.usage.inputTokens > 0, 'input tokens counted');
  t.ok(answer.usage.outputTokens > 0, 'output tokens counted');
  t.ok(answer.usage.outputTokens <= 200);
  t.equal(answer.data, undefined);
  t.equal(attempts.length, 1);
  t.equal(attempts[0]!.attempt, 1);
  t.same(attempts[0]!.usage, answer.usage);
  t.equal(attempts[0]!.finishReason, answer.finishReason);
});

t.test('the same seed gives the same answer; another seed another', async (t) => {
  const texts: string[] = [];
  for (const seed of [5, 5, 6]) {
    const result = await runner.run(call({ seed }), lookup, { signal });
    if (!result.ok) return t.fail(JSON.stringify(result));
    texts.push((result.value as AiAnswer).text);
  }
  t.equal(texts[0], texts[1]);
  t.not(texts[0], texts[2]);
});

t.test('json with a schema: the grammar makes the model answer matching JSON', async (t) => {
  for (const seed of [1, 2, 3]) {
    const result = await runner.run(call({ responseFormat: 'json', schema: SCHEMA, seed, maxTokens: 60 }), lookup, {
      signal,
    });
    t.ok(result.ok, JSON.stringify(result));
    if (!result.ok) continue;
    const answer = result.value as AiAnswer;
    t.same(JSON.parse(answer.text), answer.data);
    t.ok(['spam', 'ham'].includes((answer.data as { label: string }).label));
    t.type((answer.data as { urgent: unknown }).urgent, 'boolean');
  }
});

t.test('maxTokens reached fails with AI_TRUNCATED', async (t) => {
  const attempts: AiAttempt[] = [];
  const result = await runner.run(call({ maxTokens: 8 }), lookupOf(provider({ modelPath: ramblingPath })), {
    signal,
    onAttempt: (a) => attempts.push(a),
  });
  t.match(result, { ok: false, code: 'AI_TRUNCATED' });
  t.equal(attempts.length, 1, 'not retried');
  t.match(attempts[0], { finishReason: 'length', usage: { outputTokens: 8 }, failure: { code: 'AI_TRUNCATED' } });
});

t.test('a conversation longer than the context fails with AI_TRUNCATED; nothing of it is dropped', async (t) => {
  const attempts: AiAttempt[] = [];
  const result = await runner.run(
    call({
      messages: [{ role: 'user', content: 'word '.repeat(600) }],
      retry: { maxAttempts: 3, initialIntervalMs: 1, backoff: 1 },
    }),
    lookup,
    { signal, onAttempt: (a) => attempts.push(a) },
  );
  t.match(result, { ok: false, code: 'AI_TRUNCATED', message: /does not fit the context size \(512 tokens\)/ });
  t.equal(attempts.length, 1, 'not retried');
});

t.test('a missing or broken model file fails with AI_MODEL_UNAVAILABLE naming the file', async (t) => {
  const missing = join(dir, 'missing.gguf');
  let result = await runner.run(call(), lookupOf(provider({ modelPath: missing })), { signal });
  t.match(result, { ok: false, code: 'AI_MODEL_UNAVAILABLE' });
  if (!result.ok) t.ok(result.message.includes(missing));

  const broken = join(dir, 'broken.gguf');
  writeFileSync(broken, 'not a model');
  result = await runner.run(call(), lookupOf(provider({ modelPath: broken })), { signal });
  t.match(result, { ok: false, code: 'AI_MODEL_UNAVAILABLE' });

  // A file that appears later loads: a failed load is not remembered.
  writeTinyGguf(missing, { seed: 7 });
  result = await runner.run(call(), lookupOf(provider({ modelPath: missing })), { signal });
  t.ok(result.ok, JSON.stringify(result));
});

t.test('without node-llama-cpp installed, a local call fails with AI_MODEL_UNAVAILABLE saying so', async (t) => {
  const absent = 'node-llama-cpp-not-installed';
  const kind = new LocalModelKind({ importRuntime: () => import(absent) as Promise<never> });
  const own = createAiRunner({ kinds: { local: kind } });
  t.teardown(() => own.close());
  const result = await own.run(call(), lookup, { signal });
  t.match(result, { ok: false, code: 'AI_MODEL_UNAVAILABLE', message: /node-llama-cpp is not installed/ });
});

t.test('concurrent calls share one load of the model and take turns', async (t) => {
  const path = join(dir, 'shared.gguf');
  writeTinyGguf(path, { seed: 9 });
  const loadsBefore = local.loads;
  const p = provider({ modelPath: path });
  const results = await Promise.all([1, 2, 3, 4].map((seed) => runner.run(call({ seed }), lookupOf(p), { signal })));
  t.ok(
    results.every((r) => r.ok),
    JSON.stringify(results),
  );
  t.equal(local.loads - loadsBefore, 1, 'one load for four calls');
  // The same seed alone gives the same text as under concurrency: calls did not interleave.
  const alone = await runner.run(call({ seed: 3 }), lookupOf(p), { signal });
  t.same(alone.ok && (alone.value as AiAnswer).text, results[2]!.ok && (results[2]!.value as AiAnswer).text);
});

t.test('an aborted call ends CANCELLED', async (t) => {
  const controller = new AbortController();
  const running = runner.run(call({ maxTokens: 400 }), lookupOf(provider({ modelPath: ramblingPath })), {
    signal: controller.signal,
    onDelta: () => controller.abort(),
  });
  t.match(await running, { ok: false, code: 'CANCELLED' });
  // The model is still usable afterwards.
  t.ok((await runner.run(call(), lookup, { signal })).ok);
});

t.test('Turns: one at a time, in order; a waiter that aborts leaves without jumping the line', async (t) => {
  const turns = new Turns();
  const order: string[] = [];
  let releaseFirst!: () => void;
  const first = turns.run(signal, async () => {
    order.push('first start');
    await new Promise<void>((r) => (releaseFirst = r));
    order.push('first end');
  });
  const controller = new AbortController();
  const second = turns.run(controller.signal, async () => order.push('second'));
  const third = turns.run(signal, async () => order.push('third'));
  controller.abort();
  t.equal(await second, undefined);
  t.same(order, ['first start']);
  releaseFirst();
  await Promise.all([first, third]);
  t.same(order, ['first start', 'first end', 'third']);
});

t.test('defaultLocalThreads: half the cores, at least one', async (t) => {
  t.equal(defaultLocalThreads(1), 1);
  t.equal(defaultLocalThreads(2), 1);
  t.equal(defaultLocalThreads(8), 4);
});

t.test("the provider's threads and context size reach llama.cpp's context; half the cores by default", async (t) => {
  type Llm = typeof import('node-llama-cpp');
  const contexts: { threads?: unknown; contextSize?: unknown }[] = [];
  // The real runtime, with createContext watched: what the model is actually given.
  const watched = async (): Promise<Llm> => {
    const real = await import('node-llama-cpp');
    const getLlama = async (options?: import('node-llama-cpp').LlamaOptions) => {
      const llama = await real.getLlama(options);
      const loadModel: typeof llama.loadModel = async (options) => {
        const model = await llama.loadModel(options);
        const createContext: typeof model.createContext = async (options) => {
          const context = await model.createContext(options);
          contexts.push({ threads: context.currentThreads, contextSize: context.contextSize });
          return context;
        };
        return Object.assign(Object.create(model) as typeof model, { createContext });
      };
      return Object.assign(Object.create(llama) as typeof llama, { loadModel });
    };
    return { ...real, getLlama } as unknown as Llm;
  };
  // Given threads differ from the default, so a given count that went unused would show.
  for (const [over, threads] of [
    [{ threads: defaultLocalThreads() + 1, contextSize: 512 }, defaultLocalThreads() + 1],
    [{ threads: undefined, contextSize: 512 }, defaultLocalThreads()],
  ] as const) {
    const kind = new LocalModelKind({ importRuntime: watched });
    const own = createAiRunner({ kinds: { local: kind } });
    const before = contexts.length;
    await own.run(call({ maxTokens: 4 }), lookupOf(provider(over)), { signal });
    await own.close();
    t.equal(contexts.length, before + 1, 'one context made');
    t.match(contexts.at(-1), { threads, contextSize: 512 }, `threads ${String(over.threads)}`);
  }
});
