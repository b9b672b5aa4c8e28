/**
 * Exports ended spans over OTLP/HTTP as JSON (opentelemetry-proto's JSON mapping) to the
 * collector the operator names: batched, from a bounded queue. The engine never waits on it:
 * a full queue drops the span and counts it, a failed export drops its batch and counts it,
 * and one export runs at a time. `close()` sends what is queued (the daemon's graceful stop).
 */
import type { AttributeValue, Span, SpanSink } from './tracer.js';

/** Where and how spans are exported (tracing-options.ts reads them from options and OTEL_* variables). */
export interface OtlpOptions {
  /** The traces URL, `.../v1/traces`. */
  readonly url: string;
  readonly headers: Readonly<Record<string, string>>;
  /** The resource's `service.name`. */
  readonly serviceName: string;
  /** Spans kept waiting at most; more are dropped (OTEL_BSP_MAX_QUEUE_SIZE). */
  readonly maxQueue: number;
  /** Spans per request at most (OTEL_BSP_MAX_EXPORT_BATCH_SIZE). */
  readonly maxBatch: number;
  /** How long a span waits for its batch at most (OTEL_BSP_SCHEDULE_DELAY). */
  readonly delayMs: number;
  /** How long one export may take (OTEL_EXPORTER_OTLP_TIMEOUT). */
  readonly timeoutMs: number;
  readonly version: string;
}

/** What the exporter did so far: spans sent (accepted by the collector) and dropped. */
export interface ExportCounts {
  readonly exported: number;
  readonly dropped: number;
}

/** The OTLP/HTTP JSON span exporter (see the file's comment). */
export class OtlpExporter implements SpanSink {
  private queue: Span[] = [];
  private timer: NodeJS.Timeout | null = null;
  private sending: Promise<void> | null = null;
  private exported = 0;
  private dropped = 0;
  private closed = false;
  private readonly resource: unknown;

  constructor(private readonly options: OtlpOptions) {
    this.resource = {
      attributes: attributes({
        'service.name': options.serviceName,
        'service.version': options.version,
        'telemetry.sdk.name': 'wfx',
        'telemetry.sdk.language': 'nodejs',
      }),
    };
  }

  /** Queues an ended span (dropped and counted when the queue is full or the exporter closed). */
  add(span: Span): void {
    if (this.closed || this.queue.length >= this.options.maxQueue) {
      this.dropped++;
      return;
    }
    this.queue.push(span);
    if (this.queue.length >= this.options.maxBatch) this.kick();
    else this.timer ??= setTimeout(() => this.kick(), this.options.delayMs).unref();
  }

  /** Spans exported and dropped so far. */
  counts(): ExportCounts {
    return { exported: this.exported, dropped: this.dropped };
  }

  /** Sends every queued span (batch after batch), then takes no more. */
  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    while (this.sending || this.queue.length > 0) {
      if (this.sending) await this.sending;
      else this.kick();
    }
  }

  /** Starts an export of the next batch unless one is under way (it starts the next when done). */
  private kick(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    if (this.sending || this.queue.length === 0) return;
    const batch = this.queue.slice(0, this.options.maxBatch);
    this.queue = this.queue.slice(batch.length);
    this.sending = this.send(batch).finally(() => {
      this.sending = null;
      if (this.queue.length >= this.options.maxBatch || (this.closed && this.queue.length > 0)) this.kick();
      else if (this.queue.length > 0) this.timer ??= setTimeout(() => this.kick(), this.options.delayMs).unref();
    });
  }

  private async send(batch: Span[]): Promise<void> {
    const body = JSON.stringify({
      resourceSpans: [
        {
          resource: this.resource,
          scopeSpans: [{ scope: { name: 'wfx', version: this.options.version }, spans: batch.map(otlpSpan) }],
        },
      ],
    });
    try {
      const res = await fetch(this.options.url, {
        method: 'POST',
        headers: { ...this.options.headers, 'content-type': 'application/json' },
        body,
        signal: AbortSignal.timeout(this.options.timeoutMs),
      });
      await res.arrayBuffer().catch(() => undefined);
      if (res.ok) this.exported += batch.length;
      else this.dropped += batch.length;
    } catch {
      // The collector is down or slow: the batch is lost (counted), the daemon goes on.
      this.dropped += batch.length;
    }
  }
}

function otlpSpan(s: Span): unknown {
  return {
    traceId: s.traceId,
    spanId: s.spanId,
    ...(s.parentSpanId !== null && { parentSpanId: s.parentSpanId }),
    name: s.name,
    kind: s.kind,
    startTimeUnixNano: unixNano(s.startMs),
    endTimeUnixNano: unixNano(s.endMs),
    attributes: attributes(s.attributes),
    status: s.statusCode === 0 ? {} : { code: s.statusCode, ...(s.statusMessage && { message: s.statusMessage }) },
  };
}

/** Milliseconds (with a fraction) as the decimal string of nanoseconds OTLP JSON takes for a fixed64. */
function unixNano(ms: number): string {
  const whole = Math.floor(ms);
  const micros = Math.floor((ms - whole) * 1e6);
  return `${BigInt(whole) * 1_000_000n + BigInt(micros)}`;
}

function attributes(attrs: Readonly<Record<string, AttributeValue>>): unknown[] {
  return Object.entries(attrs).map(([key, v]) => ({
    key,
    value:
      typeof v === 'string'
        ? { stringValue: v }
        : typeof v === 'boolean'
          ? { boolValue: v }
          : Number.isInteger(v)
            ? { intValue: String(v) }
            : { doubleValue: v },
  }));
}
