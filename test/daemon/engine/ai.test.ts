import t, { type Test } from 'tap';
import type { AiCall } from '../../../src/daemon/ai/types.js';
import { instanceResource } from '../../../src/daemon/api/routes/process.js';
import { chatWindow } from '../../../src/daemon/engine/nodes/ai.js';
import type { WorkProgress } from '../../../src/daemon/engine/engine.js';
import { logEntries } from '../../../src/daemon/state/log-line.js';
import { STATE, STATUS } from '../../../src/daemon/state/state.js';
import { crashImage, ended, engineHarness, type EngineHarness, trail } from '../../helpers/engine.js';
import { FakeAiRunner, saveProvider, type FakeTurn } from '../../helpers/fake-ai.js';

const ASK = (props: string, after = 'next: done') => `processId: AUTO
name: Ask a model
nodes:
  start: { type: startEvent, next: ask }
  ask:
    type: aiTask
${props
  .trim()
  .split('\n')
  .map((l) => `    ${l}`)
  .join('\n')}
    ${after}
  done: { type: endEvent }
`;

/** An engine with `ai` as its model runner and a default provider for the organization `default`. */
async function withRunner(t: Test, ai: FakeAiRunner, dir?: string, h?: EngineHarness): Promise<EngineHarness> {
  const harness = await engineHarness(t, dir, h?.clock, { ai });
  if (!dir) await saveProvider(harness.store, 'default');
  return harness;
}

/** A promise and its resolve: holds a scripted call in flight until the test lets it go. */
function gate(): { promise: Promise<void>; open: () => void } {
  let open!: () => void;
  const promise = new Promise<void>((resolve) => (open = resolve));
  return { promise, open };
}

t.test('an aiTask sends its resolved conversation and puts the answer in resultVariable', async (t) => {
  const ai = new FakeAiRunner(() => ({ text: 'Hello Ada', usage: { inputTokens: 12, outputTokens: 3 } }));
  const h = await withRunner(t, ai);
  const pid = await h.publish(
    ASK(`
systemPrompt: "You greet {who.kind}s."
prompt: "Greet {who.name}."
temperature: 0.2
maxTokens: 50
seed: 7
resultVariable: greeting`),
  );
  const started = await h.start(pid, { who: { name: 'Ada', kind: 'customer' } });
  const inst = await ended(h, started.processInstanceId);
  t.equal(inst.stateCd, STATE.COMPLETED);
  t.same(ai.calls, [
    {
      organization: 'default',
      provider: null,
      messages: [
        { role: 'system', content: 'You greet customers.' },
        { role: 'user', content: 'Greet Ada.' },
      ],
      responseFormat: 'text',
      temperature: 0.2,
      maxTokens: 50,
      seed: 7,
      timeoutMs: 120_000,
      retry: { maxAttempts: 3, initialIntervalMs: 1000, backoff: 2, maxIntervalMs: 60_000 },
      repairs: 1,
    } satisfies AiCall,
  ]);
  t.same(inst.variables.greeting, {
    text: 'Hello Ada',
    model: 'fake-model',
    finishReason: 'stop',
    usage: { inputTokens: 12, outputTokens: 3 },
  });
  t.same(inst.usage, { inputTokens: 12, outputTokens: 3, calls: 1 });
  t.same(instanceResource(inst).usage, { inputTokens: 12, outputTokens: 3, calls: 1 }, 'the resource shows it');
});

