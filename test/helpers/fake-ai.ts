import type { AiAnswer, AiCall, AiProviderLookup, AiRunOptions, AiRunner } from '../../src/daemon/ai/types.js';
import type { WorkResult } from '../../src/daemon/engine/work/result.js';

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
