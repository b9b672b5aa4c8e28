/**
 * The `local` kind: a GGUF model run in the daemon's process by node-llama-cpp (CPU build,
 * decision 031), imported on first use. One llama instance per daemon and one load per model
 * file, kept until close() and shared by every provider naming that file; calls to one model
 * take turns, so two calls never fight over the same cores and context.
 */
import { stat } from 'node:fs/promises';
import { availableParallelism } from 'node:os';
import type { ChatHistoryItem, Llama, LlamaChat, LlamaContextSequence, LlamaGrammar, LlamaModel } from 'node-llama-cpp';
import { errorMessage } from '../../shared/errors.js';
import { type ModelOutcome, type ModelRequest, type ProviderKind } from './provider-kind.js';
import { jsonOrText } from './structured-output.js';
import { toolEnvelope, toolInstruction, unwrapEnvelope } from './local-tools.js';
import type { AiMessage } from './types.js';

type LlamaModule = typeof import('node-llama-cpp');

/** A context size the daemon allocates when the provider names none (a model's own may be 128k tokens). */
export const LOCAL_MAX_CONTEXT_SIZE = 8192;
/** Grammars kept per daemon, by their schema's JSON text. */
const MAX_GRAMMARS = 128;

/** Options of the local kind. */
export interface LocalModelOptions {
  /** Receives node-llama-cpp's warnings and errors (default: dropped). */
  readonly log?: (line: string) => void;
  /** Imports node-llama-cpp (default: the package); a test makes it fail as an install without it does. */
  readonly importRuntime?: () => Promise<LlamaModule>;
}

/**
 * Threads for inference when the provider names none: half the logical cores (the physical ones
 * on SMT machines), at least one. llama.cpp's own default oversubscribes a small machine.
 */
export function defaultLocalThreads(cores = availableParallelism()): number {
  return Math.max(1, Math.floor(cores / 2));
}

/** A model loaded once, with the one context sequence its calls take turns on. */
interface LoadedModel {
  readonly model: LlamaModel;
  readonly sequence: LlamaContextSequence;
  readonly chat: LlamaChat;
  readonly turns: Turns;
}

/** Runs local models. See the file's comment. */
export class LocalModelKind implements ProviderKind {
  private module: Promise<LlamaModule> | null = null;
  private llama: Promise<Llama> | null = null;
  private readonly models = new Map<string, Promise<LoadedModel>>();
  private readonly grammars = new Map<string, Promise<LlamaGrammar>>();
  private closed = false;
  private readonly generating = new Set<Promise<unknown>>();
  /** Model loads started so far (a failed one included): one per file while it stays loaded. */
  loads = 0;

  constructor(private readonly options: LocalModelOptions = {}) {}

  async request(req: ModelRequest): Promise<ModelOutcome> {
    const path = req.provider.modelPath;
    if (path === undefined || path === '') {
      return { kind: 'fatal', code: 'AI_MODEL_UNAVAILABLE', message: 'the local provider names no model file' };
    }
    let loaded: LoadedModel;
    try {
      loaded = await this.load(path, req);
    } catch (err) {
      return { kind: 'fatal', code: 'AI_MODEL_UNAVAILABLE', message: errorMessage(err) };
    }
    let grammar: LlamaGrammar | undefined;
    try {
      grammar = await this.grammar(req);
    } catch (err) {
      return {
        kind: 'fatal',
        code: 'AI_MODEL_UNAVAILABLE',
        message: `no grammar for the schema: ${errorMessage(err)}`,
      };
    }
    if (this.closed) return { kind: 'aborted' };
    const running = loaded.turns.run(req.signal, () => generate(loaded, req, grammar));
    this.generating.add(running);
    try {
      return (await running) ?? { kind: 'aborted' };
    } finally {
      this.generating.delete(running);
    }
  }

  /** Frees every model. Generations under way are let finish first (their callers abort them). */
  async close(): Promise<void> {
    this.closed = true;
    await Promise.allSettled([...this.generating]);
    const llama = this.llama;
    this.llama = null;
    this.models.clear();
    this.grammars.clear();
    if (llama) await (await llama.catch(() => null))?.dispose();
  }

  /** The model of `path`, loaded on first use; a failed load is forgotten, so a fixed file loads later. */
  private load(path: string, req: ModelRequest): Promise<LoadedModel> {
    let loading = this.models.get(path);
    if (!loading) {
      this.loads++;
      loading = this.loadModel(path, req);
      this.models.set(path, loading);
      loading.catch(() => {
        if (this.models.get(path) === loading) this.models.delete(path);
      });
    }
    return loading;
  }

