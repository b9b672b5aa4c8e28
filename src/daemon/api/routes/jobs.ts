import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type {} from '@fastify/swagger'; // schema.tags, schema.summary
import {
  ActivateJobsBody,
  CompleteJobBody,
  CompleteJobsBody,
  FailJobBody,
  HeartbeatJobBody,
  JobListQuery,
  JobParams,
  OrganizationQuery,
  ReleaseJobBody,
  type ActivatedJobs,
  type CompletedJob,
  type CompletedJobs,
  type DomainHealthList,
  type JobAnswer,
  type JobList,
  type WithDefaults,
} from '../../../shared/api/index.js';
import { WfxError } from '../../../shared/errors.js';
import type { Engine } from '../../engine/engine.js';
import type { JobBoard } from '../../jobs/board.js';
import type { Caller } from '../caller.js';
import { actingOrganization, listedOrganization } from '../organization.js';
import type { OtherDaemons } from '../cluster-port.js';

export interface JobRouteDeps {
  readonly engine: Engine;
  readonly board: JobBoard;
  /** The other daemons sharing the database: a worker is given their jobs too. */
  readonly others?: OtherDaemons;
}

/** The organization whose job a worker may name: its own (null: a system key, any). */
const jobOrganization = (caller: Caller): string | null => (caller.system ? null : caller.organization);

/** A worker's request naming one job it holds (POST /jobs/:key/...). */
interface HeldJobRequest {
  readonly params: { readonly key: string };
  readonly body: { readonly worker: string };
  readonly caller: Caller | null;
}

/**
 * The jobs API: workers activate (a long poll), complete, fail, heartbeat and release jobs
 * (permission JOB_WORKER: the worker role, and admins); operators list jobs and workers
 * (WORKFLOW_READ).
 */
