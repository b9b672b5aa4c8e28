/**
 * What the routes ask of the other daemons sharing the database (api/cluster-port.ts's OtherDaemons), over
 * Peers (fan-out.ts): an event's correlation, a worker's activation, the event stream.
 */
import type { CompletedJob, CompletedJobs, EventDelivered } from '../../shared/api/index.js';
import { activateAcross } from './activate-across.js';
import { peerError, type Peers } from './fan-out.js';
import type { OtherDaemons } from '../api/cluster-port.js';

/** The routes' port over `peers`; `holdsJob`: whether a job's execution is held here (OtherDaemons.holdsJob). */
export function otherDaemons(peers: Peers, holdsJob: (key: string) => boolean): OtherDaemons {
  return {
    passedOn: (request) => peers.passedOn(request),
    holdsJob,
    deliverEvent: async (request, reply, deliver) => {
      const before = peers.served();
      const answers = await peers.ask<EventDelivered>(request, reply, await peers.urls(reply), { body: deliver });
      // Kept only if nothing waits anywhere: so every partition must have been asked.
      peers.covered(reply, before, answers);
      return answers.flatMap((a) => {
        if (a.status === 200) return a.body.matched;
        const err = peerError(a);
        if (err.code === 'NO_MATCHING_SUBSCRIPTION') return [];
        throw err;
      });
    },
    activateJobs: async (a) => {
      const urls = await peers.urls(a.reply);
      return urls.length > 0 ? activateAcross({ ...a, peers, urls }) : null;
    },
    completeJobs: async (request, reply, body) => {
      // Each daemon completes the jobs it holds and answers those only.
      const answers = await peers.ask<CompletedJobs>(request, reply, await peers.urls(reply), {
        path: '/jobs/complete',
        body,
      });
      const done = new Map<string, CompletedJob[]>();
      let failed: CompletedJob | null = null;
      for (const a of answers) {
        if (a.status !== 200) {
          const err = peerError(a);
          failed ??= { key: '', error: err.code, message: err.message };
          continue;
        }
        for (const r of a.body.results) done.set(r.key, [...(done.get(r.key) ?? []), r]);
      }
      return body.jobs.map(
        (j): CompletedJob =>
          done.get(j.key)?.shift() ??
          (failed !== null
            ? { ...failed, key: j.key }
            : { key: j.key, error: 'PARTITION_MOVING', message: 'no daemon holds its execution now: try again' }),
      );
    },
    follow: (request, onEvent) => peers.follow(request, onEvent),
  };
}
