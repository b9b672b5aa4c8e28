/**
 * A daemon's server with an agent and its tool flows, for tests of what the CLI shows of a
 * callAgent: the model is scripted (FakeAiRunner), the flows are published to `default`, the
 * server listens on 127.0.0.1 (port 0), and `wfx` runs in-process against it.
 */
import type { Test } from 'tap';
import { WfxClient } from '../../src/client/client.js';
import { FakeAiRunner, saveProvider, type FakeTurn } from './fake-ai.js';
import { apiHarness, type ApiHarness } from './api.js';
import { wfxIn, type CliResult } from './cli.js';

export const LOOKUP_ID = '11111111-1111-4111-8111-111111111111';
export const REFUND_ID = '22222222-2222-4222-8222-222222222222';
export const APPROVE_ID = '33333333-3333-4333-8333-333333333333';
export const AGENT_ID = '44444444-4444-4444-8444-444444444444';

/** Tool `look_up_order`: completes with `{status, orderId}`. */
const LOOKUP = `processId: ${LOOKUP_ID}
name: Look up order
description: Finds an order by its id
inputs: { type: object, required: [orderId], additionalProperties: false, properties: { orderId: { type: string } } }
nodes:
  start: { type: startEvent, next: out }
  out: { type: outputNode, outputs: { status: shipped, orderId: "{orderId}" }, next: done }
  done: { type: endEvent }
`;
/** A lookup tool under `id` whose input is checked strictly: `orderId` must be. */
export const strictLookupFlow = (id: string): string => `processId: ${id}
name: Look up order
description: Finds an order by its id
inputs:
  type: object
  required: [orderId]
  additionalProperties: false
  properties: { orderId: { enum: [A-1, A-2] } }
nodes:
  start: { type: startEvent, next: out }
  out: { type: outputNode, outputs: { status: shipped, orderId: "{orderId}" }, next: done }
  done: { type: endEvent }
`;
/** Tool `refund` under `id`: fails (NO_BRANCH_MATCHED) unless the amount is over 1000. */
export const refundFlow = (id: string): string => `processId: ${id}
name: Refund
inputs: { type: object, required: [amount], properties: { amount: { type: number } } }
nodes:
  start: { type: startEvent, next: check }
  check:
    type: exclusiveGateway
    branches: [{ condition: "\${amount > 1000}", next: done }]
  done: { type: endEvent }
`;
/** Tool `ask_a_supervisor` under `id`: waits at an input node. */
export const approveFlow = (id: string): string => `processId: ${id}
name: Ask a supervisor
inputs: { type: object, properties: { reason: { type: string } } }
nodes:
  start: { type: startEvent, next: ask }
  ask: { type: inputNode, inputType: textbox, formTitle: "Approve: {reason}", next: out }
  out: { type: outputNode, outputs: { approved: "{inputValue}" }, next: done }
  done: { type: endEvent }
`;
const AGENT = `processId: ${AGENT_ID}
name: Support
nodes:
  start: { type: startEvent, next: agent }
  agent:
    type: callAgent
    name: Support agent
    systemPrompt: You help customers.
    prompt: "Help with order {orderId}"
    tools: [${LOOKUP_ID}, ${REFUND_ID}, ${APPROVE_ID}]
    next: done
  done: { type: endEvent }
`;

/**
 * The first answer of the scripted model: four tool calls, one per way a call ends (done,
 * failed, waiting at an input node, refused for its arguments).
 */
export const FOUR_CALLS: FakeTurn = {
  toolCalls: [
    { name: 'look_up_order', arguments: { orderId: 'A1' } },
    { name: 'refund', arguments: { amount: 5 } },
    { name: 'ask_a_supervisor', arguments: { reason: 'refund 5 EUR' } },
    { name: 'look_up_order', arguments: { order: 'A1' } },
  ],
  usage: { inputTokens: 30, outputTokens: 8 },
};

export interface AgentDaemon {
  readonly h: ApiHarness;
  /** `wfx ...args` against the server with an admin key of `default`. */
  wfx(args: string[]): Promise<CliResult>;
  /** An API client of the server with that key (for the TUI's hooks). */
  readonly client: WfxClient;
  /**
   * Starts the agent flow and resolves once its first answer's tool calls have settled: the
   * tool executions that end at once have ended, the one asking a supervisor waits. Returns
   * the agent's execution id and the waiting tool execution's id.
   */
  startAgent(): Promise<{ agentId: string; waitingId: string }>;
}

/** The server with the tool flows and the agent published, the model answering `turns` in order (then "final answer"). */
export async function agentDaemon(t: Test, turns: readonly FakeTurn[]): Promise<AgentDaemon> {
  const ai = new FakeAiRunner((_call, n) => turns[n - 1] ?? { text: 'final answer' });
  const h = await apiHarness(t, { ai });
  await saveProvider(h.store, 'default');
  for (const flow of [LOOKUP, refundFlow(REFUND_ID), approveFlow(APPROVE_ID), AGENT]) await h.publish(flow);
  const key = await h.key('admin', 'default');
  const url = await h.app.listen({ host: '127.0.0.1', port: 0 });
  return {
    h,
    wfx: (args) => wfxIn(['--url', url, '--api-key', key.apiKey, ...args]),
    client: new WfxClient({ url, apiKey: key.apiKey, credentialSource: 'test' }),
    async startAgent() {
      const agentId = (await h.start(AGENT_ID, { orderId: 'A1' })).processInstanceId;
      const child = (id: string) => id !== agentId;
      await h.waitFor((e) => child(e.processInstanceId) && e.type === 'PROCESS_COMPLETED');
      await h.waitFor((e) => child(e.processInstanceId) && e.type === 'PROCESS_FAILED');
      const waiting = await h.waitFor((e) => child(e.processInstanceId) && e.type === 'NODE_WAITING');
      return { agentId, waitingId: waiting.processInstanceId };
    },
  };
}
