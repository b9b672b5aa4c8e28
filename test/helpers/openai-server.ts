/**
 * An OpenAI-compatible HTTP server for tests, on 127.0.0.1 and a port the OS picks:
 * `POST /v1/chat/completions` (streamed as SSE or not, as asked) and `GET /v1/models`.
 *
 * Two sources of answers, per request:
 * - scripted replies, queued with `script(...)` and taken one per request, for what a model
 *   cannot be made to do on demand (429 with Retry-After, 5xx, 401, finish reason length or
 *   content_filter, invalid JSON, an SSE stream cut mid-event, a hang, a 400 refusing json_schema);
 * - when no reply is queued, a REAL model (the tiny GGUF of tiny-gguf.ts, run through the daemon's
 *   own local kind): response_format json_schema becomes a grammar, and usage is the real count.
 *
 * It counts and records every completion request (the end-to-end tests count calls across a
 * SIGKILL) and can require a bearer key. The mock servers on the registry (`@dwmkerr/mock-llm`,
 * `openai-api-mock`) answer canned text; none runs a real model behind the protocol or cuts a
 * stream mid-event.
 */
import { once } from 'node:events';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { LocalModelKind } from '../../src/daemon/ai/local-model.js';
import type { JsonMode } from '../../src/daemon/ai/provider-kind.js';
import type { AiMessage, AiTool } from '../../src/daemon/ai/types.js';
import type { AiProvider } from '../../src/daemon/state/state.js';
import { errorMessage } from '../../src/shared/errors.js';

/** A reply the server gives to the next request instead of asking the model. Build them with `reply`. */
export type ScriptedReply =
  | {
      readonly kind: 'status';
      readonly status: number;
      readonly message: string;
      readonly headers?: Readonly<Record<string, string>>;
    }
  | {
      readonly kind: 'answer';
      readonly text: string;
      readonly finishReason: string;
      readonly usage: { readonly inputTokens: number; readonly outputTokens: number };
      /** Streamed answers only: the SSE bytes written in pieces of this many bytes, each its own write. */
      readonly splitEvery?: number;
      /** Streamed answers only: the connection is cut after this many bytes (no finish reason arrives). */
      readonly cutAfter?: number;
      /** Tool calls the answer asks for (arguments as JSON text), streamed as OpenAI does: id and name, then the arguments in pieces. */
      readonly toolCalls?: readonly ToolCallReply[];
    }
  /** Reads the request and never answers (until the client gives up or the server closes). */
  | { readonly kind: 'hang' };

/** A tool call of a scripted answer. */
export interface ToolCallReply {
  readonly id: string;
  readonly name: string;
  /** JSON text (or anything a model may write). */
  readonly arguments: string;
}

/** Builders of scripted replies. */
export const reply = {
  /** An error status with an OpenAI-style error body. */
  status: (status: number, message = `error ${status}`, headers?: Record<string, string>): ScriptedReply => ({
    kind: 'status',
    status,
    message,
    ...(headers && { headers }),
  }),
  /** 429 with a Retry-After header (seconds or an HTTP date). */
  rateLimited: (retryAfter: string): ScriptedReply => ({
    kind: 'status',
    status: 429,
    message: 'Rate limit reached, please retry later',
    headers: { 'retry-after': retryAfter },
  }),
  /** 400 as OpenAI-compatible servers refuse a json_schema response_format. */
  refuseJsonSchema: (): ScriptedReply => ({
    kind: 'status',
    status: 400,
    message: "Invalid parameter: 'response_format' of type 'json_schema' is not supported with this model.",
  }),
  /** An answer; finish reason `stop` and small usage unless given. */
  text: (
    text: string,
    options: {
      finishReason?: string;
      usage?: { inputTokens: number; outputTokens: number };
      splitEvery?: number;
      cutAfter?: number;
    } = {},
  ): ScriptedReply => ({
    kind: 'answer',
    text,
    finishReason: options.finishReason ?? 'stop',
    usage: options.usage ?? { inputTokens: 7, outputTokens: 3 },
    ...(options.splitEvery !== undefined && { splitEvery: options.splitEvery }),
    ...(options.cutAfter !== undefined && { cutAfter: options.cutAfter }),
  }),
  hang: (): ScriptedReply => ({ kind: 'hang' }),
  /** An answer asking for tools (finish reason tool_calls); arguments given as objects are written as JSON. */
  toolCalls: (
    calls: ReadonlyArray<{ readonly name: string; readonly arguments: unknown; readonly id?: string }>,
    options: { usage?: { inputTokens: number; outputTokens: number }; splitEvery?: number; text?: string } = {},
  ): ScriptedReply => ({
    kind: 'answer',
    text: options.text ?? '',
    finishReason: 'tool_calls',
    usage: options.usage ?? { inputTokens: 9, outputTokens: 4 },
    toolCalls: calls.map((c, i) => ({
      id: c.id ?? `call_s${i + 1}`,
      name: c.name,
      arguments: typeof c.arguments === 'string' ? c.arguments : JSON.stringify(c.arguments),
    })),
    ...(options.splitEvery !== undefined && { splitEvery: options.splitEvery }),
  }),
};

