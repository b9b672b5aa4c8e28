/**
 * A worker's activation (POST /jobs/activate) among daemons sharing a database (decision 042):
 * a job waits in its execution's partition, held by one daemon, and a worker polls whichever
 * daemon it was given. As Zeebe's gateway does over its partitions, the daemon asked first
 * takes what is waiting here, then asks the others in turn (without waiting) until it has
 * `maxJobs`. With none anywhere it waits on every daemon at once: the first to answer with jobs
 * ends the others' waits, and jobs another one locked in that same moment beyond `maxJobs` are
 * released again (available at once, no attempt counted), not left until their locks lapse.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { ActivateJobsBody, ActivatedJob, ActivatedJobs, WithDefaults } from '../../shared/api/index.js';
import type { ActivateRequest } from '../engine/jobs.js';
import type { Engine } from '../engine/engine.js';
import type { JobBoard } from '../jobs/board.js';
import { peerError, type PeerAnswer, type Peers } from './fan-out.js';

type Body = WithDefaults<ActivateJobsBody, 'maxJobs' | 'lockDuration' | 'requestTimeout'>;

export interface Across {
  readonly request: FastifyRequest;
  readonly reply: FastifyReply;
  readonly peers: Peers;
  readonly urls: readonly string[];
  readonly board: JobBoard;
  readonly engine: Engine;
  readonly body: Body;
  readonly activate: ActivateRequest;
  /** The worker went away. */
  readonly gone: () => boolean;
}

/** Activates up to `maxJobs` jobs held by this daemon and the others (see the top of this file). */
export async function activateAcross(a: Across): Promise<ActivatedJob[]> {
  const { body, peers } = a;
  const jobs = await a.board.activate(a.activate, 0, a.gone);
  for (const url of a.urls) {
    if (jobs.length >= body.maxJobs || a.gone()) break;
    const [answer] = await peers.ask<ActivatedJobs>(a.request, a.reply, [url], {
      body: { ...body, maxJobs: body.maxJobs - jobs.length, requestTimeout: 0 },
    });
    jobs.push(...activated(answer!));
  }
  if (jobs.length > 0 || body.requestTimeout <= 0 || a.gone()) return jobs;

  // None anywhere: wait everywhere at once, until one has some.
  const stop = new AbortController();
  const ended = () => a.gone() || stop.signal.aborted;
  const waits: Promise<{ url: string | null; jobs: readonly ActivatedJob[] }>[] = [
    a.board.activate(a.activate, body.requestTimeout, ended, stop.signal).then((jobs) => ({ url: null, jobs })),
    ...a.urls.map((url) =>
      peers
        .ask<ActivatedJobs>(a.request, a.reply, [url], { body, signal: stop.signal })
        .then(([answer]) => ({ url, jobs: activated(answer!) })),
    ),
  ];
  for (const wait of waits)
    wait.then(
      (got) => got.jobs.length > 0 && stop.abort(),
      () => stop.abort(),
    );
  const settled = await Promise.allSettled(waits);
  const got = settled.flatMap((s) =>
    s.status === 'fulfilled' ? s.value.jobs.map((job) => ({ url: s.value.url, job })) : [],
  );
  const kept = got.slice(0, body.maxJobs);
  await Promise.allSettled(got.slice(body.maxJobs).map((extra) => release(a, extra.url, extra.job)));
  if (kept.length === 0) {
    const failed = settled.find((s) => s.status === 'rejected');
    if (failed) throw failed.reason;
  }
  return kept.map((k) => k.job);
}

/** The jobs another daemon activated: none when the wait was ended here (status 0). Throws its error. */
function activated(answer: PeerAnswer<ActivatedJobs>): readonly ActivatedJob[] {
  if (answer.status === 0) return [];
  if (answer.status !== 200) throw peerError(answer);
  return answer.body.jobs;
}

/** Gives a job locked beyond `maxJobs` back, where it is held. */
async function release(a: Across, url: string | null, job: ActivatedJob): Promise<void> {
  if (url === null) {
    await a.engine.jobs.release({ organization: a.activate.organization, key: job.key, worker: a.body.worker });
    return;
  }
  await a.peers.ask(a.request, a.reply, [url], {
    method: 'POST',
    path: `/jobs/${encodeURIComponent(job.key)}/release`,
    body: { worker: a.body.worker },
  });
}
