/**
 * The work runner's side of a callAgent's MCP servers: the headers' secrets opened for each
 * connection (and taken out of what comes back), the servers' tools listed beside the agent's
 * flows for a model turn, and a tool called.
 */
import type { AiCall } from '../../ai/types.js';
import type { NetworkPolicy } from '../../outbound/network-policy.js';
import type { WorkResult } from '../../outbound/result.js';
import type { WorkOrder } from '../step/index.js';
import { callMcpTool, listMcpTools, type McpCall, type McpListedTool, type McpServer } from './mcp.js';
import { withoutSecretValues } from './secret-refs.js';

type Failure = Extract<WorkResult, { ok: false }>;

export interface McpWorkDeps {
  readonly network: NetworkPolicy | undefined;
  /** The values of a call's secret stand-ins, for its execution's organization and environment. */
  readonly openSecrets: (
    order: WorkOrder,
    byToken: Readonly<Record<string, string>>,
  ) => Promise<{ ok: true; values: Map<string, string>; named: Map<string, string> } | Failure>;
  /** A line in the execution's log. */
  readonly log: (order: WorkOrder, line: string) => void;
  /** How servers are reached: the SDK's client over HTTP, unless a flow test's mocks stand in (flow-tests/mocks.ts). */
  readonly client?: McpClient;
}

/** Lists a server's tools and calls one (work/mcp.ts: listMcpTools, callMcpTool). */
export interface McpClient {
  readonly list: typeof listMcpTools;
  readonly call: typeof callMcpTool;
}

const SDK_CLIENT: McpClient = { list: listMcpTools, call: callMcpTool };

export class McpWork {
  private readonly client: McpClient;

  constructor(private readonly deps: McpWorkDeps) {
    this.client = deps.client ?? SDK_CLIENT;
  }

  /**
   * The tools of every server of a turn, added to its call's: a tool whose name another tool
   * has already is left out, and the log says so. Or why a server could not be listed.
   */
  async list(
    order: WorkOrder,
    request: { readonly call: AiCall; readonly mcp?: readonly McpServer[] },
    signal: AbortSignal,
  ): Promise<{ ok: true; call: AiCall; tools: McpListedTool[] } | Failure> {
    const taken = new Set((request.call.tools ?? []).map((t) => t.name));
    const tools: McpListedTool[] = [];
    for (const server of request.mcp ?? []) {
      const headers = await this.headers(order, server);
      if (!headers.ok) return headers;
      const listed = await this.client.list(server, headers.values, this.deps.network, signal);
      if (!listed.ok) return withoutSecretValues(listed, headers.named) as Failure;
      for (const t of listed.tools) {
        if (taken.has(t.name)) {
          this.deps.log(order, `MCP tool ${t.tool} of ${server.url} is not offered: another tool is named ${t.name}`);
          continue;
        }
        taken.add(t.name);
        tools.push(t);
      }
    }
    const offered = tools.map(({ name, description, parameters }) => ({ name, description, parameters }));
    return { ok: true, tools, call: { ...request.call, tools: [...(request.call.tools ?? []), ...offered] } };
  }

  /** Calls one tool (work/mcp.ts, callMcpTool), no secret value in what comes back. */
  async call(order: WorkOrder, call: McpCall, signal: AbortSignal): Promise<WorkResult> {
    const headers = await this.headers(order, call.server);
    if (!headers.ok) return headers;
    const result = await this.client.call(call, headers.values, this.deps.network, signal);
    return withoutSecretValues(result, headers.named);
  }

  /** `server`'s headers with their secrets' values in place of the stand-ins. */
  private async headers(
    order: WorkOrder,
    server: McpServer,
  ): Promise<{ ok: true; values: Record<string, string>; named: Map<string, string> } | Failure> {
    if (server.secrets === undefined) return { ok: true, values: { ...server.headers }, named: new Map() };
    const opened = await this.deps.openSecrets(order, server.secrets);
    if (!opened.ok) return opened;
    const values: Record<string, string> = {};
    for (const [name, value] of Object.entries(server.headers)) {
      let text = value;
      for (const [token, secret] of opened.values) text = text.replaceAll(token, secret);
      values[name] = text;
    }
    return { ok: true, values, named: opened.named };
  }
}