/** A completion request as the server received it. */
export interface RecordedRequest {
  /** Path and query as requested. */
  readonly url: string;
  readonly body: Record<string, unknown>;
  /** Lower-case header names. */
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  /** `model` when the real model answered it, else `script`. */
  readonly answeredBy: 'model' | 'script';
}

export interface OpenAiServerOptions {
  /** A GGUF file to answer with when no scripted reply is queued (else such requests get 503). */
  readonly modelPath?: string;
  /** The model's name in /v1/models and in answers (default `tiny`). */
  readonly modelName?: string;
  /** Every request must carry `Authorization: Bearer <apiKey>`; 401 otherwise. */
  readonly apiKey?: string;
}

export interface OpenAiServer {
  /** The base URL to register: `http://127.0.0.1:<port>/v1`. */
  readonly baseUrl: string;
  /** Every completion request so far, oldest first. */
  readonly requests: readonly RecordedRequest[];
  /** How many completion requests arrived (scripted, refused for the key, or answered by the model). */
  requestCount(): number;
  /** Queues replies: each of the next requests takes one, in order. */
  script(...replies: ScriptedReply[]): void;
  /** Stops listening, ends open connections (hanging ones too) and frees the model. */
  close(): Promise<void>;
}

/** Starts the server; resolves once it listens. */
export async function startOpenAiServer(options: OpenAiServerOptions = {}): Promise<OpenAiServer> {
  const modelName = options.modelName ?? 'tiny';
  const queue: ScriptedReply[] = [];
  const requests: RecordedRequest[] = [];
  const sockets = new Set<Socket>();
  const local = options.modelPath ? new LocalModelKind() : null;
  let count = 0;
  let callIds = 0;

  const provider: AiProvider | null = options.modelPath
    ? {
        providerId: 'openai-server',
        name: 'openai-server',
        organization: 'test',
        kind: 'local',
        model: modelName,
        modelPath: options.modelPath,
        threads: 1,
        isDefault: false,
        createdAt: new Date(0).toISOString(),
        updatedAt: new Date(0).toISOString(),
      }
    : null;

  const server = createServer((req, res) => {
    void handle(req, res).catch((err: unknown) => {
      if (!res.headersSent) sendError(res, 500, errorMessage(err));
      else res.destroy();
    });
  });
  server.on('connection', (socket) => {
    socket.setNoDelay(true);
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const raw = await readBody(req);
    const path = (req.url ?? '').split('?')[0];
    const isCompletion = req.method === 'POST' && path === '/v1/chat/completions';
    if (isCompletion) count++;
    if (options.apiKey !== undefined && req.headers.authorization !== `Bearer ${options.apiKey}`) {
      // As OpenAI does, the refused key is echoed (partly): the client must scrub it.
      return sendError(res, 401, `Incorrect API key provided: ${String(req.headers.authorization ?? '')}`);
    }
    if (req.method === 'GET' && path === '/v1/models') {
      return sendJson(res, 200, {
        object: 'list',
        data: [{ id: modelName, object: 'model', created: 0, owned_by: 'wfx-test' }],
      });
    }
    if (req.method === 'POST' && (path === '/v1/audio/speech' || path === '/v1/audio/transcriptions')) {
      const scripted = queue.shift();
      const body = path === '/v1/audio/speech' ? (JSON.parse(raw) as Record<string, unknown>) : multipartFields(raw);
      requests.push({ url: req.url ?? '', body, headers: { ...req.headers }, answeredBy: 'script' });
      if (scripted?.kind === 'status') return sendError(res, scripted.status, scripted.message, scripted.headers);
      if (path === '/v1/audio/speech') {
        const wav = silentWav(16000, 0.25);
        res.writeHead(200, { 'content-type': 'audio/wav', 'content-length': wav.length });
        return void res.end(wav);
      }
      return sendJson(res, 200, { text: scripted?.kind === 'answer' ? scripted.text : 'hello world' });
    }
    if (!isCompletion) return sendError(res, 404, `no route ${req.method} ${path}`);
    let body: Record<string, unknown>;
    try {
      body = JSON.parse(raw) as Record<string, unknown>;
    } catch {
      return sendError(res, 400, 'the body is not JSON');
    }
    const scripted = queue.shift();
    requests.push({ url: req.url ?? '', body, headers: { ...req.headers }, answeredBy: scripted ? 'script' : 'model' });
    if (scripted) return answerScripted(res, body, scripted);
    return answerWithModel(res, body);
  }

  function answerScripted(res: ServerResponse, body: Record<string, unknown>, scripted: ScriptedReply): void {
    if (scripted.kind === 'hang') return; // the socket stays open until the client or close() ends it
    if (scripted.kind === 'status') return sendError(res, scripted.status, scripted.message, scripted.headers);
    const model = typeof body.model === 'string' ? body.model : modelName;
    const calls = scripted.toolCalls ?? [];
    if (body.stream !== true) {
      return sendJson(res, 200, completion(model, scripted.text, scripted.finishReason, scripted.usage, calls));
    }
    const sse = Buffer.from(
      streamEvents(model, [scripted.text], scripted.finishReason, scripted.usage, includeUsage(body), calls),
      'utf8',
    );
    void writeInPieces(res, sse, scripted.splitEvery ?? sse.byteLength, scripted.cutAfter);
  }

  async function answerWithModel(res: ServerResponse, body: Record<string, unknown>): Promise<void> {
    if (!local || !provider) return sendError(res, 503, 'no scripted reply queued and no model to answer with');
    const abort = new AbortController();
    res.on('close', () => abort.abort());
    const format = body.response_format as
      { type?: string; json_schema?: { schema?: Record<string, unknown> } } | undefined;
    const jsonMode: JsonMode =
      format?.type === 'json_schema' ? 'schema' : format?.type === 'json_object' ? 'object' : 'none';
    const maxTokens = (body.max_completion_tokens ?? body.max_tokens) as number | undefined;
    const stream = body.stream === true;
    const model = typeof body.model === 'string' ? body.model : modelName;
    if (stream) {
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      res.write(`data: ${JSON.stringify(chunk(model, { role: 'assistant', content: '' }, null))}\n\n`);
    }
    const tools = toolsOf(body);
    const outcome = await local.request({
      provider,
      model,
      messages: messagesOf(body),
      ...(tools.length > 0 && { tools }),
      ...(body.parallel_tool_calls === false && { parallelToolCalls: false }),
      jsonMode,
      ...(jsonMode === 'schema' && format?.json_schema?.schema && { schema: format.json_schema.schema }),
      ...(typeof body.temperature === 'number' && { temperature: body.temperature }),
      ...(typeof body.seed === 'number' && { seed: body.seed }),
      ...(typeof maxTokens === 'number' && { maxTokens }),
      signal: abort.signal,
      ...(stream && {
        onDelta: (text: string) => res.write(`data: ${JSON.stringify(chunk(model, { content: text }, null))}\n\n`),
      }),
    });
    if (outcome.kind !== 'answer') {
      const message = outcome.kind === 'fatal' ? outcome.message : outcome.kind;
      if (stream) res.end(`data: ${JSON.stringify({ error: { message, type: 'server_error' } })}\n\n`);
      else sendError(res, 500, message);
      return;
    }
    const calls = (outcome.toolCalls ?? []).map((c) => ({ ...c, id: `call_m${++callIds}` }));
    if (!stream) return sendJson(res, 200, completion(model, outcome.text, outcome.finishReason, outcome.usage, calls));
    for (const event of toolCallEvents(model, calls)) res.write(event);
    res.write(`data: ${JSON.stringify(chunk(model, {}, outcome.finishReason))}\n\n`);
    if (includeUsage(body)) res.write(`data: ${JSON.stringify(usageChunk(model, outcome.usage))}\n\n`);
    res.end('data: [DONE]\n\n');
  }

  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;

  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    requests,
    requestCount: () => count,
    script: (...replies) => void queue.push(...replies),
    async close() {
      const closed = once(server, 'close');
      server.close();
      for (const s of sockets) s.destroy();
      await closed;
      await local?.close();
    },
  };
}

