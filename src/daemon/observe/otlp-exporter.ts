/**
 * Exports ended spans over OTLP/HTTP as JSON (opentelemetry-proto's JSON mapping) to the
 * collector the operator names: batched, from a bounded queue. The engine never waits on it:
 * a full queue drops the span and counts it, and one export runs at a time. A batch answered
 * 429, 502, 503 or 504 is sent again (the OTLP/HTTP spec's retryable answers) after Retry-After or
 * an exponential backoff, a few times at most; any other failure drops its batch and counts it.
 * `close()` sends what is queued (the daemon's graceful stop) without waiting to retry: a retry
 * waiting is made at once, and no answer after close is retried.
 */
import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import type { AttributeValue, Span, SpanSink } from './tracer.js';

/** Answers the OTLP/HTTP spec says to retry (after Retry-After when the collector sends one). */
const RETRYABLE = new Set([429, 502, 503, 504]);
/** Sends of one batch at most, the first included. */
const MAX_ATTEMPTS = 5;
/** The longest wait before a retry, Retry-After included: a collector asking for more is not waited for. */
const MAX_BACKOFF_MS = 30_000;

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
  /** The first retry's backoff; each next one doubles it (default 1000). */
  readonly retryBaseMs?: number;
}

/**
 * What the exporter did so far: spans sent (accepted by the collector) and dropped, in all and
 * by why: the queue full (or the exporter closed), or their batch's export failed.
 */
export interface ExportCounts {
  readonly exported: number;
  readonly dropped: number;
  readonly queueFull: number;
  readonly exportFailed: number;
}

/** The OTLP/HTTP JSON span exporter (see the file's comment). */
export class OtlpExporter implements SpanSink {
  private queue: Span[] = [];
  private timer: NodeJS.Timeout | null = null;
  private sending: Promise<void> | null = null;
  private exported = 0;
  private queueFull = 0;
  private exportFailed = 0;
  private closed = false;
  /** Ends the wait before a retry (close). */
  private wake: (() => void) | null = null;
  /** An export's JSON up to its spans, as bytes: the resource and the scope, the same for every batch. */
  private readonly head: Buffer;
  /**
   * One connection kept open to the collector (one export runs at a time). node:http rather
   * than fetch: a batch is a few hundred kilobytes of text, which fetch's body handling copies
   * and converts several times on the daemon's main thread.
   */
  private readonly agent: HttpAgent;
  private readonly url: URL;

  constructor(private readonly options: OtlpOptions) {
    const resource = attributesJson({
      'service.name': options.serviceName,
      'service.version': options.version,
      'telemetry.sdk.name': 'wfx',
      'telemetry.sdk.language': 'nodejs',
    });
    const scope = JSON.stringify({ name: 'wfx', version: options.version });
    this.head = Buffer.from(
      `{"resourceSpans":[{"resource":{"attributes":${resource}},"scopeSpans":[{"scope":${scope},"spans":[`,
    );
    this.url = new URL(options.url);
    const agentOptions = { keepAlive: true, maxSockets: 1 };
    this.agent = this.url.protocol === 'https:' ? new HttpsAgent(agentOptions) : new HttpAgent(agentOptions);
  }

  /** Queues an ended span (dropped and counted when the queue is full or the exporter closed). */
  add(span: Span): void {
    if (this.closed || this.queue.length >= this.options.maxQueue) {
      this.queueFull++;
      return;
    }
    this.queue.push(span);
    if (this.queue.length >= this.options.maxBatch) this.kick();
    else this.timer ??= setTimeout(() => this.kick(), this.options.delayMs).unref();
  }

  /** Spans exported and dropped so far. */
  counts(): ExportCounts {
    const { exported, queueFull, exportFailed } = this;
    return { exported, dropped: queueFull + exportFailed, queueFull, exportFailed };
  }

  /** Whether a batch waits to be sent again (a retryable answer came back). */
  get retrying(): boolean {
    return this.wake !== null;
  }

  /** Sends every queued span (batch after batch), then takes no more. */
  async close(): Promise<void> {
    this.closed = true;
    this.wake?.();
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    while (this.sending || this.queue.length > 0) {
      if (this.sending) await this.sending;
      else this.kick();
    }
    this.agent.destroy();
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
    const body = this.body(batch);
    for (let attempt = 1; ; attempt++) {
      const answer = await this.post(body);
      if (answer === 'sent') return void (this.exported += batch.length);
      if (answer === 'lost' || attempt >= MAX_ATTEMPTS || this.closed) return void (this.exportFailed += batch.length);
      await this.pause(answer.retryAfterMs, attempt);
    }
  }

  /**
   * The export request of `batch`, each span's JSON encoded straight into the body's bytes: a
   * batch joined as one string first would be flattened and then copied again to be encoded.
   */
  private body(batch: readonly Span[]): Buffer {
    let buf = Buffer.allocUnsafe(this.head.length + batch.length * 1024);
    let at = this.head.copy(buf, 0);
    const put = (text: string) => {
      // UTF-8 takes at most three bytes for each UTF-16 unit.
      if (at + text.length * 3 > buf.length) {
        const bigger = Buffer.allocUnsafe(Math.max(buf.length * 2, at + text.length * 3));
        buf.copy(bigger, 0, 0, at);
        buf = bigger;
      }
      at += buf.write(text, at, 'utf8');
    };
    for (let i = 0; i < batch.length; i++) put(i === 0 ? spanJson(batch[i]!) : `,${spanJson(batch[i]!)}`);
    put(']}]}]}');
    return buf.subarray(0, at);
  }

