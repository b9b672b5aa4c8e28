import type {
  AiAnswer,
  AiAttempt,
  AiCall,
  AiProviderLookup,
  AiRunOptions,
  AiRunner,
  AiUsage,
} from '../../src/daemon/ai/types.js';
import type { WfxRecord } from '../../src/daemon/state/records.js';
import type { WfxState } from '../../src/daemon/state/state.js';
import type { WorkFailureCode, WorkResult } from '../../src/daemon/outbound/result.js';
import type { Store } from '../../src/daemon/store/store.js';

/** One scripted model call: what the fake runner reports and answers. */
export interface FakeTurn {
  /** The answer's text (default "ok"). */
  readonly text?: string;
  readonly data?: unknown;
  readonly model?: string;
  readonly finishReason?: string;
  /** Default 10 in, 5 out. */
  readonly usage?: AiUsage;
  /** The pieces the answer streams in (default: the whole text at once). */
  readonly deltas?: readonly string[];
  /** Attempts reported before the answer (default: one that succeeded). */
  readonly attempts?: readonly AiAttempt[];
  /** The call fails with this instead of answering. */
  readonly failure?: { readonly code: WorkFailureCode; readonly message: string };
  /** Awaited (or the call's abort) before anything is reported: holds the call in flight. */
  readonly gate?: Promise<void>;
  /** Tools the model asks for instead of answering (arguments as objects; ids `call_<n>_<i>` unless given). */
  readonly toolCalls?: ReadonlyArray<{ readonly name: string; readonly arguments: unknown; readonly id?: string }>;
}

/**
 * An AiRunner with scripted answers, for engine tests: it resolves the provider as the real one
 * does (AI_PROVIDER_NOT_FOUND), counts its calls and keeps them, reports the attempts and
 * deltas of its script, and ends a call held at its gate with CANCELLED when aborted.
 */
export class FakeAiRunner implements AiRunner {
  readonly calls: AiCall[] = [];
  private readonly waiting: Array<{ n: number; resolve: () => void }> = [];

  constructor(private readonly script: (call: AiCall, n: number) => FakeTurn = () => ({})) {}

  async run(call: AiCall, providers: AiProviderLookup, options: AiRunOptions): Promise<WorkResult> {
    this.calls.push(call);
    const n = this.calls.length;
    for (const w of this.waiting.filter((x) => x.n <= n)) w.resolve();
    const provider = providers(call.organization, call.provider);
    if (!provider)
      return { ok: false, code: 'AI_PROVIDER_NOT_FOUND', message: `no provider ${call.provider ?? '(default)'}` };
    const turn = this.script(call, n);
    if (turn.gate) {
      const aborted = new Promise<void>((resolve) => {
        if (options.signal.aborted) resolve();
        options.signal.addEventListener('abort', () => resolve(), { once: true });
      });
      await Promise.race([turn.gate, aborted]);
    }
    if (options.signal.aborted) return { ok: false, code: 'CANCELLED', message: 'aborted' };
    const model = turn.model ?? call.model ?? provider.model;
    const usage = turn.usage ?? { inputTokens: 10, outputTokens: 5 };
    const text = turn.text ?? 'ok';
    const attempts = turn.attempts ?? [{ attempt: 1, model, latencyMs: 3, usage, finishReason: 'stop' }];
    for (const a of attempts) options.onAttempt?.(a);
    if (turn.failure) return { ok: false, ...turn.failure };
    for (const d of turn.deltas ?? [text]) options.onDelta?.(d);
    const toolCalls = turn.toolCalls?.map((c, i) => ({
      id: c.id ?? `call_${n}_${i + 1}`,
      name: c.name,
      arguments: typeof c.arguments === 'string' ? c.arguments : JSON.stringify(c.arguments),
    }));
    const answer: AiAnswer = {
      text: toolCalls ? (turn.text ?? '') : text,
      ...(turn.data !== undefined && { data: turn.data }),
      model,
      finishReason: turn.finishReason ?? (toolCalls ? 'tool_calls' : 'stop'),
      usage,
      ...(toolCalls && { toolCalls }),
    };
    return { ok: true, value: answer };
  }

  /** Resolves once `n` calls have been made in all. */
  called(n: number): Promise<void> {
    if (this.calls.length >= n) return Promise.resolve();
    return new Promise((resolve) => this.waiting.push({ n, resolve }));
  }

  async close(): Promise<void> {}
}

/** Registers provider `name` of `organization` (its default unless told), as the admin API would. */
export async function saveProvider(
  store: Store<WfxState, WfxRecord>,
  organization: string,
  name = 'fake',
  isDefault = true,
): Promise<void> {
  const at = '2026-11-21T09:00:00.000Z';
  await store.commit({
    type: 'aiProvider.saved',
    provider: {
      providerId: `${organization}-${name}`,
      name,
      organization,
      kind: 'openai-compatible',
      baseUrl: 'http://127.0.0.1:9/v1',
      model: `${name}-model`,
      apiKey: 'sk-test-never-shown',
      isDefault,
      createdAt: at,
      updatedAt: at,
    },
  });
}

/** A call the fake runner was given, and the provider it found for it. */
export interface FakeAiCall {
  readonly call: AiCall;
  readonly provider: string | undefined;
}

/**
 * An AiRunner that asks no model: `answer` gives each call's result (default: "ready" from
 * model fake-1, 7 + 1 tokens). It resolves providers through the lookup it is given, as the real
 * runner does (AI_PROVIDER_NOT_FOUND), and records every call.
 */
export function fakeAiRunner(
  answer: (call: AiCall, options: AiRunOptions) => WorkResult | Promise<WorkResult> = () => ({
    ok: true,
    value: {
      text: 'ready',
      model: 'fake-1',
      finishReason: 'stop',
      usage: { inputTokens: 7, outputTokens: 1 },
    } satisfies AiAnswer,
  }),
): AiRunner & { readonly calls: FakeAiCall[]; closed: boolean } {
  const calls: FakeAiCall[] = [];
  return {
    calls,
    closed: false,
    async run(call: AiCall, providers: AiProviderLookup, options: AiRunOptions): Promise<WorkResult> {
      const provider = providers(call.organization, call.provider);
      calls.push({ call, provider: provider?.providerId });
      if (!provider)
        return { ok: false, code: 'AI_PROVIDER_NOT_FOUND', message: `no AI provider ${call.provider ?? '(default)'}` };
      return answer(call, options);
    },
    async close() {
      this.closed = true;
    },
  };
}