/** The request's tools (OpenAI's function tools) as the local kind takes them. */
function toolsOf(body: Record<string, unknown>): AiTool[] {
  const tools = Array.isArray(body.tools) ? (body.tools as Array<{ function?: Record<string, unknown> }>) : [];
  return tools.map((t) => ({
    name: String(t.function?.name ?? ''),
    description: String(t.function?.description ?? ''),
    parameters: (t.function?.parameters as Record<string, unknown> | undefined) ?? { type: 'object' },
  }));
}

/** The request's messages as the local kind takes them: tool calls and results included. */
function messagesOf(body: Record<string, unknown>): AiMessage[] {
  const names = new Map<string, string>();
  const raw = Array.isArray(body.messages) ? (body.messages as Array<Record<string, unknown>>) : [];
  return raw.map((m): AiMessage => {
    const content = typeof m.content === 'string' ? m.content : '';
    if (m.role === 'tool') {
      const id = String(m.tool_call_id ?? '');
      return { role: 'tool', toolCallId: id, name: names.get(id) ?? '', content };
    }
    if (m.role === 'assistant' && Array.isArray(m.tool_calls)) {
      const toolCalls = (m.tool_calls as Array<{ id: string; function: { name: string; arguments: string } }>).map(
        (c) => ({ id: c.id, name: c.function.name, arguments: c.function.arguments }),
      );
      for (const c of toolCalls) names.set(c.id, c.name);
      return { role: 'assistant', content, toolCalls };
    }
    return { role: m.role === 'system' || m.role === 'user' ? m.role : 'assistant', content };
  });
}