t.test('messages, a schema (json), a named provider and model, retry and repairs', async (t) => {
  const ai = new FakeAiRunner(() => ({ text: '{"category":"bug"}', data: { category: 'bug' } }));
  const h = await withRunner(t, ai);
  await saveProvider(h.store, 'default', 'other', false);
  const schema = { type: 'object', required: ['category'], properties: { category: { enum: ['bug', 'billing'] } } };
  const pid = await h.publish(
    ASK(`
provider: other
model: "{model}"
messages:
  - { role: system, content: "Sort tickets." }
  - { role: user, content: "{ticket}" }
  - { role: assistant, content: "Which product?" }
  - { role: user, content: "The {product}." }
schema: ${JSON.stringify(schema)}
timeout: 5s
retry: { maxAttempts: 5, initialInterval: 10ms }
repairs: 3`),
  );
  const inst = await ended(
    h,
    (await h.start(pid, { model: 'big', ticket: 'It crashes', product: 'app' })).processInstanceId,
  );
  t.match(ai.calls[0], {
    provider: 'other',
    model: 'big',
    messages: [
      { role: 'system', content: 'Sort tickets.' },
      { role: 'user', content: 'It crashes' },
      { role: 'assistant', content: 'Which product?' },
      { role: 'user', content: 'The app.' },
    ],
    responseFormat: 'json',
    schema,
    timeoutMs: 5000,
    retry: { maxAttempts: 5, initialIntervalMs: 10, backoff: 2, maxIntervalMs: 60_000 },
    repairs: 3,
  });
  t.same(inst.variables.ask, {
    text: '{"category":"bug"}',
    data: { category: 'bug' },
    model: 'big',
    finishReason: 'stop',
    usage: { inputTokens: 10, outputTokens: 5 },
  });
});

t.test('failures follow the one failure rule', async (t) => {
  const failing: FakeTurn = { failure: { code: 'AI_RATE_LIMITED', message: 'the provider answered 429' } };
  const ai = new FakeAiRunner(() => failing);
  const h = await withRunner(t, ai);
  const plain = await h.publish(ASK('prompt: hi'));
  const failed = await ended(h, (await h.start(plain)).processInstanceId);
  t.equal(failed.stateCd, STATE.FAILED);
  t.match(failed.error, { code: 'AI_RATE_LIMITED', nodeId: 'ask' });
  const caught = await h.publish(
    `processId: AUTO
name: Caught
nodes:
  start: { type: startEvent, next: ask }
  ask: { type: aiTask, prompt: hi, next: done }
  slow: { type: boundaryEvent, attachedTo: ask, event: error, errorCode: AI_RATE_LIMITED, next: later }
  later: { type: setVariable, variables: { retryLater: true }, next: done }
  done: { type: endEvent }
`,
  );
  const handled = await ended(h, (await h.start(caught)).processInstanceId);
  t.equal(handled.stateCd, STATE.COMPLETED, 'an error boundary event takes the failure');
  t.match(handled.variables, { retryLater: true, error: { code: 'AI_RATE_LIMITED', nodeId: 'ask' } });
  const unknown = await h.publish(ASK('provider: nobody\nprompt: hi', 'next: done\n    errorFlow: done'));
  const viaErrorFlow = await ended(h, (await h.start(unknown)).processInstanceId);
  t.equal(viaErrorFlow.stateCd, STATE.COMPLETED, 'errorFlow takes it');
  t.match(viaErrorFlow.variables.error, { code: 'AI_PROVIDER_NOT_FOUND' });
});

t.test('without a model runner an aiTask fails with AI_PROVIDER_NOT_FOUND', async (t) => {
  const h = await engineHarness(t);
  const inst = await ended(h, (await h.start(await h.publish(ASK('prompt: hi')))).processInstanceId);
  t.match(inst.error, { code: 'AI_PROVIDER_NOT_FOUND', message: /no model runner/ });
});

t.test('an answer nested deeper than the JSON limit fails with AI_OUTPUT_INVALID', async (t) => {
  let deep: unknown = 1;
  for (let i = 0; i < 80; i++) deep = [deep];
  const h = await withRunner(t, new FakeAiRunner(() => ({ data: deep })));
  const inst = await ended(
    h,
    (await h.start(await h.publish(ASK('prompt: hi\nresponseFormat: json')))).processInstanceId,
  );
  t.match(inst.error, { code: 'AI_OUTPUT_INVALID' });
});