export function jobRoutes(fastify: FastifyInstance, deps: JobRouteDeps): void {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const { engine, board } = deps;
  /** The job a worker names, once the board has heard from the worker: what the engine acts on. */
  const heldJob = (request: HeldJobRequest) => {
    const { key } = request.params;
    board.touched(key, request.body.worker);
    return { organization: jobOrganization(request.caller!), key, worker: request.body.worker };
  };
  const worker = { auth: { permission: 'JOB_WORKER' as const } };
  const tags = ['jobs'];

  app.post('/jobs/activate', {
    config: worker,
    schema: {
      tags,
      summary:
        'Lock up to maxJobs waiting jobs of a domain to this worker; with none available, wait up to requestTimeout ms for some',
      body: ActivateJobsBody,
    },
    handler: async (request, reply): Promise<ActivatedJobs> => {
      const b = request.body as WithDefaults<ActivateJobsBody, 'maxJobs' | 'lockDuration' | 'requestTimeout'>;
      const organization = actingOrganization(request.caller!, b.organization);
      let gone = false;
      const left = new AbortController();
      const onClose = () => {
        if (reply.raw.writableEnded) return;
        gone = true;
        left.abort();
      };
      reply.raw.on('close', onClose);
      try {
        const activate = {
          organization,
          domain: b.domain,
          ...(b.actions && { actions: b.actions }),
          worker: b.worker,
          maxJobs: b.maxJobs,
          lockDurationMs: b.lockDuration,
        };
        const others = deps.others && !deps.others.passedOn(request) ? deps.others : null;
        const across = others
          ? await others.activateJobs({
              request,
              reply,
              body: b,
              activateHere: (timeoutMs, ended, signal) => board.activate(activate, timeoutMs, ended, signal),
              releaseHere: (key) => engine.jobs.release({ organization, key, worker: b.worker }),
              left: left.signal,
            })
          : null;
        const jobs = across ?? (await board.activate(activate, b.requestTimeout, () => gone));
        // The worker went away while its jobs were being locked: give them back now rather
        // than leave them until their locks lapse (activateJobs gives back its own).
        if (gone && jobs.length > 0)
          await Promise.allSettled(
            jobs.map((j) => engine.jobs.release({ organization, key: j.key, worker: b.worker })),
          );
        return { jobs };
      } finally {
        reply.raw.off('close', onClose);
      }
    },
  });

  app.post('/jobs/:key/complete', {
    config: worker,
    schema: {
      tags,
      summary: "Complete a job this worker holds: its output (checked against the action's output schema) goes on",
      params: JobParams,
      body: CompleteJobBody,
    },
    handler: async (request): Promise<JobAnswer> =>
      engine.jobs.complete({ ...heldJob(request), output: request.body.output ?? null }),
  });

  app.post('/jobs/complete', {
    config: worker,
    schema: {
      tags,
      summary:
        'Complete many jobs this worker holds in one request, each as its own complete would; one outcome per job, in order',
      body: CompleteJobsBody,
    },
    handler: async (request, reply): Promise<CompletedJobs> => {
      const b = request.body;
      const organization = jobOrganization(request.caller!);
      const completeHere = async (key: string, output: unknown): Promise<CompletedJob> => {
        board.touched(key, b.worker);
        try {
          await engine.jobs.complete({ organization, key, worker: b.worker, output: output ?? null });
          return { key, status: 'completed' };
        } catch (err) {
          if (!(err instanceof WfxError)) throw err;
          return { key, ...errorOf(err) };
        }
      };
      // Each job is its own step, as its own request would be: their records share the group
      // commits of the moment, and one refused leaves the others done.
      const others = deps.others;
      if (!others) return { results: await Promise.all(b.jobs.map((j) => completeHere(j.key, j.output))) };
      // Among daemons sharing a database, each job is completed where its execution is held;
      // a daemon that asked this one is answered for its own partitions only.
      const passedOn = others.passedOn(request);
      const held = b.jobs.map((j) => others.holdsJob(j.key));
      const here = b.jobs.filter((_, i) => held[i]);
      const elsewhere = passedOn ? [] : b.jobs.filter((_, i) => !held[i]);
      const [mine, theirs] = await Promise.all([
        Promise.all(here.map((j) => completeHere(j.key, j.output))),
        elsewhere.length === 0
          ? []
          : others.completeJobs(request, reply, { worker: b.worker, jobs: elsewhere }).catch((err: unknown) => {
              if (!(err instanceof WfxError)) throw err;
              return elsewhere.map((j): CompletedJob => ({ key: j.key, ...errorOf(err) }));
            }),
      ]);
      if (passedOn) return { results: mine };
      let m = 0;
      let o = 0;
      return { results: held.map((h) => (h ? mine[m++]! : theirs[o++]!)) };
    },
  });

  app.post('/jobs/:key/fail', {
    config: worker,
    schema: {
      tags,
      summary: 'Fail an attempt of a job this worker holds: retried after a backoff while attempts are left',
      params: JobParams,
      body: FailJobBody,
    },
    handler: async (request): Promise<JobAnswer> => {
      const b = request.body;
      return engine.jobs.fail({
        ...heldJob(request),
        ...(b.errorCode !== undefined && { errorCode: b.errorCode }),
        ...(b.errorMessage !== undefined && { errorMessage: b.errorMessage }),
        ...(b.retry !== undefined && { retry: b.retry }),
        ...(b.retryBackoff !== undefined && { retryBackoffMs: b.retryBackoff }),
      });
    },
  });

  app.post('/jobs/:key/heartbeat', {
    config: worker,
    schema: {
      tags,
      summary: "Extend this worker's lock on a job (a long job heartbeats before its lock lapses)",
      params: JobParams,
      body: HeartbeatJobBody,
    },
    handler: async (request): Promise<JobAnswer> => {
      return engine.jobs.heartbeat({
        ...heldJob(request),
        ...(request.body.lockDuration !== undefined && { lockDurationMs: request.body.lockDuration }),
      });
    },
  });

  app.post('/jobs/:key/release', {
    config: worker,
    schema: {
      tags,
      summary: 'Give a job back unworked (a worker stopping): available again at once, no attempt counted',
      params: JobParams,
      body: ReleaseJobBody,
    },
    handler: async (request): Promise<JobAnswer> => engine.jobs.release(heldJob(request)),
  });

  app.get('/jobs', {
    config: { auth: { permission: 'WORKFLOW_READ' as const } },
    schema: {
      tags,
      summary: 'Waiting jobs, oldest first: waiting for a worker, locked (by whom, until when) or in a retry backoff',
      querystring: JobListQuery,
    },
    handler: async (request): Promise<JobList> => {
      const q = request.query as WithDefaults<JobListQuery, 'limit'>;
      return engine.jobs.list({
        organization: listedOrganization(request.caller!, q.organization),
        ...(q.domain !== undefined && { domain: q.domain }),
        ...(q.action !== undefined && { action: q.action }),
        limit: q.limit,
      });
    },
  });

  app.get('/jobs/workers', {
    config: { auth: { permission: 'WORKFLOW_READ' as const } },
    schema: {
      tags,
      summary:
        'Each domain: jobs waiting and locked, workers seen lately; stalled when jobs wait and no worker was seen',
      querystring: OrganizationQuery,
    },
    handler: async (request): Promise<DomainHealthList> => ({
      items: board.health(listedOrganization(request.caller!, request.query.organization)),
    }),
  });
}

/** A job's error in a batch's answer: the code, message and details its own request would have been answered. */
function errorOf(err: WfxError): { error: string; message: string; details?: unknown } {
  return { error: err.code, message: err.message, ...(err.details !== undefined && { details: err.details }) };
}