/** Tool calls as OpenAI streams them: per call, its id and name first, then its arguments in two pieces. */
function toolCallEvents(model: string, calls: readonly ToolCallReply[]): string[] {
  const out: string[] = [];
  calls.forEach((c, index) => {
    const start = { index, id: c.id, type: 'function', function: { name: c.name, arguments: '' } };
    out.push(`data: ${JSON.stringify(chunk(model, { tool_calls: [start] }, null))}\n\n`);
    const half = Math.ceil(c.arguments.length / 2);
    for (const part of [c.arguments.slice(0, half), c.arguments.slice(half)]) {
      if (part !== '')
        out.push(
          `data: ${JSON.stringify(chunk(model, { tool_calls: [{ index, function: { arguments: part } }] }, null))}\n\n`,
        );
    }
  });
  return out;
}

function includeUsage(body: Record<string, unknown>): boolean {
  return (body.stream_options as { include_usage?: boolean } | undefined)?.include_usage === true;
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

function sendJson(res: ServerResponse, status: number, value: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(value);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...headers });
  res.end(text);
}

function sendError(
  res: ServerResponse,
  status: number,
  message: string,
  headers?: Readonly<Record<string, string>>,
): void {
  sendJson(
    res,
    status,
    { error: { message, type: status === 401 ? 'invalid_request_error' : 'error', code: null } },
    {
      ...headers,
    },
  );
}

function chunk(model: string, delta: Record<string, unknown>, finishReason: string | null): Record<string, unknown> {
  return {
    id: 'chatcmpl-test',
    object: 'chat.completion.chunk',
    created: 0,
    model,
    choices: [{ index: 0, delta, finish_reason: finishReason }],
  };
}

function usageChunk(model: string, usage: { inputTokens: number; outputTokens: number }): Record<string, unknown> {
  return {
    id: 'chatcmpl-test',
    object: 'chat.completion.chunk',
    created: 0,
    model,
    choices: [],
    usage: {
      prompt_tokens: usage.inputTokens,
      completion_tokens: usage.outputTokens,
      total_tokens: usage.inputTokens + usage.outputTokens,
    },
  };
}