  private async loadModel(path: string, req: ModelRequest): Promise<LoadedModel> {
    if (this.closed) throw new Error('the daemon is stopping');
    const { llama, module } = await this.runtime();
    try {
      const info = await stat(path);
      if (!info.isFile()) throw new Error('not a file');
    } catch (err) {
      throw new Error(`model file ${path}: ${(err as NodeJS.ErrnoException).code ?? errorMessage(err)}`);
    }
    let model: LlamaModel;
    try {
      model = await llama.loadModel({ modelPath: path });
    } catch (err) {
      throw new Error(`model file ${path} cannot be loaded: ${errorMessage(err)}`);
    }
    try {
      const context = await model.createContext({
        contextSize: req.provider.contextSize ?? { max: LOCAL_MAX_CONTEXT_SIZE },
        threads: req.provider.threads ?? defaultLocalThreads(),
        sequences: 1,
      });
      const sequence = context.getSequence();
      // The model's own chat template when it has one; a plain general format otherwise.
      const template = model.fileInfo.metadata?.tokenizer?.chat_template;
      const chatWrapper = template ? 'auto' : new module.GeneralChatWrapper();
      const chat = new module.LlamaChat({ contextSequence: sequence, chatWrapper });
      return { model, sequence, chat, turns: new Turns() };
    } catch (err) {
      await model.dispose().catch(() => undefined);
      throw new Error(`model file ${path}: no context for it: ${errorMessage(err)}`);
    }
  }

  private async runtime(): Promise<{ llama: Llama; module: LlamaModule }> {
    let module: LlamaModule;
    try {
      module = await (this.module ??= (this.options.importRuntime ?? (() => import('node-llama-cpp')))());
    } catch (err) {
      this.module = null;
      throw new Error(`node-llama-cpp is not installed (an optional dependency): ${errorMessage(err)}`);
    }
    const log = this.options.log;
    this.llama ??= module.getLlama({
      gpu: false,
      build: 'never',
      progressLogs: false,
      logLevel: module.LlamaLogLevel.warn,
      logger: (level, message) => {
        if (log && message.trim() !== '') log(`node-llama-cpp ${level}: ${message.trim()}`);
      },
    });
    try {
      return { llama: await this.llama, module };
    } catch (err) {
      this.llama = null;
      throw new Error(`node-llama-cpp cannot start: ${errorMessage(err)}`);
    }
  }

  /**
   * The grammar that constrains an answer: with tools, the tool-call envelope (toolEnvelope);
   * else a JSON answer's schema, or any JSON. None for text.
   */
  private async grammar(req: ModelRequest): Promise<LlamaGrammar | undefined> {
    const tools = req.tools ?? [];
    if (req.jsonMode === 'none' && tools.length === 0) return undefined;
    const { llama } = await this.runtime();
    const schema =
      tools.length > 0
        ? toolEnvelope(tools, req.jsonMode === 'schema' ? req.schema : undefined, req.parallelToolCalls !== false)
        : req.jsonMode === 'schema'
          ? req.schema
          : undefined;
    const key = schema === undefined ? '' : JSON.stringify(schema);
    let grammar = this.grammars.get(key);
    if (!grammar) {
      grammar =
        schema === undefined
          ? llama.getGrammarFor('json')
          : // A schema keyword the grammar cannot express is left to Ajv, which checks every answer.
            llama.createGrammarForJsonSchema(schema as never).catch(() => llama.getGrammarFor('json'));
      if (this.grammars.size >= MAX_GRAMMARS) this.grammars.clear();
      this.grammars.set(key, grammar);
      grammar.catch(() => this.grammars.delete(key));
    }
    return grammar;
  }
}