t.test('one log line per attempt: model, latency, tokens, finish reason; never the prompt or answer', async (t) => {
  const usage = { inputTokens: 40, outputTokens: 0 };
  const ai = new FakeAiRunner(() => ({
    text: 'the-secret-answer',
    attempts: [
      {
        attempt: 1,
        model: 'm1',
        latencyMs: 12,
        usage,
        finishReason: null,
        failure: { code: 'AI_RATE_LIMITED', message: 'the provider answered 429' },
        next: { why: 'retry', delayMs: 1000 },
      },
      { attempt: 2, model: 'm1', latencyMs: 250, usage: { inputTokens: 40, outputTokens: 9 }, finishReason: 'stop' },
    ],
  }));
  const h = await withRunner(t, ai);
  const pid = await h.publish(ASK('prompt: "the-secret-prompt {x}"'));
  const inst = await ended(h, (await h.start(pid, { x: 1 })).processInstanceId);
  const lines = logEntries(inst).filter((e) => e.nodeId === 'ask' && /^model /.test(e.message));
  t.match(lines, [
    {
      level: 'WARN',
      message:
        'model m1 attempt 1: 12ms, 40 tokens in, 0 out, failed (AI_RATE_LIMITED: the provider answered 429); retry in 1000ms',
    },
    { level: 'INFO', message: 'model m1 attempt 2: 250ms, 40 tokens in, 9 out, finish stop' },
  ]);
  t.equal(lines.length, 2);
  const messages = logEntries(inst).map((e) => e.message);
  t.notOk(
    messages.some((m) => /the-secret/.test(m)),
    'no log message holds the prompt or the answer',
  );
});

t.test('progress events carry the streaming answer, only while someone listens', async (t) => {
  const ai = new FakeAiRunner(() => ({ text: 'Hello there', deltas: ['Hel', 'lo', ' there'] }));
  const h = await withRunner(t, ai);
  const pid = await h.publish(ASK('prompt: hi'));
  const seen: WorkProgress[] = [];
  const listen = (p: WorkProgress) => seen.push(p);
  h.engine.on('progress', listen);
  const inst = await ended(h, (await h.start(pid)).processInstanceId);
  h.engine.off('progress', listen);
  const ni = Object.values(inst.nodes).find((n) => n.nodeId === 'ask')!;
  t.same(
    seen,
    ['Hel', 'lo', ' there'].map((delta) => ({
      processInstanceId: inst.processInstanceId,
      nodeId: 'ask',
      nodeInstanceId: ni.id,
      delta,
    })),
  );
  t.equal((inst.variables.ask as { text: string }).text, 'Hello there');
});

t.test('usage is summed over the aiTasks of an execution', async (t) => {
  let n = 0;
  const ai = new FakeAiRunner(() => ({ usage: { inputTokens: 100 * ++n, outputTokens: n } }));
  const h = await withRunner(t, ai);
  const pid = await h.publish(`processId: AUTO
name: Two calls
nodes:
  start: { type: startEvent, next: [a, b] }
  a: { type: aiTask, prompt: one, next: j }
  b: { type: aiTask, prompt: two, next: j }
  j: { type: parallelGateway, next: c }
  c: { type: aiTask, prompt: three, next: done }
  done: { type: endEvent }
`);
  const inst = await ended(h, (await h.start(pid)).processInstanceId);
  t.same(inst.usage, { inputTokens: 600, outputTokens: 6, calls: 3 });
  const plain = await h.publish(`processId: AUTO
name: No calls
nodes:
  start: { type: startEvent, next: done }
  done: { type: endEvent }
`);
  const none = await h.start(plain);
  t.equal(none.usage, undefined, 'an execution without aiTask has no usage');
  t.notOk('usage' in instanceResource(none), 'nor does its resource');
});

t.test('a chat continues over three executions keyed by the correlation key', async (t) => {
  let n = 0;
  const ai = new FakeAiRunner(() => ({ text: `answer ${++n}` }));
  const h = await withRunner(t, ai);
  const pid = await h.publish(
    ASK(`
systemPrompt: Be brief.
prompt: "{question}"
memory: { namespace: chat, key: "{correlationKey}", window: 4 }`),
  );
  for (const question of ['q1', 'q2', 'q3']) {
    const inst = await ended(h, (await h.start(pid, { question }, { correlationKey: 'cust-1' })).processInstanceId);
    t.equal(inst.stateCd, STATE.COMPLETED);
  }
  await ended(h, (await h.start(pid, { question: 'other' }, { correlationKey: 'cust-2' })).processInstanceId);
  const sys = { role: 'system', content: 'Be brief.' };
  const u = (c: string) => ({ role: 'user', content: c });
  const a = (c: string) => ({ role: 'assistant', content: c });
  t.same(ai.calls[0]!.messages, [sys, u('q1')], 'the first execution: no history');
  t.same(ai.calls[1]!.messages, [sys, u('q1'), a('answer 1'), u('q2')], 'the second sees the first');
  t.same(
    ai.calls[2]!.messages,
    [sys, u('q1'), a('answer 1'), u('q2'), a('answer 2'), u('q3')],
    'the third sees both (window 4)',
  );
  t.same(ai.calls[3]!.messages, [sys, u('other')], 'another correlation key: its own conversation');
  t.same(
    h.store.state.memory.default!.chat!['cust-1']!.value,
    [u('q1'), a('answer 1'), u('q2'), a('answer 2'), u('q3'), a('answer 3')],
    'the system prompt is not remembered',
  );
  const fourth = await ended(
    h,
    (await h.start(pid, { question: 'q4' }, { correlationKey: 'cust-1' })).processInstanceId,
  );
  t.equal(fourth.stateCd, STATE.COMPLETED);
  t.same(ai.calls[4]!.messages, [sys, u('q2'), a('answer 2'), u('q3'), a('answer 3'), u('q4')], 'the last 4 only');
});

