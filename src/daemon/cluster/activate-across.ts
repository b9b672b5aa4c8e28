/**
 * A worker's activation (POST /jobs/activate) among daemons sharing a database (decision 042):
 * a job waits in its execution's partition, held by one daemon, and a worker polls whichever
 * daemon it was given. As Zeebe's gateway does over its partitions, the daemon asked first
 * takes what is waiting here, then asks the others in turn (without waiting) until it has
 * `maxJobs`. With none anywhere it waits on every daemon at once: the first to answer with jobs
 * ends the others' waits, and jobs another one locked in that same moment beyond `maxJobs` are
 * released again (available at once, no attempt counted), not left until their locks lapse.
 */
import type { ActivatedJob, ActivatedJobs } from '../../shared/api/index.js';
import { peerError, type PeerAnswer, type Peers } from './fan-out.js';
import type { JobsAcross } from '../api/cluster-port.js';

/** A worker's activation (JobsAcross), and the other daemons to ask: `urls`, over `peers`. */
export interface Across extends JobsAcross {
  readonly peers: Peers;
  readonly urls: readonly string[];
}

/** Activates up to `maxJobs` jobs held by this daemon and the others (see the top of this file). */
export async function activateAcross(a: Across): Promise<ActivatedJob[]> {
  const got: Locked[] = [];
  try {
    return await activate(a, got);
  } catch (err) {
    // Whatever was locked before it failed goes back, so that a worker trying again finds it.
    await kept(a, got, 0);
    throw err;
  }
}

async function activate(a: Across, got: Locked[]): Promise<ActivatedJob[]> {
  const { body, peers } = a;
  const gone = () => a.left.aborted;
  got.push(...(await a.activateHere(0, gone)).map((job) => ({ url: null, job })));
  for (const url of a.urls) {
    if (got.length >= body.maxJobs || gone()) break;
    const [answer] = await peers.ask<ActivatedJobs>(a.request, a.reply, [url], {
      body: { ...body, maxJobs: body.maxJobs - got.length, requestTimeout: 0 },
    });
    got.push(...activated(answer!).map((job) => ({ url, job })));
  }
  if (got.length > 0 || body.requestTimeout <= 0 || gone()) return kept(a, got);

  // None anywhere: wait everywhere at once, until one has some (or the worker goes away).
  const stop = new AbortController();
  const onLeft = () => stop.abort();
  a.left.addEventListener('abort', onLeft);
  const ended = () => gone() || stop.signal.aborted;
  const waits: Promise<{ url: string | null; jobs: readonly ActivatedJob[] }>[] = [
    a.activateHere(body.requestTimeout, ended, stop.signal).then((jobs) => ({ url: null, jobs })),
    ...a.urls.map((url) =>
      peers
        .ask<ActivatedJobs>(a.request, a.reply, [url], {
          body,
          signal: stop.signal,
          timeoutMs: body.requestTimeout + ANSWER_MS,
        })
        .then(([answer]) => ({ url, jobs: activated(answer!) })),
    ),
  ];
  for (const wait of waits)
    wait.then(
      (waited) => waited.jobs.length > 0 && stop.abort(),
      () => stop.abort(),
    );
  const settled = await Promise.allSettled(waits);
  a.left.removeEventListener('abort', onLeft);
  for (const s of settled)
    if (s.status === 'fulfilled') got.push(...s.value.jobs.map((job) => ({ url: s.value.url, job })));
  if (got.length === 0) {
    const failed = settled.find((s) => s.status === 'rejected');
    if (failed && !gone()) throw failed.reason;
  }
  return kept(a, got);
}

/** How long past its `requestTimeout` a long poll asked of another daemon may take to answer. */
const ANSWER_MS = 10_000;

/** A job locked for the worker, and the daemon holding it (null: this one). */
interface Locked {
  readonly url: string | null;
  readonly job: ActivatedJob;
}

/**
 * The first `maxJobs` of `got`; the rest are given back where they are held, and all of them
 * if the worker went away (rather than left until their locks lapse).
 */
async function kept(a: Across, got: Locked[], keep = a.left.aborted ? 0 : a.body.maxJobs): Promise<ActivatedJob[]> {
  const extra = got.splice(keep);
  await Promise.allSettled(extra.map((e) => release(a, e.url, e.job)));
  return got.map((k) => k.job);
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
    await a.releaseHere(job.key);
    return;
  }
  await a.peers.ask(a.request, a.reply, [url], {
    method: 'POST',
    path: `/jobs/${encodeURIComponent(job.key)}/release`,
    body: { worker: a.body.worker },
  });
}
