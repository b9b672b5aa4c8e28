/**
 * The worker thread of the script sandbox (see script.ts). It compiles QuickJS's WebAssembly once,
 * then runs one script per message, each in a fresh WebAssembly instance (its own linear memory,
 * capped) with a fresh QuickJS runtime and context, all dropped afterwards: nothing a script does
 * survives it, not even in the allocator. The only host function a script can reach is the one
 * behind `console`, which appends bounded strings to the run's log lines.
 *
 * Why a capped linear memory: in the prebuilt WebAssembly, QuickJS cannot measure its blocks
 * (malloc_usable_size is 0 under Emscripten), so `setMemoryLimit` bounds each allocation but not
 * their sum. A WebAssembly.Memory with a `maximum` does bound the sum: past it, malloc fails and
 * QuickJS throws its out-of-memory error.
 *
 * Messages in: `ScriptRequest`; out: `ScriptResponse` (same id). `recycle: true` asks the pool to
 * replace this worker after a failure on the host side of the sandbox.
 */
import { readFile } from 'node:fs/promises';
import { parentPort } from 'node:worker_threads';
import {
  newQuickJSWASMModuleFromVariant,
  type CustomizeVariantOptions,
  newVariant,
  type QuickJSContext,
  type QuickJSHandle,
  type QuickJSRuntime,
  type QuickJSSyncVariant,
  type QuickJSWASMModule,
} from 'quickjs-emscripten-core';
import * as variantModule from '@jitl/quickjs-wasmfile-release-sync';
import { DEFAULT_MAX_JSON_DEPTH, describeDepthExcess, jsonDepthExcess } from '../../../shared/json-shape.js';
import type { WorkResult } from '../../outbound/result.js';
import { errorMessage } from '../../../shared/errors.js';

// The package's types describe its CommonJS build (a default that is the whole module); in ESM
// its namespace is { default: variant }. Unwrap whatever we got.
function unwrapDefault(m: unknown): QuickJSSyncVariant {
  let v = m as { default?: unknown };
  while (v && typeof v === 'object' && 'default' in v && v.default) v = v.default as { default?: unknown };
  return v as unknown as QuickJSSyncVariant;
}
const variant = unwrapDefault(variantModule);

// The project's libs (ES2023, no DOM) do not declare WebAssembly: the little used here.
interface WasmMemory {
  readonly buffer: ArrayBuffer;
  grow(delta: number): number;
}
interface WasmApi {
  readonly Memory: new (descriptor: { initial: number; maximum: number }) => WasmMemory;
  compile(bytes: Uint8Array): Promise<object>;
}
const wasm = (globalThis as unknown as { WebAssembly: WasmApi }).WebAssembly;

export interface ScriptRequest {
  readonly id: number;
  readonly script: string;
  readonly varsJson: string;
  readonly timeoutMs: number;
  readonly memoryBytes: number;
  /** How deep the result may nest (default DEFAULT_MAX_JSON_DEPTH); deeper fails with SCRIPT_RESULT_INVALID. */
  readonly maxJsonDepth?: number;
}

export interface ScriptResponse {
  readonly id: number;
  readonly result: WorkResult;
  readonly recycle?: boolean;
}

export const MAX_LOG_LINES = 100;
export const MAX_LOG_LINE_CHARS = 1000;
/** An error message (a script may throw a huge one) is cut at this length. */
const MAX_MESSAGE_CHARS = 2000;
/**
 * QuickJS's own stack limit: well below the build's stack (5 MiB upstream) and the worker's native
 * stack (4 MiB, pinned by the pool), so QuickJS notices first and throws its "stack overflow".
 */
const MAX_STACK_BYTES = 512 * 1024;
const PAGE = 65_536;
/** The build's INITIAL_MEMORY (its memory import's minimum): static data, the stack, a first heap. */
const INITIAL_MEMORY_BYTES = 16 * 1024 * 1024;
/** Emscripten's largest heap (wasm32, 2 GiB). */
const MAX_MEMORY_BYTES = 2 * 1024 * 1024 * 1024;

/**
 * Evaluated first in every fresh context, before any user code. It builds `console` around the
 * one host function (kept in a closure, never on the global object) and returns [run, settle].
 * It keeps its own references to JSON, String, Function, Promise..., so a script that replaces
 * them changes nothing here. Answers are strings: "R" + the result's JSON, "N" + why the result
 * is not JSON, "E" + JSON [name, message] of what the script threw, or "P" when run() got a
 * promise (settle() answers once the pending jobs have run). Uncatchable errors (the interrupt)
 * and errors while building an answer (out of memory) reach the host as exceptions instead.
 */
