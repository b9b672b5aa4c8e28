import '../setup/fixtures.js'; // fixtures under the OS temp dir (see there)
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import type { WfxClient } from '../../src/client/client.js';
import type { InstanceView } from '../../src/shared/api/index.js';
import { adminClient, startDaemon, wfxIn } from '../helpers/cli.js';
import { eventually } from '../helpers/eventually.js';
import { reply, startOpenAiServer, type OpenAiServer } from '../helpers/openai-server.js';
import { writeTinyGguf } from '../helpers/tiny-gguf.js';

/** A key the test can find anywhere it leaks to. */
const KEY = 'sk-wfx-e2e-5f1c0d9a7b3e4c2d';

const ASK = `processId: 9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d
name: Ask a model
nodes:
  start: { type: startEvent, next: ask }
  ask: { type: aiTask, prompt: "Greet {who}", retry: { maxAttempts: 1 }, resultVariable: answer, next: check }
  check: { type: inputNode, inputType: textbox, next: done }
  done: { type: endEvent }
`;

/** A daemon in a fresh directory with `files`, its admin client, and `wfx` run there. */
async function setup(t: Test, files: Record<string, string>) {
  const cwd = t.testdir(files);
  const daemon = await startDaemon(t, { cwd });
  const run = (args: string[], stdin?: string) => wfxIn(args, { cwd, ...(stdin !== undefined && { stdin }) });
  return { cwd, daemon, run, client: await adminClient(cwd, daemon.url) };
}

async function model(t: Test, options: Parameters<typeof startOpenAiServer>[0]): Promise<OpenAiServer> {
  const server = await startOpenAiServer(options);
  t.teardown(() => server.close());
  return server;
}

/** SIGKILLs daemon `pid` and resolves once it is gone (not our child: no exit event to wait for). */
async function kill(pid: number): Promise<void> {
  process.kill(pid, 'SIGKILL');
  await eventually(`daemon ${pid} is gone`, () => {
    try {
      process.kill(pid, 0);
      return false;
    } catch {
      return true;
    }
  });
}

/**
 * The execution once its wait at `nodeId` is durable: the log stream sends only journaled
 * entries, so the wait's entry there means a SIGKILL now cannot lose it (the resource alone
 * may show a step whose fsync is still under way).
 */
async function waitingAt(client: WfxClient, id: string, nodeId: string): Promise<InstanceView> {
  await eventually(`execution ${id} waits at ${nodeId}, durably`, async () =>
    (await client.instances.logs(id)).some((e) => e.nodeId === nodeId),
  );
  const inst = await client.instances.get(id);
  if (!inst.nodes.some((n) => n.nodeId === nodeId && n.statusCd === 1)) throw new Error(`not waiting at ${nodeId}`);
  return inst;
}

t.test('a model call in flight at SIGKILL is made once more after restart; once journaled, never again', async (t) => {
  const server = await model(t, { apiKey: KEY, modelName: 'e2e-model' });
  const { cwd, daemon, run } = await setup(t, { 'ask.yaml': ASK });
  const created = await run(
    [
      'ai',
      'providers',
      'create',
      'e2e',
      '--kind',
      'openai-compatible',
      '--base-url',
      server.baseUrl,
      '--model',
      'e2e-model',
      '--api-key-stdin',
      '--default',
    ],
    `${KEY}\n`,
  );
  t.equal(created.code, 0, created.stderr);
  t.equal((await run(['flow', 'publish', 'ask.yaml'])).code, 0);

  server.script(reply.hang(), reply.text('Hello there', { usage: { inputTokens: 7, outputTokens: 2 } }));
  const started = await run(['run', '9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d', '--set', 'who=Ada', '--json']);
  t.equal(started.code, 0, started.stderr);
  const id = (JSON.parse(started.stdout) as { processInstanceId: string }).processInstanceId;
  await eventually('the model call is in flight', () => server.requestCount() === 1);
  await kill(daemon.pid);

  const second = await startDaemon(t, { cwd });
  const client = await adminClient(cwd, second.url);
  const waiting = await waitingAt(client, id, 'check');
  t.equal(server.requestCount(), 2, 'called again exactly once after the restart');
  t.match(waiting.data, { answer: { text: 'Hello there', finishReason: 'stop' } }, 'the answer is in the variables');
  t.match(waiting.usage, { inputTokens: 7, outputTokens: 2, calls: 1 }, 'usage summed in the instance resource');
  t.same(
    server.requests.map((r) => r.headers.authorization),
    [`Bearer ${KEY}`, `Bearer ${KEY}`],
    'the key went to the provider, and only there',
  );

  await kill(second.pid);
  const third = await startDaemon(t, { cwd });
  const again = await adminClient(cwd, third.url);
  const answered = await run(['task', 'complete', id, 'check', '--data', '{"inputValue":"ok"}']);
  t.equal(answered.code, 0, answered.stderr);
  const done = await eventually('the execution completes', async () => {
    const inst = await again.instances.get(id);
    return inst.stateCd === 1 ? inst : undefined;
  });
  t.match(done.data, { answer: { text: 'Hello there' } });
  t.equal(server.requestCount(), 2, 'never called again once its result was journaled');

  // The key is kept in the store's state (as other secrets are) and nowhere else: not in an
  // answer, a log line, the execution history or an error.
  const seen = [
    (await run(['logs', id])).stdout,
    (await run(['ai', 'providers', 'list', '--json'])).stdout,
    (await run(['ai', 'providers', 'get', 'e2e'])).stdout,
    JSON.stringify(await again.instances.get(id)),
    JSON.stringify(await again.aiProviders.list()),
  ];
  for (const text of seen) t.notMatch(text, KEY, 'no answer shows the key');
  const dataDir = join(cwd, '.wfx');
  const files = (await readdir(dataDir, { recursive: true, withFileTypes: true })).filter((e) => e.isFile());
  const stateFiles = /^(journal|snapshot|checkpoint)|\.(wal|journal)$/;
  let searched = 0;
  for (const f of files) {
    const rel = join(f.parentPath, f.name).slice(dataDir.length + 1);
    if (stateFiles.test(f.name) || rel.startsWith('store')) continue;
    searched++;
    t.notMatch(await readFile(join(f.parentPath, f.name), 'latin1'), KEY, `${rel} has no key`);
  }
  t.ok(searched > 0, 'the daemon log and history files were searched');
});

