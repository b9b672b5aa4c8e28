/**
 * /mcp: the Model Context Protocol's streamable HTTP transport (the official SDK's server), so
 * that an AI client calls published flows as tools (api/mcp/tools.ts lists them, api/mcp/call.ts
 * runs a call). It takes the credential any route takes (an API key or a bearer token; not a
 * console session, which a page of another site could ride) with WORKFLOW_EXECUTE, and counts
 * each request against the key's rate limit. Sessions: api/mcp/sessions.ts. GET, the protocol's
 * stream for messages a server sends unasked, is refused (405): wfx sends none.
 */
import type { IncomingMessage } from 'node:http';
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { AuthInfo } from '@modelcontextprotocol/sdk/server/auth/types.js';
import { MCP_DEFAULT_WAIT_SECONDS, McpQuery } from '../../../shared/api/index.js';
import { WfxError } from '../../../shared/errors.js';
import { actorOf } from '../caller.js';
import type { McpSession } from '../mcp/sessions.js';
import type { McpRouteDeps, RequestContext } from '../mcp/server.js';

export type { McpRouteDeps };

/** The SDK's side (api/mcp/server.ts), loaded at the first request: a daemon's start does without it. */
let sdkSide: Promise<typeof import('../mcp/server.js')> | undefined;

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
        const sdk = await (sdkSide ??= import('../mcp/server.js'));
        if (caller.session)
          throw new WfxError('FORBIDDEN', '/mcp takes an API key or a bearer token, not a console session');
        if (request.method === 'GET') return rpcError(reply, 405, -32000, 'this server sends no messages unasked');
        const owner = `${actorOf(caller)}\0${caller.organization ?? ''}`;
        const header = request.headers['mcp-session-id'];
        let session: McpSession | undefined;
        if (typeof header === 'string') {
          session = deps.sessions.get(header, owner);
          if (session === undefined) return rpcError(reply, 404, -32001, 'Session not found');
        } else if (request.method === 'POST' && sdk.isInitializeRequest(request.body)) {
          if (!deps.sessions.makeRoom(owner))
            return rpcError(reply, 503, -32000, 'the daemon holds as many MCP sessions as it may; try again later');
          session = await sdk.openSession(deps, owner);
        } else return rpcError(reply, 400, -32000, 'Bad Request: no session id; initialize first');
        const context: RequestContext = {
          request,
          caller,
          environment: request.query.environment ?? 'PRODUCTION',
          waitSeconds: request.query.wait ?? MCP_DEFAULT_WAIT_SECONDS,
        };
        const raw = request.raw as IncomingMessage & { auth?: AuthInfo };
        raw.auth = sdk.authInfoOf(owner, context);
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