t.test('an answer too large for one chat memory entry fails the node, memory unchanged', async (t) => {
  const ai = new FakeAiRunner(() => ({ text: 'x'.repeat(300 * 1024) }));
  const h = await withRunner(t, ai);
  const pid = await h.publish(ASK('prompt: hi\nmemory: { namespace: chat, key: k }'));
  const inst = await ended(h, (await h.start(pid)).processInstanceId);
  t.equal(inst.stateCd, STATE.FAILED);
  t.match(inst.error, { code: 'MEMORY_TOO_LARGE', nodeId: 'ask' });
  t.equal(ai.calls.length, 1, 'the model was called once: the write fails, not the call');
  t.equal(h.store.state.memory.default?.chat?.k, undefined, 'nothing was remembered');
});

t.test('chat memory that holds no list fails the node before the call', async (t) => {
  const ai = new FakeAiRunner();
  const h = await withRunner(t, ai);
  await h.store.commit({
    type: 'memory.written',
    organization: 'default',
    namespace: 'chat',
    key: 'k',
    entry: { value: 'not a list', updatedAt: h.clock.now().toISOString(), expiresAt: null },
  });
  const pid = await h.publish(ASK('prompt: hi\nmemory: { namespace: chat, key: k }'));
  const inst = await ended(h, (await h.start(pid)).processInstanceId);
  t.match(inst.error, { code: 'MEMORY_NOT_A_LIST' });
  t.equal(ai.calls.length, 0);
});

t.test('a call in flight at a crash is made again after the restart, exactly once more', async (t) => {
  const held = gate();
  const before = new FakeAiRunner(() => ({ gate: held.promise }));
  const h = await withRunner(t, before);
  const pid = await h.publish(ASK('prompt: "hi {n}"\nmemory: { namespace: chat, key: k }'));
  const started = await h.start(pid, { n: 1 });
  await before.called(1);
  t.same(trail(await h.get(started.processInstanceId)), ['start:2', `ask:${STATUS.ACTIVE}`]);
  const image = await crashImage(t, h);
  const after = new FakeAiRunner(() => ({ text: 'again' }));
  const reopened = await withRunner(t, after, image, h);
  const inst = await ended(reopened, started.processInstanceId);
  t.equal(inst.stateCd, STATE.COMPLETED);
  t.equal(after.calls.length, 1, 'called again once after the restart');
  t.same(after.calls[0]!.messages, [{ role: 'user', content: 'hi 1' }]);
  t.equal((inst.variables.ask as { text: string }).text, 'again');
  t.same(reopened.store.state.memory.default!.chat!.k!.value, [
    { role: 'user', content: 'hi 1' },
    { role: 'assistant', content: 'again' },
  ]);
  held.open();
  t.equal(before.calls.length, 1, 'the crashed one was called once');
});

t.test('a graceful stop abandons the call; the restart makes it again', async (t) => {
  const held = gate();
  let n = 0;
  const ai = new FakeAiRunner(() => (++n === 1 ? { gate: held.promise } : { text: 'second' }));
  const h = await withRunner(t, ai);
  const started = await h.start(await h.publish(ASK('prompt: hi')));
  await ai.called(1);
  const restarted = await h.restart();
  const inst = await ended(restarted, started.processInstanceId);
  t.equal(ai.calls.length, 2);
  t.equal((inst.variables.ask as { text: string }).text, 'second');
});

