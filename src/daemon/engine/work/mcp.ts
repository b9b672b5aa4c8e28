/**
 * A callAgent's MCP servers, reached with the official SDK's client over streamable HTTP: their
 * tools listed for a model turn, and one tool called. Each is work outside the step (the engine's
 * work runner): a connection made for it, through the daemon's network policy, and closed after.
 * Header values hold secret stand-ins until the runner opens them (work/secret-refs.ts).
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { errorMessage } from '../../../shared/errors.js';
import { VERSION } from '../../../shared/version.js';
import { forbiddenIn, NetworkPolicy } from '../../outbound/network-policy.js';
import type { WorkResult } from '../../outbound/result.js';

/** An MCP server as a turn reaches it. */
export interface McpServer {
  readonly url: string;
  /** Header values, `{secret.NAME}` as stand-ins (`secrets`: stand-in -> name). */
  readonly headers: Readonly<Record<string, string>>;
  readonly secrets?: Readonly<Record<string, string>>;
  /** The server's tools offered; absent: every one. */
  readonly allow?: readonly string[];
  /** Its entry's index in the node's `tools`. */
  readonly entry: number;
}

/** A tool of an MCP server as a model is offered it. */
export interface McpListedTool {
  /** Its name for the model (the server's, with what model APIs refuse made `_`). */
  readonly name: string;
  /** Its name on the server. */
  readonly tool: string;
  readonly description: string;
  readonly parameters: Record<string, unknown>;
  readonly entry: number;
  /** The server says calling it twice does no more than once (`idempotentHint` or `readOnlyHint`). */
  readonly idempotent: boolean;
}

/** One call of a tool of an MCP server. */
export interface McpCall {
  readonly server: McpServer;
  /** The agent's call it answers. */
  readonly callId: string;
  readonly tool: string;
  readonly arguments: Record<string, unknown>;
}

/** What a call's result is as work: the text the model reads, and whether the tool said it failed. */
export interface McpCallValue {
  readonly text: string;
  readonly isError: boolean;
}

/** How long connecting and listing, or one call, may take. */
export const MCP_LIST_TIMEOUT_MS = 30_000;
export const MCP_CALL_TIMEOUT_MS = 5 * 60_000;
/** Pages of tools/list read at most from one server. */
const MAX_LIST_PAGES = 20;

let builtInPolicy: NetworkPolicy | undefined;

/** The SDK's client, loaded at the first connection: a daemon's start does without it. */
let sdk:
  | Promise<
      [
        typeof import('@modelcontextprotocol/sdk/client/index.js'),
        typeof import('@modelcontextprotocol/sdk/client/streamableHttp.js'),
      ]
    >
  | undefined;

/** A connected client of `server` with its headers opened (`headers`), through `network`. */
async function connect(
  server: McpServer,
  headers: Readonly<Record<string, string>>,
  network: NetworkPolicy | undefined,
  signal: AbortSignal,
): Promise<Client> {
  const policy = network ?? (builtInPolicy ??= new NetworkPolicy());
  const [{ Client }, { StreamableHTTPClientTransport }] = await (sdk ??= Promise.all([
    import('@modelcontextprotocol/sdk/client/index.js'),
    import('@modelcontextprotocol/sdk/client/streamableHttp.js'),
  ]));
  const transport = new StreamableHTTPClientTransport(new URL(server.url), {
    requestInit: { headers: { ...headers } },
    fetch: (input, init) => fetch(input, { ...init, dispatcher: policy.dispatcher() } as RequestInit),
  });
  const client = new Client({ name: 'wfx', version: VERSION });
  await client.connect(transport, { signal, timeout: MCP_LIST_TIMEOUT_MS });
  return client;
}

/** Why talking to `server` failed, as a work failure. */
function unavailable(server: McpServer, err: unknown): Extract<WorkResult, { ok: false }> {
  const refused = forbiddenIn(err);
  const why = refused ? refused.message : errorMessage(err);
  return { ok: false, code: 'MCP_UNAVAILABLE', message: `MCP server ${server.url}: ${why}` };
}

/** Model APIs take `[A-Za-z0-9_-]{1,64}` as a function name. */
export const modelName = (tool: string): string => tool.replace(/[^A-Za-z0-9_-]/g, '_').slice(0, 64) || 'tool';

/** The tools of `server` (those it allows), or why they could not be listed. */
export async function listMcpTools(
  server: McpServer,
  headers: Readonly<Record<string, string>>,
  network: NetworkPolicy | undefined,
  signal: AbortSignal,
): Promise<{ ok: true; tools: McpListedTool[] } | Extract<WorkResult, { ok: false }>> {
  let client: Client | undefined;
  try {
    client = await connect(server, headers, network, signal);
    const tools: McpListedTool[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < MAX_LIST_PAGES; page++) {
      const listed = await client.listTools(cursor === undefined ? {} : { cursor }, {
        signal,
        timeout: MCP_LIST_TIMEOUT_MS,
      });
      for (const t of listed.tools) {
        if (server.allow !== undefined && !server.allow.includes(t.name)) continue;
        tools.push({
          name: modelName(t.name),
          tool: t.name,
          description: t.description ?? t.title ?? t.name,
          parameters: t.inputSchema as Record<string, unknown>,
          entry: server.entry,
          idempotent: t.annotations?.idempotentHint === true || t.annotations?.readOnlyHint === true,
        });
      }
      cursor = listed.nextCursor;
      if (cursor === undefined) break;
    }
    return { ok: true, tools };
  } catch (err) {
    return unavailable(server, err);
  } finally {
    await client?.close().catch(() => {});
  }
}

/** Calls a tool: its result as the model reads it (a tool's own error too), or why the server could not be reached. */
export async function callMcpTool(
  call: McpCall,
  headers: Readonly<Record<string, string>>,
  network: NetworkPolicy | undefined,
  signal: AbortSignal,
): Promise<WorkResult> {
  let client: Client | undefined;
  try {
    client = await connect(call.server, headers, network, signal);
    const result = (await client.callTool({ name: call.tool, arguments: call.arguments }, undefined, {
      signal,
      timeout: MCP_CALL_TIMEOUT_MS,
    })) as CallToolResult;
    const value: McpCallValue = { text: resultText(result), isError: result.isError === true };
    return { ok: true, value };
  } catch (err) {
    return unavailable(call.server, err);
  } finally {
    await client?.close().catch(() => {});
  }
}

/** A tool result as text: its structured content as JSON when it has one, else its text parts. */
function resultText(result: CallToolResult): string {
  if (result.structuredContent !== undefined) return JSON.stringify(result.structuredContent);
  const parts = result.content.map((c) => {
    if (c.type === 'text') return c.text;
    if (c.type === 'resource' && 'text' in c.resource) return c.resource.text;
    return `[${c.type}]`;
  });
  return parts.join('\n');
}
