/**
 * A real MCP server for tests of callAgent's MCP tools: the official SDK's server over
 * streamable HTTP (stateless: a transport per request), on 127.0.0.1 and a port of its own.
 * Its tools are given as JSON Schemas with a handler each; it keeps every call and the headers
 * each request came with, and a tool's handler may hold its call (a gate) to stand for a call
 * under way.
 */
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Test } from 'tap';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import {
  CallToolRequestSchema,
  ListToolsRequestSchema,
  type CallToolResult,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js';

export interface TestTool {
  readonly tool: Tool;
  readonly call: (args: Record<string, unknown>) => CallToolResult | Promise<CallToolResult>;
}

export interface TestMcpServer {
  /** Its MCP endpoint. */
  readonly url: string;
  /** Every call, in order. */
  readonly calls: Array<{ readonly name: string; readonly arguments: Record<string, unknown> }>;
  /** The headers of every HTTP request. */
  readonly headers: IncomingHttpHeaders[];
  /** Resolves once `n` calls have arrived. */
  called(n: number): Promise<void>;
}

/** Starts the server with `tools`; it is closed at the end of `t`. */
export async function startMcpServer(t: Test, tools: readonly TestTool[]): Promise<TestMcpServer> {
  const calls: TestMcpServer['calls'] = [];
  const headers: IncomingHttpHeaders[] = [];
  const waiting: Array<{ n: number; resolve: () => void }> = [];
  const http = createServer((req, res) => {
    headers.push(req.headers);
    const server = new Server({ name: 'test-tools', version: '1.0.0' }, { capabilities: { tools: {} } });
    server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: tools.map((x) => x.tool) }));
    server.setRequestHandler(CallToolRequestSchema, async (request) => {
      const args = request.params.arguments ?? {};
      calls.push({ name: request.params.name, arguments: args });
      for (const w of waiting.filter((x) => x.n <= calls.length)) w.resolve();
      const tool = tools.find((x) => x.tool.name === request.params.name);
      if (!tool) return { content: [{ type: 'text', text: `no tool ${request.params.name}` }], isError: true };
      return tool.call(args);
    });
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    res.on('close', () => {
      void transport.close();
      void server.close();
    });
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      void server
        .connect(transport)
        .then(() => transport.handleRequest(req, res, text === '' ? undefined : JSON.parse(text)));
    });
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  t.teardown(
    () =>
      new Promise<void>((resolve) => {
        http.closeAllConnections();
        http.close(() => resolve());
      }),
  );
  const port = (http.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    calls,
    headers,
    called: (n) => (calls.length >= n ? Promise.resolve() : new Promise((resolve) => waiting.push({ n, resolve }))),
  };
}
