/**
 * A worker's completions, many to a request (POST /jobs/complete), as graphile-worker and
 * River complete theirs: while one request is on its way, the jobs that finish meanwhile wait
 * and go together in the next. Idle, a job goes alone at once; under load, one request and
 * one durable write in the daemon complete many, which is what lets one worker keep up with
 * thousands of jobs a second.
 */
import type { WfxClient } from '../client/client.js';
import type { CompletedJob, CompletedJobs } from '../shared/api/index.js';
import { MAX_COMPLETE_JOBS } from '../shared/api/index.js';
import { isErrorCode, isWfxError, WfxError, type ErrorCode } from '../shared/errors.js';

/** The body bytes one request carries at most: half the daemon's default limit, so that a batch is never refused for its size. */
export const MAX_BATCH_BYTES = 512 * 1024;

/** Errors of a daemon away or busy: the job's own retry (the worker's `call`) sends it again. */
const AWAY: ReadonlySet<ErrorCode> = new Set(['DAEMON_UNREACHABLE', 'SERVICE_UNAVAILABLE', 'PARTITION_MOVING']);

interface Pending {
  readonly key: string;
  readonly output: unknown;
  /** `{"key":..,"output":..}`, serialized once. */
  readonly text: string;
  readonly resolve: () => void;
  readonly reject: (err: unknown) => void;
}

/** Completes jobs for `worker`, batched (see the top of this file). */
export class Completions {
  private queue: Pending[] = [];
  private sending = false;
  /** The daemon has no POST /jobs/complete (an older one): each job goes by its own request. */
  private single = false;

  constructor(
    private readonly client: WfxClient,
    private readonly worker: string,
  ) {}

  /**
   * Completes job `key` with `output`. Resolves once it is completed; rejects with the error its
   * own complete would have thrown (JOB_NOT_FOUND, JOB_LOCK_LOST, JOB_OUTPUT_INVALID, ...).
   */
  complete(key: string, output: unknown): Promise<void> {
    if (this.single) return this.alone(key, output);
    return new Promise<void>((resolve, reject) => {
      this.queue.push({ key, output, text: JSON.stringify({ key, output }), resolve, reject });
      if (!this.sending) {
        this.sending = true;
        // Jobs that finish in the same turn go together.
        setImmediate(() => void this.send());
      }
    });
  }

  /** Sends what waits, a batch at a time, until nothing does. */
  private async send(): Promise<void> {
    while (this.queue.length > 0) {
      const batch = this.take();
      try {
        const body = `{"worker":${JSON.stringify(this.worker)},"jobs":[${batch.map((p) => p.text).join(',')}]}`;
        const { results } = await this.client.http.upload<CompletedJobs>(
          '/jobs/complete',
          Buffer.from(body),
          'application/json',
        );
        batch.forEach((p, i) => settle(p, results[i]));
      } catch (err) {
        if (isWfxError(err) && AWAY.has(err.code)) {
          for (const p of batch) p.reject(err);
          continue;
        }
        // A daemon without the route, or a batch it refused whole: each job by its own request.
        if (isWfxError(err, 'NOT_FOUND')) this.single = true;
        for (const p of batch) this.alone(p.key, p.output).then(p.resolve, p.reject);
      }
    }
    this.sending = false;
  }

  /** The next batch: in the order the jobs finished, up to the count and bytes a request may carry. */
  private take(): Pending[] {
    let bytes = 0;
    let n = 0;
    while (n < this.queue.length && n < MAX_COMPLETE_JOBS) {
      bytes += this.queue[n]!.text.length;
      if (n > 0 && bytes > MAX_BATCH_BYTES) break;
      n++;
    }
    return this.queue.splice(0, n);
  }

  private async alone(key: string, output: unknown): Promise<void> {
    await this.client.jobs.complete(key, { worker: this.worker, output });
  }
}

/** Settles a job by its outcome in a batch's answer. */
function settle(p: Pending, r: CompletedJob | undefined): void {
  if (r === undefined) return p.reject(new WfxError('INTERNAL_ERROR', `the daemon gave no outcome for job ${p.key}`));
  if ('status' in r) return p.resolve();
  const code = isErrorCode(r.error) ? r.error : 'INTERNAL_ERROR';
  p.reject(new WfxError(code, r.message, r.details !== undefined ? { details: r.details } : {}));
}
