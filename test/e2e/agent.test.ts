import '../setup/fixtures.js'; // fixtures under the OS temp dir (see there)
import { mkdtempSync, rmSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import type { WfxClient } from '../../src/client/client.js';
import type { AgentState, InstanceView } from '../../src/shared/api/index.js';
import { strictLookupFlow } from '../helpers/agent-daemon.js';
import { adminClient, startDaemon, wfxIn } from '../helpers/cli.js';
import { eventually } from '../helpers/eventually.js';
import { kill, scriptedModel } from '../helpers/agent-e2e.js';
import { reply } from '../helpers/openai-server.js';
import { writeTinyGguf } from '../helpers/tiny-gguf.js';

// callAgent on a real daemon over real HTTP: SIGKILL at each point of a turn, counting the
// model's requests and the tool flows' executions; then the real tiny model driving it.

const LOOKUP = '5a1b0c2d-3e4f-4a5b-8c6d-7e8f9a0b1c2d';
const APPROVE = '6b2c1d3e-4f5a-4b6c-9d7e-8f9a0b1c2d3e';
const AGENT = '7c3d2e4f-5a6b-4c7d-8e8f-9a0b1c2d3e4f';

const FLOWS = {
  'lookup.yaml': strictLookupFlow(LOOKUP),
  'approve.yaml': `processId: ${APPROVE}
name: Ask a supervisor
description: Asks a person to approve
inputs:
  type: object
  required: [urgent]
  additionalProperties: false
  properties: { urgent: { type: boolean } }
nodes:
  start: { type: startEvent, next: ask }
  ask: { type: inputNode, inputType: textbox, formTitle: "Approve?", next: out }
  out: { type: outputNode, outputs: { approved: "{inputValue}" }, next: done }
  done: { type: endEvent }
`,
  // Sorts before its tools: publishing the directory must still work.
  'agent.yaml': `processId: ${AGENT}
name: Order agent
nodes:
  start: { type: startEvent, next: agent }
  agent:
    type: callAgent
    prompt: "Case {n}: help with the order."
    tools: [${LOOKUP}, ${APPROVE}]
    retry: { maxAttempts: 1 }
    maxSteps: 3
    maxTokens: 400
    seed: 1
    temperature: 0.8
    schema: { type: object, required: [label], additionalProperties: false, properties: { label: { enum: [spam, ham] } } }
    next: done
  done: { type: endEvent }
`,
};

/** A daemon (with `env`) in a directory of the flows, published. */
async function setup(t: Test, env?: NodeJS.ProcessEnv) {
  const cwd = t.testdir(FLOWS);
  const daemon = await startDaemon(t, { cwd, ...(env && { env }) });
  const run = (args: string[], stdin?: string) => wfxIn(args, { cwd, ...(stdin !== undefined && { stdin }) });
  const published = await run(['flow', 'publish', 'agent.yaml', 'approve.yaml', 'lookup.yaml']);
  t.equal(published.code, 0, published.stderr);
  return { cwd, daemon, run };
}

const agentOf = (inst: InstanceView): AgentState | undefined => inst.nodes.find((n) => n.nodeId === 'agent')?.agent;

/** Executions of `processId` so far (children included). */
async function runsOf(client: WfxClient, processId: string): Promise<number> {
  // Tool calls are child executions of the agent's: listed with children only.
  return (await client.instances.list(processId, { limit: 100, children: true })).items.length;
}

t.test(
  'SIGKILL at each point of a turn: the model is asked once more per turn in flight, no tool runs twice',
  async (t) => {
    const { cwd, daemon, run } = await setup(t);
    const server = await scriptedModel(t, run);

    // 1. Turn 1 in flight.
    server.script(reply.hang());
    const started = await run(['run', AGENT, '--set', 'n=1', '--json']);
    t.equal(started.code, 0, started.stderr);
    const id = (JSON.parse(started.stdout) as { processInstanceId: string }).processInstanceId;
    await eventually('turn 1 is in flight', () => server.requestCount() === 1);
    await kill(daemon.pid);

    // 2. After the restart turn 1 is asked again: two tools at once, one of them waits for a person.
    server.script(
      reply.toolCalls([
        { id: 'c1', name: 'ask_a_supervisor', arguments: { urgent: true } },
        { id: 'c2', name: 'look_up_order', arguments: { orderId: 'A-1' } },
      ]),
    );
    const second = await startDaemon(t, { cwd });
    let client = await adminClient(cwd, second.url);
    const waiting = await eventually('the supervisor task waits, durably', async () => {
      const tasks = (await client.tasks.list()).items;
      if (tasks.length !== 1) return undefined;
      // The log stream sends journaled entries only: the wait is durable once it is there.
      const logs = await client.instances.logs(tasks[0]!.processInstanceId);
      return logs.some((e) => e.nodeId === 'ask') ? tasks[0] : undefined;
    });
    t.match(
      waiting.agent,
      { processInstanceId: id, nodeId: 'agent', tool: 'ask_a_supervisor' },
      'the task names its agent',
    );
    t.equal(server.requestCount(), 2, 'turn 1 asked once more after the crash');
    let inst = await client.instances.get(id);
    t.same(
      agentOf(inst)!.calls.map((c) => [c.name, c.ok]),
      [
        ['ask_a_supervisor', null],
        ['look_up_order', true],
      ],
      'both started in the step of the answer; the lookup is done',
    );
    await kill(second.pid);

    // 3. Answer recorded, a child still running: the restart asks nothing and starts nothing.
    const third = await startDaemon(t, { cwd });
    client = await adminClient(cwd, third.url);
    t.equal(server.requestCount(), 2, 'no turn asked again');
    server.script(reply.hang());
    const answered = await run([
      'task',
      'complete',
      waiting.processInstanceId,
      'ask',
      '--data',
      '{"inputValue":"yes"}',
    ]);
    t.equal(answered.code, 0, answered.stderr);
    // 4. The children are done and turn 2 is in flight.
    await eventually('turn 2 is in flight', () => server.requestCount() === 3);
    inst = await client.instances.get(id);
    t.same(
      agentOf(inst)!
        .messages.filter((m) => m.role === 'tool')
        .map((m) => m.content),
      ['{"status":"shipped","orderId":"A-1"}', '{"approved":"yes"}'],
    );
    await kill(third.pid);

    server.script(reply.text('{"label":"ham"}'));
    const fourth = await startDaemon(t, { cwd });
    client = await adminClient(cwd, fourth.url);
    const done = await eventually('the agent answered', async () => {
      const i = await client.instances.get(id);
      return i.stateCd === 1 ? i : undefined;
    });
    t.match(done.data, { agent: { data: { label: 'ham' }, steps: 2 } });
    t.equal(server.requestCount(), 4, 'a crash-free run (2 turns) plus the 2 turns that were in flight at a crash');
    t.equal(await runsOf(client, LOOKUP), 1, 'the lookup tool ran once');
    t.equal(await runsOf(client, APPROVE), 1, 'the approval tool ran once');

    const shown = await run(['instances', 'get', id]);
    t.equal(shown.code, 0, shown.stderr);
    const [approval, lookup] = agentOf(done)!.calls.map((c) => c.childInstanceId);
    const out = shown.stdout;
    t.equal(
      out.slice(out.indexOf('conversation of'), out.indexOf('\n\nchildren:')),
      [
        'conversation of agent, completed',
        '2 turns · 16 input + 7 output tokens · 2 tool calls: 2 done',
        '  user       Case 1: help with the order.',
        '  assistant  → ask_a_supervisor(urgent: true)',
        `               done in ${approval}`,
        '             → look_up_order(orderId: "A-1")',
        `               done in ${lookup}`,
        '  tool       ← look_up_order: {status: "shipped", orderId: "A-1"}',
        '  tool       ← ask_a_supervisor: {approved: "yes"}',
        '  assistant  {"label":"ham"}',
      ].join('\n'),
      'the transcript as a conversation: roles, each call with its execution and state, each result',
    );
  },
);

t.test(
  'SIGKILL once the tool results are journaled, before the next turn is asked: nothing is asked or run again',
  async (t) => {
    // The daemon stops right after the step that records the last child's output and asks for
    // turn 2, before the model is called (crash-point.ts): the kill lands exactly there.
    const { cwd, daemon, run } = await setup(t, { WFX_TEST_CRASH_POINT: 'agent:tools-ended' });
    const server = await scriptedModel(t, run);
    server.script(
      reply.toolCalls([
        { id: 'c1', name: 'look_up_order', arguments: { orderId: 'A-1' } },
        { id: 'c2', name: 'look_up_order', arguments: { orderId: 'A-2' } },
      ]),
    );
    const started = await run(['run', AGENT, '--set', 'n=3', '--json']);
    t.equal(started.code, 0, started.stderr);
    const id = (JSON.parse(started.stdout) as { processInstanceId: string }).processInstanceId;
    const out = join(cwd, '.wfx', 'logs', 'daemon.out');
    await eventually('the daemon stops with both tool results journaled', async () =>
      (await readFile(out, 'utf8').catch(() => '')).includes('crash-point agent:tools-ended\n'),
    );
    t.equal(server.requestCount(), 1, 'turn 2 is not asked yet');
    await kill(daemon.pid);

    server.script(reply.text('{"label":"spam"}'));
    const after = await startDaemon(t, { cwd });
    const client = await adminClient(cwd, after.url);
    const done = await eventually('the agent answered', async () => {
      const i = await client.instances.get(id);
      return i.stateCd !== 0 ? i : undefined;
    });
    t.equal(done.stateCd, 1, 'completed');
    t.match(done.data, { agent: { data: { label: 'spam' }, steps: 2, toolCalls: [{ ok: true }, { ok: true }] } });
    t.equal(server.requestCount(), 2, 'as often as a crash-free run: nothing was in flight at the kill');
    t.equal(await runsOf(client, LOOKUP), 2, 'each lookup ran once');
    const sent = server.requests[1]!.body.messages as Array<{ role: string; content: string }>;
    t.same(
      sent.filter((m) => m.role === 'tool').map((m) => m.content),
      ['{"status":"shipped","orderId":"A-1"}', '{"status":"shipped","orderId":"A-2"}'],
      'turn 2 is asked with both journaled results',
    );
  },
);

t.test('the real tiny model drives the agent: a seed calls a tool flow, then answers', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'wfx-agent-model-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const modelPath = join(dir, 'tiny.gguf');
  writeTinyGguf(modelPath, { seed: 7, contextLength: 4096 });
  const { cwd, daemon, run } = await setup(t);
  const created = await run([
    'ai',
    'providers',
    'create',
    'tiny',
    '--kind',
    'local',
    '--model-path',
    modelPath,
    '--threads',
    '1',
    '--default',
  ]);
  t.equal(created.code, 0, created.stderr);
  const client = await adminClient(cwd, daemon.url);

  // The model's words are random, but each seed's run is the same every time: search a
  // bounded number of seeds (each a new version of the agent) for one whose run calls a tool
  // flow and then answers.
  const outcomes: string[] = [];
  let found: InstanceView | undefined;
  for (let seed = 1; seed <= 20 && !found; seed++) {
    await client.flows.publish({ source: FLOWS['agent.yaml'].replace('seed: 1\n', `seed: ${seed}\n`) });
    const started = await run(['run', AGENT, '--set', 'n=1', '--json']);
    const id = (JSON.parse(started.stdout) as { processInstanceId: string }).processInstanceId;
    const settled = async () => {
      const i2 = await client.instances.get(id);
      return i2.stateCd !== 0 || (await client.tasks.list()).items.length > 0 ? i2 : undefined;
    };
    let inst = await eventually('the agent ends or waits for a person', settled);
    // A tool that asks a person: answer it and let the agent go on.
    for (let i = 0; i < 3 && inst.stateCd === 0; i++) {
      for (const task of (await client.tasks.list()).items)
        await client.tasks.answer({
          processInstanceId: task.processInstanceId,
          nodeId: 'ask',
          action: 'COMPLETE',
          data: { inputValue: 'yes' },
        });
      inst = await eventually('the agent goes on', settled);
    }
    const agent = agentOf(inst);
    outcomes.push(
      inst.stateCd === 1
        ? `completed after ${agent?.steps}`
        : `${inst.stateCd}:${inst.data.error?.code} ${inst.data.error?.message}`,
    );
    if (inst.stateCd === 1 && (agent?.calls.some((c) => c.ok === true) ?? false)) found = inst;
    else
      t.ok(
        inst.stateCd === 1 || ['AGENT_MAX_STEPS', 'AI_TRUNCATED'].includes(inst.data.error?.code ?? ''),
        `seed ${seed}: a limit, never anything else (${outcomes.at(-1)})`,
      );
  }
  t.ok(found, `a seed called a tool and answered: ${outcomes.join(', ')}`);
  if (!found) return;
  const agent = agentOf(found)!;
  const call = agent.calls.find((c) => c.ok === true)!;
  const child = await client.instances.get(call.childInstanceId!);
  t.equal(child.stateCd, 1, 'the tool flow ran to completion as a child execution');
  t.equal(child.parentInstanceId, found.processInstanceId);
  t.ok(
    ['spam', 'ham'].includes((found.data.agent as { data: { label: string } }).data.label),
    'the final answer matches the schema',
  );
  t.ok(found.usage && found.usage.calls === agent.steps, 'each turn counted in the usage');
});