  /**
   * One send: `sent` when accepted, the Retry-After asked (ms; undefined: none) when the answer
   * may be retried, `lost` otherwise (another answer, the collector down or slow).
   */
  private post(bytes: Buffer, again = false): Promise<'sent' | 'lost' | { readonly retryAfterMs: number | undefined }> {
    const send = this.url.protocol === 'https:' ? httpsRequest : httpRequest;
    return new Promise((resolve) => {
      const req = send(this.url, {
        method: 'POST',
        agent: this.agent,
        headers: { ...this.options.headers, 'content-type': 'application/json', 'content-length': bytes.length },
      });
      // The whole exchange within the timeout; the collector down or slow: the batch is lost
      // (counted), the daemon goes on.
      const timer = setTimeout(() => req.destroy(new Error('timed out')), this.options.timeoutMs).unref();
      const done = (answer: 'sent' | 'lost' | { readonly retryAfterMs: number | undefined }) => {
        clearTimeout(timer);
        resolve(answer);
      };
      req.on('error', (err: NodeJS.ErrnoException) => {
        // A kept-alive connection the collector closed as this request went out: sent again at
        // once on a new one (Node's documented remedy), part of the same send.
        if (!again && req.reusedSocket && err.code === 'ECONNRESET') {
          clearTimeout(timer);
          resolve(this.post(bytes, true));
        } else done('lost');
      });
      req.on('response', (res: IncomingMessage) => {
        const status = res.statusCode ?? 0;
        res.on('error', () => done('lost'));
        // Cut off before its end (a reset, the timeout): the first answer given stands.
        res.on('close', () => done('lost'));
        res.on('end', () => {
          if (status >= 200 && status < 300) done('sent');
          else
            done(
              RETRYABLE.has(status) ? { retryAfterMs: retryAfterMs(headerText(res.headers['retry-after'])) } : 'lost',
            );
        });
        res.resume();
      });
      req.end(bytes);
    });
  }

  /** Waits before retry `attempt`: Retry-After when given, else an exponential backoff with jitter; close ends it. */
  private pause(retryAfter: number | undefined, attempt: number): Promise<void> {
    const base = this.options.retryBaseMs ?? 1000;
    const backoff = base * 2 ** (attempt - 1) * (0.8 + Math.random() * 0.4);
    const ms = Math.min(MAX_BACKOFF_MS, retryAfter ?? backoff);
    return new Promise<void>((resolve) => {
      const timer = setTimeout(() => this.wake?.(), ms).unref();
      this.wake = () => {
        clearTimeout(timer);
        this.wake = null;
        resolve();
      };
    });
  }
}

/** A header's text (the first of repeated ones), or null. */
function headerText(value: string | string[] | undefined): string | null {
  return (Array.isArray(value) ? value[0] : value) ?? null;
}

/** A Retry-After header as milliseconds from now (seconds or an HTTP date); undefined when absent or unreadable. */
function retryAfterMs(header: string | null): number | undefined {
  if (header === null || header.trim() === '') return undefined;
  const seconds = Number(header);
  if (Number.isFinite(seconds)) return seconds >= 0 ? seconds * 1000 : undefined;
  const at = Date.parse(header);
  return Number.isNaN(at) ? undefined : Math.max(0, at - Date.now());
}

/**
 * Span `s` as OTLP JSON text (opentelemetry-proto's JSON mapping), written out directly rather
 * than built as objects for JSON.stringify: a busy daemon exports several spans a start. Ids are
 * hex the tracer made or a `traceparent` matched; every other text is escaped.
 */
export function spanJson(s: Span): string {
  let out = `{"traceId":"${s.traceId}","spanId":"${s.spanId}"`;
  if (s.parentSpanId !== null) out += `,"parentSpanId":"${s.parentSpanId}"`;
  out += `,"name":${JSON.stringify(s.name)},"kind":${s.kind}`;
  out += `,"startTimeUnixNano":"${unixNano(s.startMs)}","endTimeUnixNano":"${unixNano(s.endMs)}"`;
  out += `,"attributes":${attributesJson(s.attributes)},"status":`;
  if (s.statusCode === 0) return `${out}{}}`;
  const message = s.statusMessage ? `,"message":${JSON.stringify(s.statusMessage)}` : '';
  return `${out}{"code":${s.statusCode}${message}}}`;
}

/** Milliseconds (with a fraction) as the decimal string of nanoseconds OTLP JSON takes for a fixed64. */
function unixNano(ms: number): string {
  const whole = Math.floor(ms);
  const nanos = String(Math.floor((ms - whole) * 1e6));
  return whole === 0 ? nanos : `${whole}${nanos.padStart(6, '0')}`;
}

/** Attributes as OTLP JSON's list of `{key, value: {stringValue | boolValue | intValue | doubleValue}}`. */
function attributesJson(attrs: Readonly<Record<string, AttributeValue>>): string {
  let out = '[';
  for (const key in attrs) {
    const v = attrs[key]!;
    const value =
      typeof v === 'string'
        ? `{"stringValue":${JSON.stringify(v)}}`
        : typeof v === 'boolean'
          ? `{"boolValue":${v}}`
          : Number.isInteger(v)
            ? `{"intValue":"${v}"}`
            : `{"doubleValue":${JSON.stringify(v)}}`;
    out += `${out.length === 1 ? '' : ','}${keyJson(key)}${value}}`;
  }
  return `${out}]`;
}

/** `{"key":KEY,"value":` of each attribute name seen: the names are the code's own, a few dozen. */
const keyJsons = new Map<string, string>();

function keyJson(key: string): string {
  let json = keyJsons.get(key);
  if (json === undefined) {
    json = `{"key":${JSON.stringify(key)},"value":`;
    if (keyJsons.size < 1024) keyJsons.set(key, json);
  }
  return json;
}
