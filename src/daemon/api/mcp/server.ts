/**
 * The SDK's side of /mcp (routes/mcp.ts): a session's server, with the handlers of tools/list and
 * tools/call, and its streamable HTTP transport. Loaded by the route at its first request: the
 * SDK (and zod under it) is kept off a daemon's start.
 */
import { randomUUID } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { AuthInfo } from '@modelcontextprotocol/sdk/server/auth/types.js';
import {
  CallToolRequestSchema,
  ErrorCode,
  isInitializeRequest,
  ListToolsRequestSchema,
  McpError,
} from '@modelcontextprotocol/sdk/types.js';
import type { Environment } from '../../../shared/api/index.js';
import { VERSION } from '../../../shared/version.js';
import type { WfxState } from '../../state/state.js';
import type { Caller } from '../caller.js';
import { callFlowTool, type CallDeps } from './call.js';
import type { McpSessions, McpSession } from './sessions.js';
import { findTool, flowTools, toolListing } from './tools.js';

export { isInitializeRequest };

/** Tools in one tools/list page. */
export const TOOLS_PAGE = 200;

const INSTRUCTIONS =
  'Each tool runs a published wfx flow and answers with its result once the flow ends. ' +
  'A flow that waits for a person, or runs longer than the call waits, answers with its execution id and that it still runs.';

export interface McpRouteDeps extends CallDeps {
  readonly state: WfxState;
  readonly sessions: McpSessions;
}

/** What one HTTP request gives the MCP handlers of its messages (through the SDK's authInfo). */
export interface RequestContext {
  readonly request: FastifyRequest;
  readonly caller: Caller;
  readonly environment: Environment;
  readonly waitSeconds: number;
}

/** `context` as the SDK hands it to the handlers of the request's messages. */
export function authInfoOf(owner: string, context: RequestContext): AuthInfo {
  return { token: '', clientId: owner, scopes: [], extra: { context } };
}

/** A new session: its server, with the tools handlers, and its transport. */
export async function openSession(deps: McpRouteDeps, owner: string): Promise<McpSession> {
  const server = new Server(
    { name: 'wfx', version: VERSION },
    { capabilities: { tools: {} }, instructions: INSTRUCTIONS },
  );
  const transport = new StreamableHTTPServerTransport({
    sessionIdGenerator: () => randomUUID(),
    onsessioninitialized: (id) => deps.sessions.add(id, session),
    onsessionclosed: (id) => deps.sessions.forget(id),
  });
  const session: McpSession = { owner, server, transport, calls: 0, lastUsed: Date.now(), ending: false };
  transport.onclose = () => {
    if (transport.sessionId !== undefined) deps.sessions.forget(transport.sessionId);
  };

  server.setRequestHandler(ListToolsRequestSchema, (req, extra) => {
    const c = contextOf(extra.authInfo);
    const tools = flowTools(deps.state, c.caller.organization, c.environment);
    const after = req.params?.cursor;
    const from = after === undefined ? 0 : tools.findIndex((t) => t.name > after);
    const page = from < 0 ? [] : tools.slice(from, from + TOOLS_PAGE);
    const more = from >= 0 && from + TOOLS_PAGE < tools.length;
    return { tools: page.map(toolListing), ...(more && { nextCursor: page.at(-1)!.name }) };
  });

  server.setRequestHandler(CallToolRequestSchema, async (req, extra) => {
    const c = contextOf(extra.authInfo);
    const tool = findTool(deps.state, c.caller.organization, c.environment, req.params.name);
    if (tool === undefined) throw new McpError(ErrorCode.InvalidParams, `no tool named ${req.params.name}`);
    session.calls++;
    try {
      return await callFlowTool(
        deps,
        {
          ...c,
          signal: extra.signal,
          sessionEnded: () => session.ending,
          progressToken: req.params._meta?.progressToken,
          notify: extra.sendNotification,
        },
        tool,
        req.params.arguments ?? {},
      );
    } finally {
      session.calls--;
      session.lastUsed = Date.now();
    }
  });
  await server.connect(transport);
  return session;
}

function contextOf(auth: AuthInfo | undefined): RequestContext {
  const context = auth?.extra?.context as RequestContext | undefined;
  // Every message reaches the handlers through the route, which sets it.
  if (context === undefined) throw new McpError(ErrorCode.InternalError, 'a message without its request');
  return context;
}
