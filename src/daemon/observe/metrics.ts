/**
 * The daemon's Prometheus metrics (GET /metrics, docs/operations.md "Metrics"): one prom-client
 * registry per daemon, never the library's global one, so that several daemons in one process
 * (tests) keep their counts apart. Counters move where things happen, through one small call
 * at each point (the engine's durable steps, the HTTP app's routes, the model runner, the
 * triggers); gauges are read from the state when scraped (metrics-gauges.ts). Labels are
 * bounded: a flow's id, a node type, a route's pattern, a failure code, never an execution's id.
 */
import { Counter, Histogram, Registry } from 'prom-client';
import { HotCounter, HotHistogram, type HistogramSeries } from './hot-series.js';
import type { EngineObserver } from './engine-observer.js';
import { registerScrapeGauges, type MetricsSources } from './metrics-gauges.js';
import type { WfxRecord } from '../state/records.js';
import type { ExportCounts } from './otlp-exporter.js';
import { STATE, STATUS, type Execution, type WfxState } from '../state/state.js';
import { execution } from '../state/executions.js';

export type { MetricsSources };

const SECONDS = [0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 30, 120, 600];
const FAST_SECONDS = [0.0005, 0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1];

/** The metrics of one daemon: its registry and the calls that move its series. */
export class DaemonMetrics implements EngineObserver {
  /** The registry GET /metrics answers from. */
  readonly registry = new Registry();
  private readonly started: HotCounter;
  private readonly completed: HotCounter;
  private readonly failed: Counter<'flow' | 'code'>;
  private readonly cancelled: Counter<'flow'>;
  private readonly nodeSeconds: HotHistogram;
  private readonly nodeFailures: Counter<'type'>;
  private readonly commitSeconds: HotHistogram;
  private readonly commitRecords: HotHistogram;
  private readonly scheduleFires: Counter;
  private readonly scheduleMisses: Counter;
  private readonly webhookDeliveries: Counter<'verdict'>;
  private readonly httpRequests: HotCounter;
  private readonly httpSeconds: HotHistogram;
  private readonly rateLimited: Counter;
  private readonly modelCalls: Counter<'provider' | 'outcome'>;
  private readonly modelTokens: Counter<'provider' | 'kind'>;
  private readonly modelSeconds: Histogram<'provider'>;
  private sources: MetricsSources = {};
  /** The journal's series (no labels): found once. */
  private readonly commitSeries: HistogramSeries;
  private readonly recordsSeries: HistogramSeries;

  /** `state`: the daemon's live state, read when scraped (executions running, tasks waiting). */
  constructor(private readonly state: WfxState) {
    const registers = [this.registry];
    const counter = <L extends string>(name: string, help: string, labelNames: L[] = []) =>
      new Counter<L>({ name, help, labelNames, registers });
    const histogram = <L extends string>(name: string, help: string, buckets: number[], labelNames: L[] = []) =>
      new Histogram<L>({ name, help, labelNames, buckets, registers });
    // What every start moves is kept in hot series (hot-series.ts); the rest in prom-client's own.
    this.started = new HotCounter('wfx_executions_started_total', 'Executions started, per flow', this.registry);
    this.completed = new HotCounter('wfx_executions_completed_total', 'Executions completed, per flow', this.registry);
    this.failed = counter('wfx_executions_failed_total', 'Executions failed, per flow and failure code', [
      'flow',
      'code',
    ]);
    this.cancelled = counter('wfx_executions_cancelled_total', 'Executions cancelled, per flow', ['flow']);
    this.nodeSeconds = new HotHistogram(
      'wfx_node_duration_seconds',
      'Time a node took, entered to left, per node type',
      SECONDS,
      this.registry,
    );
    this.nodeFailures = counter('wfx_node_failures_total', 'Nodes failed or timed out, per node type', ['type']);
    this.commitSeconds = new HotHistogram(
      'wfx_journal_commit_seconds',
      'Time from a step applied to its records durable (group commit)',
      FAST_SECONDS,
      this.registry,
    );
    this.commitRecords = new HotHistogram(
      'wfx_journal_commit_records',
      'Records per durable step',
      [1, 2, 5, 10, 50, 200, 1000],
      this.registry,
    );
    this.scheduleFires = counter('wfx_schedule_fires_total', 'Schedule triggers fired');
    this.scheduleMisses = counter(
      'wfx_schedule_misses_total',
      'Schedule runs missed while the daemon was down and skipped',
    );
    this.webhookDeliveries = counter('wfx_webhook_deliveries_total', 'Webhook deliveries, per verdict', ['verdict']);
    this.httpRequests = new HotCounter(
      'wfx_http_requests_total',
      'HTTP requests answered, per route pattern, method and status',
      this.registry,
    );
    this.httpSeconds = new HotHistogram(
      'wfx_http_request_duration_seconds',
      'HTTP request latency, per route pattern',
      FAST_SECONDS,
      this.registry,
    );
    this.commitSeries = this.commitSeconds.of('', () => ({}));
    this.recordsSeries = this.commitRecords.of('', () => ({}));
    this.rateLimited = counter('wfx_rate_limit_refusals_total', 'Requests refused by a key rate limit (429)');
    this.modelCalls = counter('wfx_model_calls_total', 'Model calls, per provider and outcome', [
      'provider',
      'outcome',
    ]);
    this.modelTokens = counter('wfx_model_tokens_total', 'Model tokens, per provider and kind (input, output)', [
      'provider',
      'kind',
    ]);
    this.modelSeconds = histogram('wfx_model_call_duration_seconds', 'Model call latency, per provider', SECONDS, [
      'provider',
    ]);
    registerScrapeGauges(this.registry, state, () => this.sources);
  }