const BOOTSTRAP = String.raw`(function (hostLog, maxLines, maxChars) {
  'use strict';
  const stringify = JSON.stringify, parse = JSON.parse, S = String, Fn = Function, ErrorC = Error;
  const PromiseC = Promise, then = Promise.prototype.then, defineProperty = Object.defineProperty;
  let lines = 0;
  const fmt = (a) => {
    if (typeof a === 'string') return a;
    try { const j = stringify(a); if (j !== undefined) return j; } catch (e) {}
    try { return S(a); } catch (e) { return '[unprintable]'; }
  };
  const make = (level) => function () {
    if (lines >= maxLines) return;
    lines++;
    let line = '';
    for (let i = 0; i < arguments.length && line.length <= maxChars; i++) {
      if (i > 0) line += ' ';
      line += fmt(arguments[i]);
    }
    if (line.length > maxChars) line = line.slice(0, maxChars);
    hostLog(level, line);
  };
  const console = { log: make('log'), info: make('info'), warn: make('warn'), error: make('error') };
  defineProperty(globalThis, 'console', { value: console, writable: true, configurable: true, enumerable: false });
  const describe = (e) => {
    try {
      if (e instanceof ErrorC) return stringify([S(e.name), S(e.message)]);
      return stringify(['Error', 'Uncaught ' + fmt(e)]);
    } catch (x) {
      return stringify(['Error', 'Uncaught exception that cannot be printed']);
    }
  };
  const answer = (value) => {
    if (value === undefined) return 'Rnull';
    let json;
    try { json = stringify(value); } catch (e) { return 'N' + describe(e); }
    if (typeof json !== 'string') return 'Nthe returned value (' + typeof value + ') is not JSON';
    return 'R' + json;
  };
  let settled = 'Nthe returned promise never settled';
  const run = function (src, input) {
    let f;
    try { f = new Fn('vars', src); } catch (e) { return 'E' + describe(e); }
    let value;
    try { value = f.call(undefined, parse(input)); } catch (e) { return 'E' + describe(e); }
    if (!(value instanceof PromiseC)) return answer(value);
    then.call(value, (v) => { settled = answer(v); }, (e) => { settled = 'E' + describe(e); });
    return 'P';
  };
  const settle = function () { return settled; };
  return [run, settle];
})`;

interface RunState {
  readonly req: ScriptRequest;
  readonly logs: string[];
  interrupted: boolean;
  deadline: number;
  /** The last attempt to grow the linear memory failed: the run hit its memory cap. */
  memoryExhausted: boolean;
}

function truncate(s: string, max: number): string {
  return s.length > max ? s.slice(0, max) : s;
}

/** "E"/"N" bodies are JSON [name, message] or plain text. */
function nameMessage(body: string): string {
  try {
    const parsed: unknown = JSON.parse(body);
    if (Array.isArray(parsed) && parsed.length === 2) return `${String(parsed[0])}: ${String(parsed[1])}`;
  } catch {
    // plain text
  }
  return body;
}

const OUT_OF_MEMORY = /out of memory/i;

function timeout(req: ScriptRequest): WorkResult {
  return { ok: false, code: 'SCRIPT_TIMEOUT', message: `the script ran longer than its ${req.timeoutMs} ms limit` };
}

function outOfMemory(req: ScriptRequest): WorkResult {
  return { ok: false, code: 'SCRIPT_MEMORY', message: `the script ran out of memory (limit ${req.memoryBytes} bytes)` };
}

/** An exception that escaped to the host: the interrupt, out of memory, or a script error. */
function fromException(ctx: QuickJSContext, handle: QuickJSHandle, state: RunState): WorkResult {
  let text = 'unknown error';
  try {
    // dump() may run script code (toJSON, getters): still under the deadline, never after it.
    const dumped: unknown = state.interrupted ? undefined : ctx.dump(handle);
    if (dumped && typeof dumped === 'object') {
      const e = dumped as { name?: unknown; message?: unknown };
      text = `${String(e.name ?? 'Error')}: ${String(e.message ?? '')}`;
    } else if (dumped !== undefined) {
      text = String(dumped);
    }
  } catch {
    // keep 'unknown error'
  }
  if (state.interrupted) return timeout(state.req);
  if (state.memoryExhausted || OUT_OF_MEMORY.test(text)) return outOfMemory(state.req);
  return { ok: false, code: 'SCRIPT_ERROR', message: truncate(text, MAX_MESSAGE_CHARS) };
}

