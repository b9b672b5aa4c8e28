/**
 * A callAgent's MCP servers in a flow test. The case mocks each tool as `AGENT.TOOL` (TOOL: its
 * name on its server). A server offers every mocked tool its `allow` names, or all of them when
 * it has no `allow`; where two offer one name the first wins, as with real servers (work/mcp-work.ts
 * does that part for both). A call takes the tool's next answer. An agent none of whose tools the
 * case mocks reaches its real servers when the network is allowed; otherwise they offer nothing.
 */
import type { McpClient } from '../engine/work/mcp-work.js';
import { modelName, type McpCallValue } from '../engine/work/mcp.js';
import type { WorkResult } from '../outbound/result.js';
import type { MockAnswer } from './test-case.js';

/** The tools the case mocks for agent `nodeId`, by their names on their servers. */
export function mockedTools(mocks: Readonly<Record<string, unknown>>, nodeId: string): string[] {
  const prefix = `${nodeId}.`;
  return Object.keys(mocks)
    .filter((key) => key.startsWith(prefix) && key.length > prefix.length)
    .map((key) => key.slice(prefix.length));
}

/**
 * Servers that offer `tools` and answer each call with `answer(tool)`; `wrongKind` is thrown for
 * an answer an MCP tool cannot give.
 */
export function mockedMcpClient(
  tools: readonly string[],
  answer: (tool: string) => MockAnswer,
  wrongKind: (tool: string) => Error,
): McpClient {
  return {
    list: (server) =>
      Promise.resolve({
        ok: true,
        tools: tools
          .filter((tool) => server.allow === undefined || server.allow.includes(tool))
          .map((tool) => ({
            name: modelName(tool),
            tool,
            description: `${tool} (mocked by the case)`,
            parameters: { type: 'object' },
            entry: server.entry,
            idempotent: false,
          })),
      }),
    call: (call) => Promise.resolve(resultOf(answer(call.tool), () => wrongKind(call.tool))),
  };
}

/** A mock's answer as the call's work result (work/mcp.ts, callMcpTool). */
function resultOf(answer: MockAnswer, wrong: () => Error): WorkResult {
  if ('fail' in answer) return { ok: false, code: answer.fail.code as never, message: answer.fail.message };
  let value: McpCallValue;
  if ('result' in answer) value = { text: JSON.stringify(answer.result), isError: false };
  else if ('text' in answer) value = { text: answer.text, isError: false };
  else if ('error' in answer) value = { text: answer.error, isError: true };
  else throw wrong();
  return { ok: true, value };
}
