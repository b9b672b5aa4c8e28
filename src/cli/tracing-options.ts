// The tracing flags of the commands that run a daemon (`wfx daemon start`, `wfx dev`):
// OpenTelemetry traces exported over OTLP/HTTP, with the OTEL_* variables of the
// OpenTelemetry specification as defaults (docs/operations.md, "Tracing").
import type { Command } from 'commander';
import { TRACING_DEFAULTS, type DaemonOptions } from '../daemon/process/launcher.js';
import { WfxError } from '../shared/errors.js';
import type { CliContext } from './context.js';

/** The tracing flags as commander parses them. */
export interface TracingFlags {
  readonly otlpEndpoint?: string;
  readonly otlpHeader?: readonly string[];
  readonly serviceName?: string;
  readonly traceSampleRatio?: string;
}

/** Adds `--otlp-endpoint`, `--otlp-header`, `--service-name` and `--trace-sample-ratio` to a command that runs a daemon. */
export function addTracingFlags(command: Command): Command {
  return command
    .option(
      '--otlp-endpoint <url>',
      'export OpenTelemetry traces over OTLP/HTTP to this collector (<url>/v1/traces; default $OTEL_EXPORTER_OTLP_ENDPOINT; none: tracing off)',
    )
    .option(
      '--otlp-header <name=value>',
      'a header sent with each export, repeatable (default $OTEL_EXPORTER_OTLP_HEADERS)',
      (value: string, previous: readonly string[] = []) => [...previous, value],
    )
    .option('--service-name <name>', 'the service.name of the exported spans (default $OTEL_SERVICE_NAME or wfx)')
    .option(
      '--trace-sample-ratio <ratio>',
      "the share of new traces sampled, 0 to 1; a caller's traceparent keeps its own decision (default $OTEL_TRACES_SAMPLER_ARG or 1)",
    );
}

/** The DaemonOptions of the tracing flags and OTEL_* variables; USAGE_ERROR for a bad URL, header or number. */
export function tracingOptions(ctx: CliContext, opts: TracingFlags): Pick<DaemonOptions, 'tracing'> {
  const env = ctx.env;
  if (opts.otlpEndpoint === undefined && (env.OTEL_SDK_DISABLED === 'true' || env.OTEL_TRACES_EXPORTER === 'none'))
    return {};
  const url = tracesUrl(opts.otlpEndpoint, env);
  if (url === null) return {};
  const headers = {
    ...headersOf(env.OTEL_EXPORTER_OTLP_HEADERS, 'OTEL_EXPORTER_OTLP_HEADERS'),
    ...headersOf(env.OTEL_EXPORTER_OTLP_TRACES_HEADERS, 'OTEL_EXPORTER_OTLP_TRACES_HEADERS'),
    ...headersOf((opts.otlpHeader ?? []).join(','), '--otlp-header'),
  };
  return {
    tracing: {
      url,
      headers,
      serviceName: opts.serviceName ?? (env.OTEL_SERVICE_NAME || 'wfx'),
      sampleRatio: sampleRatio(opts.traceSampleRatio, env),
      maxQueue: count(env.OTEL_BSP_MAX_QUEUE_SIZE, 'OTEL_BSP_MAX_QUEUE_SIZE', TRACING_DEFAULTS.maxQueue),
      maxBatch: count(env.OTEL_BSP_MAX_EXPORT_BATCH_SIZE, 'OTEL_BSP_MAX_EXPORT_BATCH_SIZE', TRACING_DEFAULTS.maxBatch),
      delayMs: count(env.OTEL_BSP_SCHEDULE_DELAY, 'OTEL_BSP_SCHEDULE_DELAY', TRACING_DEFAULTS.delayMs),
      timeoutMs: count(
        env.OTEL_EXPORTER_OTLP_TRACES_TIMEOUT ?? env.OTEL_EXPORTER_OTLP_TIMEOUT,
        'OTEL_EXPORTER_OTLP_TIMEOUT',
        TRACING_DEFAULTS.timeoutMs,
      ),
    },
  };
}