/** One generation on the model's sequence, from a clean context (token counts and seeds stay exact). */
async function generate(
  loaded: LoadedModel,
  req: ModelRequest,
  grammar: LlamaGrammar | undefined,
): Promise<ModelOutcome> {
  const { sequence, chat, model } = loaded;
  const tools = req.tools ?? [];
  try {
    const items = history(tools.length > 0 ? [toolInstruction(tools), ...req.messages] : req.messages);
    // llama.cpp would make room by dropping the start of the conversation: refuse instead.
    const prompt = chat.chatWrapper.generateContextState({ chatHistory: items }).contextText.tokenize(model.tokenizer);
    const room = sequence.contextSize - prompt.length;
    if (room < 1) {
      return {
        kind: 'fatal',
        code: 'AI_TRUNCATED',
        message: `the conversation (${prompt.length} tokens) does not fit the context size (${sequence.contextSize} tokens)`,
      };
    }
    await sequence.clearHistory();
    const before = sequence.tokenMeter.getState();
    const result = await chat.generateResponse(items, {
      maxTokens: Math.min(req.maxTokens ?? room, room),
      ...(req.temperature !== undefined && { temperature: req.temperature }),
      ...(req.seed !== undefined && { seed: req.seed }),
      ...(grammar !== undefined && { grammar }),
      signal: req.signal,
      stopOnAbortSignal: false,
      // With tools the model writes an envelope, not the answer: its text is passed on once unwrapped.
      ...(req.onDelta !== undefined && tools.length === 0 && { onTextChunk: req.onDelta }),
    });
    const after = sequence.tokenMeter.getState();
    if (req.signal.aborted || result.metadata.stopReason === 'abort') return { kind: 'aborted' };
    const answer = {
      kind: 'answer',
      text: result.response,
      model: req.model,
      finishReason: finishReason(result.metadata.stopReason),
      usage: {
        inputTokens: after.usedInputTokens - before.usedInputTokens,
        outputTokens: after.usedOutputTokens - before.usedOutputTokens,
      },
    } as const;
    if (tools.length === 0 || answer.finishReason !== 'stop') return answer;
    const unwrapped = unwrapEnvelope(answer, req.messages);
    if (unwrapped.kind === 'answer' && !unwrapped.toolCalls && unwrapped.text !== '') req.onDelta?.(unwrapped.text);
    return unwrapped;
  } catch (err) {
    if (req.signal.aborted) return { kind: 'aborted' };
    return {
      kind: 'fatal',
      code: 'AI_MODEL_UNAVAILABLE',
      message: `the local model failed: ${errorMessage(err)}`,
    };
  }
}

function finishReason(stop: string): string {
  switch (stop) {
    case 'maxTokens':
      return 'length';
    case 'functionCalls':
      return 'tool_calls';
    default:
      return 'stop';
  }
}

/**
 * The conversation as node-llama-cpp's chat history. A tool call is the model's envelope text
 * (what it wrote), a tool's result a user message that names the call: a small local model
 * has no function-calling template of its own to rely on.
 */
function history(messages: readonly AiMessage[]): ChatHistoryItem[] {
  const items: ChatHistoryItem[] = messages.map((m): ChatHistoryItem => {
    switch (m.role) {
      case 'system':
        return { type: 'system', text: m.content };
      case 'user':
        return { type: 'user', text: m.content };
      case 'tool':
        return { type: 'user', text: `Result of tool ${m.name} (call ${m.toolCallId}): ${m.content}` };
      case 'assistant':
        return {
          type: 'model',
          response: [
            m.toolCalls && m.toolCalls.length > 0
              ? JSON.stringify({
                  tool_calls: m.toolCalls.map((c) => ({ name: c.name, arguments: jsonOrText(c.arguments) })),
                })
              : m.content,
          ],
        };
    }
  });
  items.push({ type: 'model', response: [] });
  return items;
}

/**
 * Calls take turns, first come first served. A call aborted while it waits leaves the line at
 * once (undefined) without letting the one behind it jump the call ahead.
 */
export class Turns {
  private tail: Promise<void> = Promise.resolve();

  /** Runs `work` when every earlier turn is over; undefined when `signal` aborts first. */
  async run<T>(signal: AbortSignal, work: () => Promise<T>): Promise<T | undefined> {
    const previous = this.tail;
    let release!: () => void;
    const mine = new Promise<void>((resolve) => (release = resolve));
    this.tail = previous.then(() => mine);
    try {
      if (!(await untilOrAborted(previous, signal))) return undefined;
      return await work();
    } finally {
      release();
    }
  }
}

/** True when `p` settles first, false when `signal` aborts first; leaves no listener behind. */
function untilOrAborted(p: Promise<void>, signal: AbortSignal): Promise<boolean> {
  if (signal.aborted) return Promise.resolve(false);
  return new Promise((resolve) => {
    const onAbort = (): void => resolve(false);
    signal.addEventListener('abort', onAbort, { once: true });
    void p.then(() => {
      signal.removeEventListener('abort', onAbort);
      resolve(true);
    });
  });
}