function fromAnswer(out: string, state: RunState): WorkResult {
  const kind = out.charAt(0);
  const body = out.slice(1);
  switch (kind) {
    case 'R': {
      const value = JSON.parse(body) as unknown;
      // Checked here: posting a value nested thousands deep to the daemon's thread overflows the
      // structured clone, and the run would end as a silent worker (SCRIPT_TIMEOUT).
      const excess = jsonDepthExcess(value, state.req.maxJsonDepth ?? DEFAULT_MAX_JSON_DEPTH);
      if (excess !== null)
        return {
          ok: false,
          code: 'SCRIPT_RESULT_INVALID',
          message: `the script's result is ${describeDepthExcess(excess)}`,
        };
      return { ok: true, value };
    }
    case 'N':
    case 'E': {
      const text = truncate(nameMessage(body), MAX_MESSAGE_CHARS);
      // Out of memory surfaces as QuickJS's InternalError, or as `null` when even that error
      // could not be allocated: the failed growth of the linear memory tells.
      if (state.memoryExhausted || (text.startsWith('InternalError: ') && OUT_OF_MEMORY.test(text)))
        return outOfMemory(state.req);
      if (kind === 'N')
        return { ok: false, code: 'SCRIPT_RESULT', message: `the script's return value is not JSON: ${text}` };
      return { ok: false, code: 'SCRIPT_ERROR', message: text };
    }
    default:
      throw new Error(`unexpected answer from the sandbox (${JSON.stringify(truncate(out, 40))})`);
  }
}

/** Runs the script in `ctx`; every handle it makes is disposed of before it returns or throws. */
function evaluate(ctx: QuickJSContext, runtime: QuickJSRuntime, state: RunState): WorkResult {
  const { req, logs } = state;
  const owned: QuickJSHandle[] = [];
  const own = (h: QuickJSHandle): QuickJSHandle => (owned.push(h), h);
  try {
    const hostLog = own(
      ctx.newFunction('log', (levelH, lineH) => {
        if (logs.length >= MAX_LOG_LINES) return;
        if (ctx.typeof(levelH) !== 'string' || ctx.typeof(lineH) !== 'string') return;
        const level = ctx.getString(levelH);
        const line = truncate(ctx.getString(lineH), MAX_LOG_LINE_CHARS);
        logs.push(level === 'log' ? line : truncate(`[${level}] ${line}`, MAX_LOG_LINE_CHARS));
      }),
    );
    const args = [hostLog, own(ctx.newNumber(MAX_LOG_LINES)), own(ctx.newNumber(MAX_LOG_LINE_CHARS))];
    const src = own(ctx.newString(req.script));
    const input = own(ctx.newString(req.varsJson));

    const boot = ctx.evalCode(BOOTSTRAP, 'wfx-bootstrap.js');
    if (boot.error) return fromException(ctx, own(boot.error), state);
    const made = ctx.callFunction(own(boot.value), ctx.undefined, ...args);
    if (made.error) return fromException(ctx, own(made.error), state);
    const pair = own(made.value);
    const run = own(ctx.getProp(pair, 0));
    const settle = own(ctx.getProp(pair, 1));

    state.deadline = Date.now() + req.timeoutMs;
    const ran = ctx.callFunction(run, ctx.undefined, src, input);
    if (ran.error) return fromException(ctx, own(ran.error), state);
    let out = ctx.getString(own(ran.value));

    // Promise jobs (then-callbacks, a returned promise, a dynamic import) run within the deadline.
    while (runtime.hasPendingJob()) {
      const jobs = runtime.executePendingJobs(-1);
      if (jobs.error) return fromException(ctx, own(jobs.error), state);
      if (state.interrupted) return timeout(req);
    }
    if (out === 'P') {
      const settled = ctx.callFunction(settle, ctx.undefined);
      if (settled.error) return fromException(ctx, own(settled.error), state);
      out = ctx.getString(own(settled.value));
    }
    // A promise callback may have swallowed the interrupt (it rejects its promise): still late.
    if (state.interrupted) return timeout(req);
    return fromAnswer(out, state);
  } finally {
    for (const h of owned.reverse()) if (h.alive) h.dispose();
  }
}

export interface RunOutcome {
  readonly result: WorkResult;
  /** The WebAssembly instance may be in a bad state: replace this worker. */
  readonly recycle: boolean;
}

/** The compiled QuickJS, shared by the instances of this thread (compiling is the slow part). */
export interface Sandbox {
  /** A WebAssembly.Module. */
  readonly wasmModule: object | undefined;
}

