/**
 * W3C trace context (https://www.w3.org/TR/trace-context/): `traceparent` headers read and
 * written, ids made, and the trace an execution carries on its record (Instance.trace). Pure
 * functions; used only while tracing is on (tracing.ts).
 */
import { createHash, randomBytes } from 'node:crypto';

/** A span's place in a trace: 32 and 16 lower-case hex digits. */
export interface SpanContext {
  readonly traceId: string;
  readonly spanId: string;
}

const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(?:-.*)?$/;
const ZERO_TRACE = '0'.repeat(32);
const ZERO_SPAN = '0'.repeat(16);

/** The context a `traceparent` header names; null when absent or malformed (version ff, zero ids). */
export function parseTraceparent(header: string | string[] | undefined): SpanContext | null {
  const value = Array.isArray(header) ? header[0] : header;
  if (value === undefined || value.length > 512) return null;
  const m = TRACEPARENT.exec(value.trim().toLowerCase());
  if (!m || m[1] === 'ff' || m[2] === ZERO_TRACE || m[3] === ZERO_SPAN) return null;
  // Version 00 has exactly four fields; a later version may add more (the spec's rule).
  if (m[1] === '00' && value.trim().length !== 55) return null;
  return { traceId: m[2]!, spanId: m[3]! };
}

/** The `traceparent` header of a span (always sampled: wfx exports every span while tracing is on). */
export function traceparentOf(ctx: SpanContext): string {
  return `00-${ctx.traceId}-${ctx.spanId}-01`;
}

/** A new random trace id. */
export function newTraceId(): string {
  return randomBytes(16).toString('hex');
}

/** A new random span id. */
export function newSpanId(): string {
  return randomBytes(8).toString('hex');
}

/**
 * The trace of an execution as its record keeps it: `<traceId>-<spanId>[-<parentSpanId>]`,
 * the execution's own span and the span it continues (a webhook's or an API request's, a
 * parent execution's node), so that a node run after a restart joins the same trace and the
 * execution's span, written when it ends, names its parent.
 */
export interface ExecutionTrace extends SpanContext {
  readonly parentSpanId: string | null;
}

/** The record form of a new execution's trace, continuing `parent` (or a new trace without one). */
export function newExecutionTrace(parent: SpanContext | null): string {
  return parent === null ? `${newTraceId()}-${newSpanId()}` : `${parent.traceId}-${newSpanId()}-${parent.spanId}`;
}

/** An execution's trace read back from its record form; null when absent or not of that form. */
export function readExecutionTrace(trace: string | undefined): ExecutionTrace | null {
  if (trace === undefined) return null;
  const [traceId, spanId, parentSpanId] = trace.split('-');
  if (traceId?.length !== 32 || spanId?.length !== 16) return null;
  return { traceId, spanId, parentSpanId: parentSpanId ?? null };
}

/**
 * The span id of node instance `nodeInstanceId` of an execution with trace `trace`: derived,
 * not stored, so its work's client spans (made while it runs, perhaps after a restart) and its
 * own span (written when it ends) agree without a record.
 */
export function nodeSpanId(trace: SpanContext, nodeInstanceId: string): string {
  return createHash('sha256').update(`${trace.traceId}${trace.spanId}${nodeInstanceId}`).digest('hex').slice(0, 16);
}