  /** Gives what the scrape reads besides the state (the daemon, once its parts are up). */
  readFrom(sources: MetricsSources): void {
    this.sources = { ...this.sources, ...sources };
  }

  /** The text exposition of every series (GET /metrics). */
  exposition(): Promise<string> {
    return this.registry.metrics();
  }

  /** EngineObserver: counts what the records of a durable step did (read against `state` as it left it). */
  durable(state: WfxState, records: readonly WfxRecord[]): void {
    for (const r of records) {
      switch (r.type) {
        case 'instance.started': {
          const flow = r.instance.processId;
          this.started.of(flow, () => ({ flow })).value++;
          break;
        }
        case 'instance.finished': {
          const flow = execution(state, r.instanceId)?.processId ?? 'unknown';
          if (r.stateCd === STATE.COMPLETED) this.completed.of(flow, () => ({ flow })).value++;
          else if (r.stateCd === STATE.FAILED) this.failed.inc({ flow, code: r.error?.code ?? 'UNKNOWN' });
          else this.cancelled.inc({ flow });
          break;
        }
        case 'node.completed':
        case 'node.left':
          this.nodeEnded(
            execution(state, r.instanceId),
            r.nodeInstanceId,
            r.at,
            r.type === 'node.left' ? r.statusCd : 0,
          );
          break;
        case 'node.ran':
          this.nodeEnded(execution(state, r.instanceId), r.nodeInstanceId, r.at, 0);
          break;
        case 'nodes.ran': {
          const inst = execution(state, r.instanceId);
          for (const n of r.nodes) this.nodeEnded(inst, n.nodeInstanceId, r.at, 0);
          break;
        }
        case 'schedule.fired':
          this.scheduleFires.inc();
          break;
      }
    }
  }

  /** EngineObserver: a step's records became durable `seconds` after it ran. */
  committed(seconds: number, records: number): void {
    this.commitSeconds.observe(this.commitSeries, seconds);
    this.commitRecords.observe(this.recordsSeries, records);
  }

  /** An HTTP request answered: `route` is its pattern (`/process/instance/:id`), never its URL. */
  answered(route: string, method: string, status: number, seconds: number): void {
    const key = `${method} ${route}`;
    this.httpRequests.of(`${key} ${status}`, () => ({ route, method, status: String(status) })).value++;
    this.httpSeconds.observe(
      this.httpSeconds.of(key, () => ({ route, method })),
      seconds,
    );
    if (status === 429) this.rateLimited.inc();
  }

  /** A model call ended: `outcome` ok or its failure code; tokens as the provider counted them. */
  modelCall(
    provider: string,
    outcome: string,
    seconds: number,
    tokens: { input: number; output: number } | null,
  ): void {
    this.modelCalls.inc({ provider, outcome });
    this.modelSeconds.observe({ provider }, seconds);
    if (tokens) {
      this.modelTokens.inc({ provider, kind: 'input' }, tokens.input);
      this.modelTokens.inc({ provider, kind: 'output' }, tokens.output);
    }
  }

  /** A webhook delivery's outcome: `verdict` started, ignored (nothing to start) or refused. */
  webhookDelivery(verdict: 'started' | 'ignored' | 'refused'): void {
    this.webhookDeliveries.inc({ verdict });
  }

  /**
   * Adds the trace exporter's series, read from `counts` when scraped: only a daemon that traces
   * calls it, so one that does not has no such series (and no cost).
   */
  traceExports(counts: () => ExportCounts): void {
    const registers = [this.registry];
    new Counter({
      name: 'wfx_trace_spans_exported_total',
      help: 'Spans the OTLP collector accepted',
      registers,
      collect() {
        this.reset();
        this.inc(counts().exported);
      },
    });
    new Counter({
      name: 'wfx_trace_spans_dropped_total',
      help: 'Spans dropped: the export queue full (or closed), or their batch refused or unsent after retries',
      labelNames: ['reason'],
      registers,
      collect() {
        const c = counts();
        this.reset();
        this.inc({ reason: 'queue_full' }, c.queueFull);
        this.inc({ reason: 'export_failed' }, c.exportFailed);
      },
    });
  }

  /** `n` schedule runs missed while the daemon was down were skipped. */
  scheduleMissed(n: number): void {
    this.scheduleMisses.inc(n);
  }

  private nodeEnded(inst: Execution | undefined, nodeInstanceId: string, at: string, statusCd: number): void {
    const ni = inst?.nodes[nodeInstanceId];
    if (!ni) return;
    const type = ni.nodeType;
    // Nodes that start and end in one step share the step's time: no date to parse.
    const seconds = at === ni.startTime ? 0 : Math.max(0, (Date.parse(at) - Date.parse(ni.startTime)) / 1000);
    this.nodeSeconds.observe(
      this.nodeSeconds.of(type, () => ({ type })),
      seconds,
    );
    if (statusCd === STATUS.FAILED || statusCd === STATUS.TIMED_OUT) this.nodeFailures.inc({ type });
  }
}
