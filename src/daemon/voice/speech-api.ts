/**
 * Speech through an openai-compatible provider: `/audio/speech` (text to audio) and
 * `/audio/transcriptions` (audio to text), with the `openai` package's client of the
 * provider (its key, base URL and the daemon's network policy, as model calls have), the
 * call's retry policy, and the AI_* failure codes. The key is scrubbed from every message.
 */
import type { NodeFailureCode } from '../../shared/flow/failure-codes.js';
import type { OpenAiCompatibleKind } from '../ai/openai-compatible.js';
import { scrub } from '../ai/openai-compatible.js';
import type { ModelOutcome } from '../ai/provider-kind.js';
import type { AiRetryPolicy } from '../ai/types.js';
import { MAX_TIMER_MS } from '../outbound/http-request.js';
import { formatMs, retryDelayMs, sleep } from '../outbound/retry.js';
import type { WorkResult } from '../outbound/result.js';
import type { AiProvider } from '../state/state.js';

/** One attempt's result, or the thrown error to judge. */
type Attempt<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly err: unknown };

/** What a failed attempt leads to. */
function judge(
  outcome: ModelOutcome,
  name: string,
): { retry: boolean; code: NodeFailureCode; message: string; retryAfterMs?: number } {
  switch (outcome.kind) {
    case 'status': {
      const message = `${name} answered ${outcome.status}: ${outcome.detail}`;
      if (outcome.status === 401 || outcome.status === 403) return { retry: false, code: 'AI_AUTH', message };
      if (outcome.status === 429)
        return {
          retry: true,
          code: 'AI_RATE_LIMITED',
          message,
          ...(outcome.retryAfterMs !== undefined && { retryAfterMs: outcome.retryAfterMs }),
        };
      return { retry: outcome.status >= 500, code: `AI_HTTP_${outcome.status}`, message };
    }
    case 'forbidden':
      return {
        retry: false,
        code: 'AI_FORBIDDEN_ADDRESS',
        message: `${name} refused by the network policy: ${outcome.detail}`,
      };
    case 'network':
      return { retry: true, code: 'AI_NETWORK', message: `${name} cannot be reached: ${outcome.detail}` };
    case 'aborted':
      return { retry: true, code: 'AI_TIMEOUT', message: `${name}: no answer in time` };
    default:
      return { retry: false, code: 'INTERNAL_ERROR', message: `${name}: unexpected outcome` };
  }
}

/**
 * Runs `attempt` under the retry policy, each try bounded by `timeoutMs`. Resolves with the
 * value, or the failure with its code; CANCELLED when `signal` aborts.
 */
export async function withProvider<T>(
  kind: OpenAiCompatibleKind,
  provider: AiProvider,
  policy: { readonly timeoutMs: number; readonly retry: AiRetryPolicy },
  signal: AbortSignal,
  attempt: (client: Awaited<ReturnType<OpenAiCompatibleKind['clientFor']>>, signal: AbortSignal) => Promise<T>,
): Promise<WorkResult & ({ ok: true; value: T } | { ok: false })> {
  const name = `provider ${JSON.stringify(provider.name)}`;
  const key = provider.apiKey;
  const max = Math.max(1, Math.floor(policy.retry.maxAttempts));
  for (let tries = 1; ; tries++) {
    if (signal.aborted) return { ok: false, code: 'CANCELLED', message: 'the speech call was cancelled' };
    const timeout = new AbortController();
    const timer = setTimeout(() => timeout.abort(), Math.min(policy.timeoutMs, MAX_TIMER_MS));
    const both = AbortSignal.any([signal, timeout.signal]);
    let result: Attempt<T>;
    try {
      const client = await kind.clientFor(provider);
      result = { ok: true, value: await attempt(client, both) };
    } catch (err) {
      result = { ok: false, err };
    } finally {
      clearTimeout(timer);
    }
    if (result.ok) return { ok: true, value: result.value };
    if (signal.aborted) return { ok: false, code: 'CANCELLED', message: 'the speech call was cancelled' };
    const outcome: ModelOutcome = timeout.signal.aborted
      ? { kind: 'aborted' }
      : await kind.failure(result.err, { signal: both }, key);
    const verdict = judge(outcome, name);
    const after = tries > 1 ? ` (after ${tries} requests)` : '';
    if (!verdict.retry || tries >= max) {
      const message = scrub(
        verdict.code === 'AI_TIMEOUT'
          ? `${name}: no answer within ${formatMs(policy.timeoutMs)}${after}`
          : `${verdict.message}${after}`,
        key,
      );
      return { ok: false, code: verdict.code, message };
    }
    const delay = retryDelayMs(policy.retry, tries, verdict.retryAfterMs);
    if (!(await sleep(delay, signal)))
      return { ok: false, code: 'CANCELLED', message: 'the speech call was cancelled' };
  }
}