function streamEvents(
  model: string,
  pieces: string[],
  finishReason: string,
  usage: { inputTokens: number; outputTokens: number },
  withUsage: boolean,
  calls: readonly ToolCallReply[] = [],
): string {
  let out = `data: ${JSON.stringify(chunk(model, { role: 'assistant', content: '' }, null))}\n\n`;
  out += toolCallEvents(model, calls).join('');
  for (const p of pieces) {
    // Two deltas per piece so a client must concatenate.
    const half = Math.ceil(p.length / 2);
    for (const part of [p.slice(0, half), p.slice(half)]) {
      if (part !== '') out += `data: ${JSON.stringify(chunk(model, { content: part }, null))}\n\n`;
    }
  }
  out += `data: ${JSON.stringify(chunk(model, {}, finishReason))}\n\n`;
  if (withUsage) out += `data: ${JSON.stringify(usageChunk(model, usage))}\n\n`;
  return `${out}data: [DONE]\n\n`;
}

function completion(
  model: string,
  text: string,
  finishReason: string,
  usage: { inputTokens: number; outputTokens: number },
  calls: readonly ToolCallReply[] = [],
): Record<string, unknown> {
  const message =
    calls.length === 0
      ? { role: 'assistant', content: text }
      : {
          role: 'assistant',
          content: text === '' ? null : text,
          tool_calls: calls.map((c) => ({
            id: c.id,
            type: 'function',
            function: { name: c.name, arguments: c.arguments },
          })),
        };
  return {
    id: 'chatcmpl-test',
    object: 'chat.completion',
    created: 0,
    model,
    choices: [{ index: 0, message, finish_reason: finishReason }],
    usage: {
      prompt_tokens: usage.inputTokens,
      completion_tokens: usage.outputTokens,
      total_tokens: usage.inputTokens + usage.outputTokens,
    },
  };
}

/**
 * Writes `bytes` in pieces of `size`, each flushed before the next (so a client reads them as
 * separate chunks, an SSE event split mid-way), then ends; with `cutAfter`, destroys the
 * connection after that many bytes instead.
 */
async function writeInPieces(res: ServerResponse, bytes: Buffer, size: number, cutAfter?: number): Promise<void> {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  const end = cutAfter ?? bytes.byteLength;
  for (let at = 0; at < end; at += size) {
    const piece = bytes.subarray(at, Math.min(at + size, end));
    await new Promise<void>((resolve) => res.write(piece, () => resolve()));
    // One event-loop turn between pieces: each goes out in its own TCP segment (no Nagle: setNoDelay).
    await new Promise<void>((resolve) => setImmediate(resolve));
  }
  if (cutAfter !== undefined) res.socket?.destroy();
  else res.end();
}

/** The text fields of a multipart/form-data body, and each file part's name and size (as `<field>: {filename, bytes}`). */
function multipartFields(raw: string): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const part of raw.split(/\r?\n--[^\r\n]+/)) {
    const name = /name="([^"]+)"/.exec(part)?.[1];
    if (!name) continue;
    const body = part
      .split(/\r?\n\r?\n/)
      .slice(1)
      .join('\n\n')
      .replace(/\r?\n$/, '');
    const filename = /filename="([^"]*)"/.exec(part)?.[1];
    out[name] = filename === undefined ? body : { filename, bytes: Buffer.byteLength(body, 'latin1') };
  }
  return out;
}

/** A WAV of silence: 16-bit PCM mono at `rate`, `seconds` long. */
export function silentWav(rate: number, seconds: number): Buffer {
  const data = Math.round(rate * seconds) * 2;
  const wav = Buffer.alloc(44 + data);
  wav.write('RIFF', 0, 'latin1');
  wav.writeUInt32LE(36 + data, 4);
  wav.write('WAVEfmt ', 8, 'latin1');
  wav.writeUInt32LE(16, 16);
  wav.writeUInt16LE(1, 20);
  wav.writeUInt16LE(1, 22);
  wav.writeUInt32LE(rate, 24);
  wav.writeUInt32LE(rate * 2, 28);
  wav.writeUInt16LE(2, 32);
  wav.writeUInt16LE(16, 34);
  wav.write('data', 36, 'latin1');
  wav.writeUInt32LE(data, 40);
  return wav;
}
