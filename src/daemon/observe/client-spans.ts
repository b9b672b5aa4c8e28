/**
 * Client spans of the work nodes do outside the step: a serviceTask's HTTP call, an aiTask's
 * model call. Each is a child of its node instance's span (nodeSpanId) and hands its context to
 * the called service as `traceparent`. Made only while tracing is on (callers check TRACER).
 */
import type { WorkResult } from '../outbound/result.js';
import type { WfxState } from '../state/state.js';
import { traceOf } from './execution-spans.js';
import { nodeSpanId } from './trace-context.js';
import { SPAN_KIND, type Span, type Tracer } from './tracer.js';
import { execution } from '../state/executions.js';

/** The node instance a piece of work is for. */
export interface WorkAt {
  readonly instanceId: string;
  readonly nodeInstanceId: string;
}

/** A client span for the work of `at`, or null when its execution has no trace (started while tracing was off). */
export function clientSpan(tracer: Tracer, state: WfxState, at: WorkAt, name: string): Span | null {
  const inst = execution(state, at.instanceId);
  const trace = traceOf(inst);
  if (trace === null || !inst) return null;
  const parent = { traceId: trace.traceId, spanId: nodeSpanId(trace, at.nodeInstanceId) };
  return tracer
    .start(name, SPAN_KIND.CLIENT, parent)
    .set('wfx.flow.id', inst.processId)
    .set('wfx.execution.id', inst.processInstanceId)
    .set('wfx.node.instance', at.nodeInstanceId);
}

/** Ends a serviceTask's span with the call's method, address (without its query), status and outcome. */
export function endHttpSpan(
  span: Span,
  call: { readonly method: string; readonly url: string },
  result: WorkResult,
): void {
  span.set('http.request.method', call.method.toUpperCase()).set('url.full', withoutQuery(call.url));
  endWork(span, result);
  if (result.ok) {
    const status = (result.value as { status?: unknown } | null)?.status;
    if (typeof status === 'number') span.set('http.response.status_code', status);
  }
  span.end();
}

/** Ends an aiTask's span with the provider, model and tokens of its answer. */
export function endAiSpan(
  span: Span,
  call: { readonly provider: string | null; readonly model?: string },
  result: WorkResult,
): void {
  span.set('gen_ai.system', call.provider ?? 'default').set('gen_ai.request.model', call.model);
  endWork(span, result);
  if (result.ok) {
    const answer = result.value as { model?: string; usage?: { inputTokens: number; outputTokens: number } };
    span
      .set('gen_ai.response.model', answer.model)
      .set('gen_ai.usage.input_tokens', answer.usage?.inputTokens)
      .set('gen_ai.usage.output_tokens', answer.usage?.outputTokens);
  }
  span.end();
}

function endWork(span: Span, result: WorkResult): void {
  if (result.ok) return;
  span.set('wfx.failure.code', result.code).set('wfx.attempts', result.attempts);
  span.fail(result.code);
}

/** A URL without credentials, query and fragment (which may carry secrets); none when it does not parse. */
function withoutQuery(url: string): string | undefined {
  if (!URL.canParse(url)) return undefined;
  const u = new URL(url);
  u.username = '';
  u.password = '';
  u.search = '';
  u.hash = '';
  return u.href;
}