export async function loadSandbox(): Promise<Sandbox> {
  try {
    const url = new URL('emscripten-module.wasm', import.meta.resolve('@jitl/quickjs-wasmfile-release-sync'));
    return { wasmModule: await wasm.compile(await readFile(url)) };
  } catch {
    return { wasmModule: undefined }; // the variant then loads and compiles its file itself
  }
}

/** Emscripten's print/printErr (its Module options; not in the library's type). */
const QUIET = {
  print: () => undefined,
  printErr: () => undefined,
} as unknown as CustomizeVariantOptions['emscriptenModule'];

/** A QuickJS instance of its own whose linear memory cannot grow past the run's limit. */
async function newInstance(sandbox: Sandbox, state: RunState): Promise<QuickJSWASMModule> {
  const capBytes = Math.min(MAX_MEMORY_BYTES, INITIAL_MEMORY_BYTES + state.req.memoryBytes);
  const memory = new wasm.Memory({ initial: INITIAL_MEMORY_BYTES / PAGE, maximum: Math.ceil(capBytes / PAGE) });
  // Emscripten grows the memory through this object's grow(): note whether the last try failed.
  const grow = memory.grow.bind(memory);
  memory.grow = (delta: number): number => {
    try {
      const previous = grow(delta);
      state.memoryExhausted = false;
      return previous;
    } catch (err) {
      state.memoryExhausted = true;
      throw err;
    }
  };
  const instanceVariant = newVariant(variant, {
    wasmMemory: memory,
    // Emscripten prints aborts (e.g. QuickJS's leak assertion when a runtime is disposed of after
    // an out-of-memory error) to stderr; they surface as exceptions here, which suffices.
    emscriptenModule: QUIET,
    ...(sandbox.wasmModule ? { wasmModule: sandbox.wasmModule } : {}),
  });
  return newQuickJSWASMModuleFromVariant(instanceVariant);
}

/** Runs one script in a fresh QuickJS instance, runtime and context, dropped before returning. */
export async function runScript(sandbox: Sandbox, req: ScriptRequest): Promise<RunOutcome> {
  const state: RunState = {
    req,
    logs: [],
    interrupted: false,
    deadline: Number.POSITIVE_INFINITY,
    memoryExhausted: false,
  };
  let runtime: QuickJSRuntime | undefined;
  let ctx: QuickJSContext | undefined;
  let result: WorkResult;
  let recycle = false;
  try {
    const quickjs = await newInstance(sandbox, state);
    runtime = quickjs.newRuntime();
    runtime.removeModuleLoader(); // no import(), whatever the library's defaults become
    runtime.setMemoryLimit(Math.min(req.memoryBytes, MAX_MEMORY_BYTES - INITIAL_MEMORY_BYTES));
    runtime.setMaxStackSize(MAX_STACK_BYTES);
    runtime.setInterruptHandler(() => {
      if (!state.interrupted && Date.now() >= state.deadline) state.interrupted = true;
      return state.interrupted;
    });
    ctx = runtime.newContext();
    result = evaluate(ctx, runtime, state);
  } catch (err) {
    // A failure on the host side (a WebAssembly trap, the glue running out of memory...).
    const text = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
    recycle = true;
    if (state.interrupted) result = timeout(req);
    else if (state.memoryExhausted || OUT_OF_MEMORY.test(text)) result = outOfMemory(req);
    else result = { ok: false, code: 'SCRIPT_CRASHED', message: `the sandbox failed: ${text}` };
  }
  try {
    // The instance is dropped anyway; disposing frees it sooner. After a failed run QuickJS may
    // find leaked objects and abort: harmless, the instance is not used again.
    ctx?.dispose();
    runtime?.dispose();
  } catch {
    // ignored, see above
  }
  return { result: state.logs.length > 0 ? { ...result, logs: state.logs } : result, recycle };
}

if (parentPort) {
  const port = parentPort;
  const sandbox = await loadSandbox();
  // The pool sends one request at a time and waits for its answer.
  port.on('message', (req: ScriptRequest) => {
    void runScript(sandbox, req).then(({ result, recycle }) => {
      const response: ScriptResponse = recycle ? { id: req.id, result, recycle } : { id: req.id, result };
      try {
        port.postMessage(response);
      } catch (err) {
        // A result the structured clone refuses: answer anyway, or the run ends as a silent worker.
        const message = `the script's result cannot be passed on: ${errorMessage(err)}`;
        port.postMessage({
          id: req.id,
          result: { ok: false, code: 'SCRIPT_RESULT_INVALID', message },
        } satisfies ScriptResponse);
      }
    });
  });
}