/** The tracing flags again, for the command line of a daemon started in the background (the variables are inherited). */
export function tracingArgs(opts: TracingFlags): string[] {
  return [
    ...(opts.otlpEndpoint === undefined ? [] : ['--otlp-endpoint', opts.otlpEndpoint]),
    ...(opts.otlpHeader ?? []).flatMap((h) => ['--otlp-header', h]),
    ...(opts.serviceName === undefined ? [] : ['--service-name', opts.serviceName]),
    ...(opts.traceSampleRatio === undefined ? [] : ['--trace-sample-ratio', opts.traceSampleRatio]),
  ];
}

/**
 * Where spans go: the flag's base URL + `/v1/traces`, else OTEL_EXPORTER_OTLP_TRACES_ENDPOINT as
 * it is, else OTEL_EXPORTER_OTLP_ENDPOINT + `/v1/traces` (the specification's rules); null: none.
 */
function tracesUrl(flag: string | undefined, env: NodeJS.ProcessEnv): string | null {
  const [base, what] =
    flag !== undefined
      ? [flag, '--otlp-endpoint']
      : env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT
        ? [env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT']
        : env.OTEL_EXPORTER_OTLP_ENDPOINT
          ? [env.OTEL_EXPORTER_OTLP_ENDPOINT, 'OTEL_EXPORTER_OTLP_ENDPOINT']
          : [null, ''];
  if (base === null) return null;
  if (!URL.canParse(base) || !/^https?:$/.test(new URL(base).protocol))
    throw new WfxError('USAGE_ERROR', `${what} must be an http:// or https:// URL, got ${JSON.stringify(base)}`);
  if (what === 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT') return base;
  return `${base.replace(/\/+$/, '')}/v1/traces`;
}

/** `name=value,name2=value2` (values percent-decoded, as the specification's W3C baggage format). */
function headersOf(list: string | undefined, what: string): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const pair of (list ?? '').split(',')) {
    if (pair.trim() === '') continue;
    const at = pair.indexOf('=');
    const name = at > 0 ? pair.slice(0, at).trim() : '';
    if (!/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(name))
      throw new WfxError(
        'USAGE_ERROR',
        `${what} takes name=value pairs; "${name || pair.trim()}" is not a header name`,
      );
    headers[name.toLowerCase()] = decodeURIComponent(pair.slice(at + 1).trim());
  }
  return headers;
}

function count(value: string | undefined, what: string, fallback: number): number {
  if (value === undefined || value === '') return fallback;
  const n = Number(value);
  if (!/^\d+$/.test(value) || n < 1) throw new WfxError('USAGE_ERROR', `${what} must be a positive whole number`);
  return n;
}

/**
 * The share of new traces sampled: the flag, else OTEL_TRACES_SAMPLER and its _ARG, else 1.
 * wfx samples parent-based whatever the sampler's name: a caller's sampled flag is kept, so
 * `always_on`, `always_off` and `traceidratio` are taken as their `parentbased_` forms.
 */
function sampleRatio(flag: string | undefined, env: NodeJS.ProcessEnv): number {
  if (flag !== undefined) return ratio(flag, '--trace-sample-ratio');
  const sampler = env.OTEL_TRACES_SAMPLER ?? '';
  switch (sampler.replace(/^parentbased_/, '')) {
    case '':
    case 'always_on':
      return 1;
    case 'always_off':
      return 0;
    case 'traceidratio':
      return env.OTEL_TRACES_SAMPLER_ARG ? ratio(env.OTEL_TRACES_SAMPLER_ARG, 'OTEL_TRACES_SAMPLER_ARG') : 1;
    default:
      throw new WfxError(
        'USAGE_ERROR',
        `OTEL_TRACES_SAMPLER ${JSON.stringify(sampler)} is not one wfx knows: parentbased_traceidratio (with OTEL_TRACES_SAMPLER_ARG), parentbased_always_on or parentbased_always_off`,
      );
  }
}

function ratio(value: string, what: string): number {
  const n = Number(value);
  if (value.trim() === '' || !Number.isFinite(n) || n < 0 || n > 1)
    throw new WfxError('USAGE_ERROR', `${what} must be a number from 0 to 1, got ${JSON.stringify(value)}`);
  return n;
}
