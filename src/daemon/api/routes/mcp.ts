/**
 * /mcp: the Model Context Protocol's streamable HTTP transport (the official SDK's server), so
 * that an AI client calls published flows as tools (api/mcp/tools.ts lists them, api/mcp/call.ts
 * runs a call). It takes the credential any route takes (an API key or a bearer token; not a
 * console session, which a page of another site could ride) with WORKFLOW_EXECUTE, and counts
 * each request against the key's rate limit. Sessions: api/mcp/sessions.ts. GET, the protocol's
 * stream for messages a server sends unasked, is refused (405): wfx sends none.
 */
import type { IncomingMessage } from 'node:http';
import { randomUUID } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
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
import { MCP_DEFAULT_WAIT_SECONDS, McpQuery, type Environment } from '../../../shared/api/index.js';
import { WfxError } from '../../../shared/errors.js';
import { VERSION } from '../../../shared/version.js';
import type { WfxState } from '../../state/state.js';
import { actorOf, type Caller } from '../caller.js';
import { callFlowTool, type CallDeps } from '../mcp/call.js';
import type { McpSessions, McpSession } from '../mcp/sessions.js';
import { findTool, flowTools, toolListing } from '../mcp/tools.js';

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
interface RequestContext {
  readonly request: FastifyRequest;
  readonly caller: Caller;
  readonly environment: Environment;
  readonly waitSeconds: number;
}

/** The /mcp route (see the top of this file). */
export function mcpRoutes(fastify: FastifyInstance, deps: McpRouteDeps): void {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  // One route per method: each is its own operation in /openapi.json.
  const summaries = {
    POST: 'MCP (streamable HTTP): a JSON-RPC message of a session, or initialize to open one',
    DELETE: 'MCP: end a session (its calls run on)',
    GET: "MCP: the stream of a server's unasked messages, refused (405): wfx sends none",
  } as const;
  for (const method of ['POST', 'DELETE', 'GET'] as const)
    app.route({
      method,
      url: '/mcp',
      config: { auth: { permission: 'WORKFLOW_EXECUTE' } },
      schema: { tags: ['mcp'], summary: summaries[method], querystring: McpQuery },
      handler: async (request, reply) => {
        const caller = request.caller!;
        if (caller.session)
          throw new WfxError('FORBIDDEN', '/mcp takes an API key or a bearer token, not a console session');
        if (request.method === 'GET') return rpcError(reply, 405, -32000, 'this server sends no messages unasked');
        const owner = `${actorOf(caller)}\0${caller.organization ?? ''}`;
        const header = request.headers['mcp-session-id'];
        let session: McpSession | undefined;
        if (typeof header === 'string') {
          session = deps.sessions.get(header, owner);
          if (session === undefined) return rpcError(reply, 404, -32001, 'Session not found');
        } else if (request.method === 'POST' && isInitializeRequest(request.body)) {
          if (!deps.sessions.makeRoom(owner))
            return rpcError(reply, 503, -32000, 'the daemon holds as many MCP sessions as it may; try again later');
          session = await openSession(deps, owner);
        } else return rpcError(reply, 400, -32000, 'Bad Request: no session id; initialize first');
        const context: RequestContext = {
          request,
          caller,
          environment: request.query.environment ?? 'PRODUCTION',
          waitSeconds: request.query.wait ?? MCP_DEFAULT_WAIT_SECONDS,
        };
        const raw = request.raw as IncomingMessage & { auth?: AuthInfo };
        raw.auth = { token: '', clientId: owner, scopes: [], extra: { context } };
        // A client ending its session leaves its calls' executions running, as the session's expiry does.
        if (request.method === 'DELETE') session.ending = true;
        reply.hijack();
        await session.transport.handleRequest(raw, reply.raw, request.body);
      },
    });
}

/** A JSON-RPC error as the transport itself answers one, for what is refused before it. */
function rpcError(reply: FastifyReply, status: number, code: number, message: string): FastifyReply {
  return reply.code(status).send({ jsonrpc: '2.0', error: { code, message }, id: null });
}

/** A new session: its server, with the tools handlers, and its transport. */
async function openSession(deps: McpRouteDeps, owner: string): Promise<McpSession> {
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