t.test('support triage against a real tiny model: schema-checked classes, memory over executions', async (t) => {
  const flow = await readFile(new URL('../../../flows/support-triage.yaml', import.meta.url), 'utf8');
  const { cwd, run, client } = await setup(t, { 'triage.yaml': flow });
  const modelPath = join(cwd, 'tiny.gguf');
  writeTinyGguf(modelPath, { seed: 7, contextLength: 4096 }); // room for the customer's history
  const server = await model(t, { modelPath });
  const created = await run([
    'ai',
    'providers',
    'create',
    'tiny',
    '--kind',
    'openai-compatible',
    '--base-url',
    server.baseUrl,
    '--model',
    'tiny',
    '--default',
  ]);
  t.equal(created.code, 0, created.stderr);
  const tested = await run(['ai', 'providers', 'test', 'tiny']);
  t.equal(tested.code, 0, tested.stderr);
  t.match(
    tested.stdout,
    /^model tiny: answered in \d+ ms, [1-9]\d* input \+ [1-9]\d* output tokens$/m,
    'the real model answered',
  );
  t.equal((await run(['flow', 'publish', 'triage.yaml'])).code, 0);

  const ids: string[] = [];
  for (const subject of ['Charged twice', 'App crashes']) {
    const { processInstanceId } = await client.process.start({
      processId: '8f3b2c1d-4e5f-4a6b-9c7d-0e1f2a3b4c5d',
      data: { customerId: 'c-42', subject, body: 'Please help.' },
    });
    ids.push(processInstanceId);
    // It stops at the review of a draft or at a person; either way the ticket is remembered.
    const inst = await eventually('the ticket is triaged', async () => {
      const i = await client.instances.get(processInstanceId);
      return i.nodes.some((n) => (n.nodeId === 'review' || n.nodeId === 'manual') && n.statusCd === 1) ? i : undefined;
    });
    const triage = (inst.data as { triage: { data: { category: string; urgency: string; summary: string } } }).triage;
    t.ok(['billing', 'bug', 'account', 'other'].includes(triage.data.category), 'the class is one of the schema');
    t.ok(['low', 'normal', 'high'].includes(triage.data.urgency), 'the urgency is one of the schema');
    t.type(triage.data.summary, 'string');
    t.ok(inst.usage && inst.usage.outputTokens > 0, 'real token counts');
  }
  const second = await client.instances.get(ids[1]!);
  t.equal((second.data as { history: unknown[] }).history.length, 1, 'the second ticket saw the first in its history');
  const remembered = await run(['memory', 'get', 'support', 'tickets:c-42', '--json']);
  t.equal(remembered.code, 0, remembered.stderr);
  t.match(JSON.parse(remembered.stdout), { value: [{ subject: 'Charged twice' }, { subject: 'App crashes' }] });
});
