/**
 * The daemon's gauges (metrics.ts): computed when scraped, from the live state's indexes (a
 * scrape visits no execution) and from what the daemon's parts report (MetricsSources).
 */
import { Gauge, type Registry } from 'prom-client';
import { JobQueues } from '../state/job-queues.js';
import { LiveCounts } from '../state/live-counts.js';
import { TaskIndex } from '../state/task-index.js';
import { ExecutionTable } from '../state/execution-table.js';
import type { WfxState } from '../state/state.js';

/** What the scrape reads besides the state: each absent on a daemon without it. */
export interface MetricsSources {
  /** Workers polling for jobs now (jobs/board.ts). */
  readonly workersPolling?: () => number;
  /** Checkpoints written since start and their total seconds (the JSON store). */
  readonly checkpoints?: () => { readonly count: number; readonly seconds: number };
  /** Bytes of finished executions kept in history (the JSON store's history files). */
  readonly historyBytes?: () => Promise<number>;
  /** The engine's executions: cold (on disk only), and those read back and trees evicted since start. */
  readonly executions?: () => { readonly cold: number; readonly loaded: number; readonly evicted: number };
  /** The PostgreSQL store's lease and partitions. */
  readonly lease?: () => { readonly held: boolean; readonly renewedMsAgo: number; readonly partitions: number } | null;
}

/**
 * Registers on `registry` the gauges computed when scraped, from `state` and from the sources
 * `sources()` gives then (given after the registry is made: the daemon's parts come up later).
 */
export function registerScrapeGauges(registry: Registry, state: WfxState, sources: () => MetricsSources): void {
  const registers = [registry];
  /** A gauge without labels, set to what `read` says at each scrape. */
  const gauge = (name: string, help: string, read: () => number): void => {
    new Gauge({
      name,
      help,
      registers,
      collect() {
        this.set(read());
      },
    });
  };
  new Gauge({
    name: 'wfx_executions_running',
    help: 'Executions running now, per flow (waiting ones included)',
    labelNames: ['flow', 'waiting'],
    registers,
    collect() {
      this.reset();
      // Kept by the reducer (state/live-counts.ts): a scrape walks the flows, not the executions.
      for (const [flow, [running, waiting]] of LiveCounts.of(state).perFlow()) {
        this.set({ flow, waiting: 'false' }, running - waiting);
        this.set({ flow, waiting: 'true' }, waiting);
      }
    },
  });
  const tasks = { count: 0, oldest: 0, jobs: 0 };
  // From the reducer's indexes: a scrape visits no execution (the engine leaves every waiting
  // node before an execution finishes, so the job queues hold running executions' jobs only).
  const readTasks = (): void => {
    const index = TaskIndex.of(state);
    const oldest = index.oldestSince();
    tasks.count = index.size;
    tasks.oldest = oldest === null ? 0 : Math.max(0, (Date.now() - Date.parse(oldest)) / 1000);
    tasks.jobs = JobQueues.of(state).size;
  };
  gauge('wfx_tasks_waiting', 'User tasks waiting for an answer', () => {
    readTasks();
    return tasks.count;
  });
  gauge('wfx_task_oldest_wait_seconds', 'Age of the oldest user task waiting (0: none)', () => tasks.oldest);
  gauge('wfx_jobs_waiting', 'Jobs waiting for a worker or held by one', () => tasks.jobs);
  gauge('wfx_workers_connected', 'Job workers polling now', () => sources().workersPolling?.() ?? 0);
  const checkpoints = (read: 'count' | 'seconds') => () => sources().checkpoints?.()[read] ?? 0;
  gauge('wfx_snapshots_total', 'Checkpoints (snapshots) written since the daemon started', checkpoints('count'));
  gauge(
    'wfx_snapshot_seconds_total',
    'Seconds spent writing checkpoints since the daemon started',
    checkpoints('seconds'),
  );
  new Gauge({
    name: 'wfx_history_bytes',
    help: 'Bytes of finished executions kept in history (the JSON store)',
    registers,
    async collect() {
      this.set((await sources().historyBytes?.()) ?? 0);
    },
  });
  gauge(
    'wfx_executions_resident',
    'Live executions in memory (the rest are cold: on disk, read back when touched)',
    () => ExecutionTable.of(state).size,
  );
  const executions = (read: 'cold' | 'loaded' | 'evicted') => () => sources().executions?.()[read] ?? 0;
  gauge('wfx_executions_cold', 'Live executions kept on disk only (--execution-cache)', executions('cold'));
  gauge(
    'wfx_execution_reads_total',
    'Cold executions read back from disk since the daemon started',
    executions('loaded'),
  );
  gauge(
    'wfx_execution_evictions_total',
    'Trees of executions evicted from memory since the daemon started',
    executions('evicted'),
  );
  const lease = () => sources().lease?.();
  gauge('wfx_store_lease_held', 'PostgreSQL store: 1 while this daemon holds its lease', () => (lease()?.held ? 1 : 0));
  gauge(
    'wfx_store_lease_renewed_seconds_ago',
    'PostgreSQL store: seconds since the lease was last renewed (the lag behind the database)',
    () => (lease()?.renewedMsAgo ?? 0) / 1000,
  );
  gauge(
    'wfx_store_partitions_held',
    'PostgreSQL store: execution partitions this daemon holds',
    () => lease()?.partitions ?? 0,
  );
}