t.test('once its result is journaled, a call is never made again, after a crash or a restart', async (t) => {
  const ai = new FakeAiRunner(() => ({ text: 'done once' }));
  const h = await withRunner(t, ai);
  const pid = await h.publish(
    ASK(
      'prompt: hi\nmemory: { namespace: chat, key: k }',
      'next: wait\n  wait: { type: inputNode, inputType: textbox, next: done }',
    ),
  );
  const started = await h.start(pid);
  await h.waitFor((e) => e.processInstanceId === started.processInstanceId && e.type === 'NODE_WAITING');
  t.equal(ai.calls.length, 1);
  const image = await crashImage(t, h);
  const later = new FakeAiRunner(() => ({ text: 'must not happen' }));
  const reopened = await withRunner(t, later, image, h);
  await reopened.engine.submitTask({
    organization: 'default',
    processInstanceId: started.processInstanceId,
    nodeId: 'wait',
    action: 'COMPLETE',
    data: { inputValue: 'ok' },
  });
  const inst = await reopened.get(started.processInstanceId);
  t.equal(inst.stateCd, STATE.COMPLETED);
  t.equal(later.calls.length, 0, 'not called after the crash');
  t.equal((inst.variables.ask as { text: string }).text, 'done once');
  t.same(inst.usage, { inputTokens: 10, outputTokens: 5, calls: 1 }, 'usage counted once');
  t.equal((reopened.store.state.memory.default!.chat!.k!.value as unknown[]).length, 2, 'remembered once');
  await h.store.checkpoint();
  const restarted = await h.restart();
  const kept = await restarted.get(started.processInstanceId);
  t.equal(ai.calls.length, 1, 'nor after a checkpoint and a graceful restart');
  t.same(kept.usage, { inputTokens: 10, outputTokens: 5, calls: 1 }, 'usage kept in the snapshot');
});

t.test('chat memory keeps the latest 200 messages, fewer when over an entry’s size', async (t) => {
  const msg = (i: number, size = 10) => ({ role: 'user' as const, content: `${i}`.padEnd(size, '.') });
  const old = Array.from({ length: 199 }, (_, i) => msg(i));
  const kept = chatWindow(old, [msg(199), msg(200)]);
  t.equal(kept.length, 200);
  t.same(kept[0], msg(1), 'the oldest went first');
  const big = Array.from({ length: 10 }, (_, i) => msg(i, 40_000));
  const fitted = chatWindow(big, [msg(10, 40_000)]);
  t.ok(Buffer.byteLength(JSON.stringify(fitted)) <= 256 * 1024, 'within an entry');
  t.same(fitted.at(-1), msg(10, 40_000), 'the new turn is kept');
  t.equal(fitted.length, 6, 'as many of the latest as fit');
  const alone = chatWindow([], [msg(0, 300_000)]);
  t.equal(alone.length, 1, 'a turn too large alone is kept whole (the write then fails MEMORY_TOO_LARGE)');
});

t.test('chat memory is appended where it was read, though the key’s variable changed during the call', async (t) => {
  const held = gate();
  const ai = new FakeAiRunner(() => ({ gate: held.promise, text: 'hi back' }));
  const h = await withRunner(t, ai);
  const pid = await h.publish(`processId: AUTO
name: Key changes meanwhile
nodes:
  start: { type: startEvent, next: [ask, input] }
  ask: { type: aiTask, prompt: hi, memory: { namespace: chat, key: "{inputValue}" }, next: join }
  input: { type: inputNode, inputType: textbox, next: join }
  join: { type: parallelGateway, next: done }
  done: { type: endEvent }
`);
  const started = await h.start(pid, { inputValue: 'first' });
  await ai.called(1);
  await h.engine.submitTask({
    organization: 'default',
    processInstanceId: started.processInstanceId,
    nodeId: 'input',
    action: 'COMPLETE',
    data: { inputValue: 'second' },
  });
  held.open();
  const inst = await ended(h, started.processInstanceId);
  t.equal(inst.variables.inputValue, 'second');
  t.same(Object.keys(h.store.state.memory.default!.chat!), ['first'], 'the turn went to the conversation it read');
  t.same(h.store.state.memory.default!.chat!.first!.value, [
    { role: 'user', content: 'hi' },
    { role: 'assistant', content: 'hi back' },
  ]);
});
