/**
 * Spans and the tracer that hands ended spans to the exporter. A Span exists only while tracing
 * is on: every place that makes one checks `TRACER !== null` first (tracing.ts), so a daemon
 * without `--otlp-endpoint` constructs none (spansMade counts them, for the test that says so).
 */
import { newSpanId, newTraceId, sampledAt, type SpanContext } from './trace-context.js';

/** OTLP span kinds (opentelemetry/proto/trace/v1/trace.proto). */
export const SPAN_KIND = { INTERNAL: 1, SERVER: 2, CLIENT: 3 } as const;
/** OTLP status codes: unset, ok, error. */
export const SPAN_STATUS = { UNSET: 0, OK: 1, ERROR: 2 } as const;

/** An attribute's value: OTLP string, int or bool. */
export type AttributeValue = string | number | boolean;

/** Where ended spans go (OtlpExporter). */
export interface SpanSink {
  add(span: Span): void;
}

let made = 0;

/** How many Span objects this process constructed (a test reads it: none while tracing is off). */
export function spansMade(): number {
  return made;
}

/** Milliseconds since the epoch, with the sub-millisecond part the monotonic clock gives. */
export function nowMs(): number {
  return performance.timeOrigin + performance.now();
}

/** One operation of a trace: started, given attributes, ended once (a second end is ignored). */
export class Span implements SpanContext {
  readonly spanId: string;
  readonly attributes: Record<string, AttributeValue> = {};
  statusCode: number = SPAN_STATUS.UNSET;
  statusMessage = '';
  endMs = 0;

  constructor(
    private readonly sink: SpanSink,
    readonly name: string,
    readonly kind: number,
    readonly traceId: string,
    readonly parentSpanId: string | null,
    readonly startMs: number,
    spanId?: string,
  ) {
    made++;
    this.spanId = spanId ?? newSpanId();
  }

  /** Sets an attribute (undefined: left out). */
  set(key: string, value: AttributeValue | undefined): this {
    if (value !== undefined) this.attributes[key] = value;
    return this;
  }

  /** Marks the span failed, with a short message (never a secret: callers pass codes and statuses). */
  fail(message: string): this {
    this.statusCode = SPAN_STATUS.ERROR;
    this.statusMessage = message;
    return this;
  }

  /** Ends the span at `atMs` (default now) and hands it to the exporter. */
  end(atMs: number = nowMs()): void {
    if (this.endMs !== 0) return;
    this.endMs = Math.max(atMs, this.startMs);
    this.sink.add(this);
  }
}

/** Makes spans of one daemon; they end into its exporter. */
export class Tracer {
  /**
   * `ratio`: the share of new traces sampled (0 to 1, sampledAt); a trace that comes with a
   * caller's decision (a `traceparent`, a parent execution) keeps it.
   */
  constructor(
    private readonly sink: SpanSink,
    readonly ratio = 1,
  ) {}

  /** Whether a new trace `traceId` is sampled (one that no caller decided for). */
  samples(traceId: string): boolean {
    return sampledAt(traceId, this.ratio);
  }

  /**
   * A span named `name` of kind `kind`, child of `parent` (a new trace without one), started at
   * `startMs` (default now); `spanId` for a span whose id was decided before (nodeSpanId).
   */
  start(
    name: string,
    kind: number,
    parent: SpanContext | null,
    startMs: number = nowMs(),
    spanId?: string,
    traceId?: string,
  ): Span {
    const trace = traceId ?? parent?.traceId ?? newTraceId();
    return new Span(this.sink, name, kind, trace, parent?.spanId ?? null, startMs, spanId);
  }
}
