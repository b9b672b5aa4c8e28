/**
 * What the routes ask of the other daemons sharing the database (ports.ts's OtherDaemons), over
 * Peers (fan-out.ts): an event's correlation, a worker's activation, the event stream.
 */
import type { EventDelivered } from '../../shared/api/index.js';
import { activateAcross } from './activate-across.js';
import { peerError, type Peers } from './fan-out.js';
import type { OtherDaemons } from './ports.js';

/** The routes' port over `peers`. */
export function otherDaemons(peers: Peers): OtherDaemons {
  return {
    passedOn: (request) => peers.passedOn(request),
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
    follow: (request, onEvent) => peers.follow(request, onEvent),
  };
}
