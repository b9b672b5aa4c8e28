/**
 * W3C trace context (https://www.w3.org/TR/trace-context/): `traceparent` headers read and
 * written, ids made, and the trace an execution carries on its record (Execution.trace). Pure
 * functions; used only while tracing is on (tracing.ts).
 */
import { randomFillSync } from 'node:crypto';

/** A span's place in a trace: 32 and 16 lower-case hex digits. */
export interface SpanContext {
  readonly traceId: string;
  readonly spanId: string;
}

/** A context a `traceparent` header names, with its sampled flag (the caller's decision). */
export interface RemoteContext extends SpanContext {
  readonly sampled: boolean;
}

/**
 * The record form (Execution.trace) of an execution that is not sampled: it makes no span, and
 * neither do the executions it starts (the decision follows the trace, as parent-based
 * samplers do), while an execution with no trace at all (started while tracing was off) gives
 * its children a new one.
 */
export const NOT_SAMPLED = '-';

const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(?:-.*)?$/;
const ZERO_TRACE = '0'.repeat(32);
const ZERO_SPAN = '0'.repeat(16);

/** The context a `traceparent` header names; null when absent or malformed (version ff, zero ids). */
export function parseTraceparent(header: string | string[] | undefined): RemoteContext | null {
  const value = Array.isArray(header) ? header[0] : header;
  if (value === undefined || value.length > 512) return null;
  const m = TRACEPARENT.exec(value.trim().toLowerCase());
  if (!m || m[1] === 'ff' || m[2] === ZERO_TRACE || m[3] === ZERO_SPAN) return null;
  // Version 00 has exactly four fields; a later version may add more (the spec's rule).
  if (m[1] === '00' && value.trim().length !== 55) return null;
  return { traceId: m[2]!, spanId: m[3]!, sampled: (parseInt(m[4]!, 16) & 1) === 1 };
}

/**
 * Whether a new trace `traceId` is sampled at `ratio` (0 to 1): its last 14 hex digits, the 56
 * random bits of W3C Trace Context level 2, below `ratio` of their range. A decision by the id
 * alone, so every daemon (and any other service sampling this way) makes the same one.
 */
export function sampledAt(traceId: string, ratio: number): boolean {
  if (ratio >= 1) return true;
  if (ratio <= 0) return false;
  return parseInt(traceId.slice(18), 16) < ratio * 2 ** 56;
}

/** The `traceparent` header of a span (sampled: wfx makes spans of sampled traces only). */
export function traceparentOf(ctx: SpanContext): string {
  return `00-${ctx.traceId}-${ctx.spanId}-01`;
}

/** Random bytes drawn a block at a time: a span id is made per request and per call while tracing is on. */
const pool = Buffer.alloc(4096);
let used = pool.length;

function randomHex(bytes: number): string {
  if (used + bytes > pool.length) {
    randomFillSync(pool);
    used = 0;
  }
  used += bytes;
  return pool.toString('hex', used - bytes, used);
}

/** A new random trace id. */
export function newTraceId(): string {
  return randomHex(16);
}

/** A new random span id. */
export function newSpanId(): string {
  return randomHex(8);
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

/** The last trace readExecutionTrace read, and what it read: a step's spans are mostly of one execution. */
let lastRead: { readonly text: string; readonly trace: ExecutionTrace | null } = { text: '', trace: null };

/** An execution's trace read back from its record form; null when absent, not sampled or not of that form. */
export function readExecutionTrace(text: string | undefined): ExecutionTrace | null {
  if (text === undefined) return null;
  if (text === lastRead.text) return lastRead.trace;
  const [traceId, spanId, parentSpanId] = text.split('-');
  const trace =
    traceId?.length !== 32 || spanId?.length !== 16 ? null : { traceId, spanId, parentSpanId: parentSpanId ?? null };
  lastRead = { text, trace };
  return trace;
}

/**
 * The span id of node instance `nodeInstanceId` of an execution with trace `trace`: derived,
 * not stored, so its work's client spans (made while it runs, perhaps after a restart) and its
 * own span (written when it ends) agree without a record.
 */
export function nodeSpanId(trace: SpanContext, nodeInstanceId: string): string {
  // Two 32-bit FNV-1a hashes (different offsets) of the execution's span and the node instance:
  // unique enough within one trace, and far cheaper than a cryptographic hash per node.
  // Each text hashed where it is: their concatenation would be read a character at a time
  // through a string V8 has not flattened, several times slower.
  let a = 0x811c9dc5;
  let b = 0x01000193 ^ 0x5bd1e995;
  for (const text of [trace.spanId, nodeInstanceId])
    for (let i = 0; i < text.length; i++) {
      const c = text.charCodeAt(i);
      a = Math.imul(a ^ c, 0x01000193);
      b = Math.imul(b ^ c, 0x01000193) ^ (b >>> 15);
    }
  const hex = hex32(a) + hex32(b);
  // A span id of zeros is invalid (W3C): not reachable in practice, guarded all the same.
  return hex === '0000000000000000' ? '0000000000000001' : hex;
}

/** Two hex digits of each byte. */
const HEX_BYTES = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, '0'));

/** A 32-bit integer's eight hex digits. */
function hex32(x: number): string {
  return HEX_BYTES[x >>> 24]! + HEX_BYTES[(x >>> 16) & 255]! + HEX_BYTES[(x >>> 8) & 255]! + HEX_BYTES[x & 255]!;
}
