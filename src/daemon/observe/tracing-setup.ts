/**
 * Tracing turned on and off with the daemon: `--otlp-endpoint` (or the OTEL_* variables) makes
 * an exporter and a tracer (tracing.ts's TRACER); the daemon's graceful stop sends what is
 * queued. Without it, nothing here is made.
 */
import { VERSION } from '../../shared/version.js';
import { OtlpExporter, type ExportCounts, type OtlpOptions } from './otlp-exporter.js';
import { Tracer } from './tracer.js';
import { setTracer } from './tracing.js';

/**
 * What a daemon traces with (DaemonOptions.tracing): the collector, the batching, and the share
 * of new traces sampled (`--trace-sample-ratio`, default 1: every one).
 */
export type TracingOptions = Omit<OtlpOptions, 'version'> & { readonly sampleRatio?: number };

/** Defaults of the OpenTelemetry SDK's batch span processor (OTEL_BSP_*), and its export timeout. */
export const TRACING_DEFAULTS = { maxQueue: 2048, maxBatch: 512, delayMs: 5000, timeoutMs: 10_000 } as const;

let exporter: OtlpExporter | null = null;

/**
 * Turns tracing on for this process: spans are made from now on and exported as `options` say.
 * Returns what reads the exporter's counts (the metrics' trace series), valid after it stops too.
 */
export function startTracing(options: TracingOptions): () => ExportCounts {
  const { sampleRatio, ...otlp } = options;
  const made = new OtlpExporter({ ...otlp, version: VERSION });
  exporter = made;
  setTracer(new Tracer(made, sampleRatio ?? 1));
  return () => made.counts();
}

/** Turns tracing off and sends the spans still queued (the daemon's graceful stop). */
export async function stopTracing(): Promise<ExportCounts | null> {
  const ending = exporter;
  exporter = null;
  setTracer(null);
  if (!ending) return null;
  await ending.close();
  return ending.counts();
}
