import '../setup/fixtures.js'; // fixtures under the OS temp dir (see there)
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import t from 'tap';
import { parse } from 'yaml';
import type { AgentState, InstanceView, WaitingTask } from '../../src/shared/api/index.js';
import { adminClient, startDaemon, wfxIn } from '../helpers/cli.js';
import { eventually } from '../helpers/eventually.js';
import { startMcpServer } from '../helpers/mcp-server.js';
import { kill, scriptedModel } from '../helpers/agent-e2e.js';
import { reply } from '../helpers/openai-server.js';

// Issue #89 on a real daemon: an agent's call of an MCP tool with `approve: true` waits as a
// task; the daemon is SIGKILLed and the task is still there after the restart; COMPLETE (with
// the arguments edited) runs the tool once; CANCEL gives the model a refusal and it goes on.
// Recorded with `wfx test record`, the execution runs again as a flow test.

const AGENT = '89000000-0000-4000-8000-0000000000a1';

t.test(
  'an approval outlives a SIGKILL; COMPLETE runs the tool once, CANCEL is a refusal the model reads',
  async (t) => {
    const mcp = await startMcpServer(t, [
      {
        tool: {
          name: 'send_email',
          description: 'Sends an email',
          inputSchema: { type: 'object', properties: { to: { type: 'string' } }, required: ['to'] },
        },
        call: (args) => ({ content: [{ type: 'text', text: `sent to ${String(args.to)}` }] }),
      },
    ]);
    const cwd = t.testdir({
      'agent.yaml': `processId: ${AGENT}
name: Mailer
nodes:
  start: { type: startEvent, next: agent }
  agent:
    type: callAgent
    prompt: Tell the team.
    tools:
      - { mcp: { url: "${mcp.url}" }, approve: true }
    next: done
  done: { type: endEvent }
`,
    });
    const first = await startDaemon(t, { cwd });
    const run = (args: string[]) => wfxIn(args, { cwd });
    const model = await scriptedModel(t, run);
    t.equal((await run(['flow', 'publish', 'agent.yaml'])).code, 0);

    model.script(
      reply.toolCalls([{ id: 'c1', name: 'send_email', arguments: { to: 'ada@example.com' } }], {
        text: 'I will email Ada first.',
      }),
    );
    const started = await run(['run', AGENT, '--json']);
    t.equal(started.code, 0, started.stderr);
    const id = (JSON.parse(started.stdout) as { processInstanceId: string }).processInstanceId;
    let client = await adminClient(cwd, first.url);
    const tasks = async (): Promise<WaitingTask[]> => (await client.tasks.list({ limit: 100 })).items;
    const before = await eventually('the call waits for approval', async () => (await tasks()).find((x) => x.approval));
    t.match(before, {
      processInstanceId: id,
      nodeId: 'agent',
      nodeType: 'callAgent',
      formTitle: 'Approve the call of send_email',
      approval: {
        tool: 'send_email',
        arguments: { to: 'ada@example.com' },
        reasoning: 'I will email Ada first.',
        server: mcp.url,
      },
    });

    await kill(first.pid);
    const restarted = await startDaemon(t, { cwd });
    client = await adminClient(cwd, restarted.url);
    const after = (await tasks()).find((x) => x.approval);
    t.match(
      after,
      { processInstanceId: id, approval: { callId: 'c1', tool: 'send_email' } },
      'still waiting after the restart',
    );
    t.equal(mcp.calls.length, 0, 'nothing ran before the approval');

    // Approved with the address changed: the tool runs once, with it.
    model.script(reply.toolCalls([{ id: 'c2', name: 'send_email', arguments: { to: 'bob@example.com' } }]));
    const bad = await run(['task', 'complete', id, 'agent', '--data', JSON.stringify({ arguments: '[1' })]);
    t.not(bad.code, 0, 'edited arguments that are no JSON object are refused');
    t.match(bad.stderr, /VALIDATION_ERROR/);
    const approved = await run([
      'task',
      'complete',
      id,
      'agent',
      '--data',
      JSON.stringify({ arguments: '{"to":"ada@corp.example"}' }),
    ]);
    t.equal(approved.code, 0, approved.stderr);
    const second = await eventually('the next call waits for approval', async () =>
      (await tasks()).find((x) => x.approval?.callId === 'c2'),
    );
    t.same(second.approval?.arguments, { to: 'bob@example.com' });
    t.same(mcp.calls, [{ name: 'send_email', arguments: { to: 'ada@corp.example' } }], 'run once, as edited');

    // Refused: the model reads why and answers.
    model.script(reply.text('Ada is told; Bob was not.'));
    const refused = await run(['task', 'cancel', id, 'agent']);
    t.equal(refused.code, 0, refused.stderr);
    const inst = await eventually('the agent has answered', async () => {
      const view: InstanceView = await client.instances.get(id);
      return view.state === 'COMPLETED' ? view : null;
    });
    t.equal(mcp.calls.length, 1, 'the refused call never reached the server');
    const agent = inst.nodes.find((n) => n.nodeId === 'agent')!.agent as AgentState;
    t.same(
      agent.messages.filter((m) => m.role === 'tool').map((m) => m.content),
      ['sent to ada@corp.example', JSON.stringify({ error: 'a person refused this call' })],
    );
    t.same(
      agent.calls.map((c) => [c.id, c.approval, c.ok]),
      [
        ['c1', 'approved', true],
        ['c2', 'refused', false],
      ],
    );
    t.match(inst.data, { agent: { text: 'Ada is told; Bob was not.' } });

    // Recorded as a flow test: the MCP tool's answer a mock, the approvals the steps; it passes.
    const recorded = await run(['test', 'record', id, '--out', 'agent.test.yaml', '--flow', 'agent.yaml']);
    t.equal(recorded.code, 0, recorded.stderr);
    const file = parse(await readFile(join(cwd, 'agent.test.yaml'), 'utf8')) as {
      cases: Array<{ mocks: Record<string, unknown>; steps: Array<Record<string, unknown>> }>;
    };
    t.same(file.cases[0]!.mocks['agent.send_email'], { text: 'sent to ada@corp.example' });
    t.same(
      file.cases[0]!.steps.filter((s) => 'answer' in s),
      [
        { answer: { node: 'agent', data: { arguments: '{"to":"ada@corp.example"}' } } },
        { answer: { node: 'agent', action: 'CANCEL' } },
      ],
    );
    const replayed = await run(['test', 'agent.test.yaml']);
    t.equal(replayed.code, 0, replayed.stdout + replayed.stderr);
  },
);
