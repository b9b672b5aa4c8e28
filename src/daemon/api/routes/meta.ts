import { whoAmI } from '../caller.js';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type {} from 'fastify-sse-v2'; // reply.sse
import type {} from '@fastify/swagger'; // schema.tags, app.swagger()
import {
  stateName,
  type Health,
  type LifecycleEventView,
  type StoreHealth,
  type WhoAmI,
} from '../../../shared/api/index.js';
import { VERSION } from '../../../shared/version.js';
import type { LifecycleEvent } from '../../engine/engine.js';
import type { WfxState } from '../../state/state.js';
import type { DurableStore } from '../../store/store.js';
import type { HistoryDamageReport } from '../../store/history-store.js';
import { lapsedCredential, type StreamHub } from '../streams.js';
import type { OtherDaemons } from '../cluster-port.js';

/** A lifecycle event as GET /events sends it: an execution's `stateCd` with its name, `state`, beside it. Pure. */
export function eventView(e: LifecycleEvent): LifecycleEventView {
  return e.stateCd === undefined ? { ...e } : { ...e, state: stateName(e.stateCd) };
}

export interface MetaRouteDeps {
  readonly store: DurableStore<unknown, unknown>;
  readonly state: WfxState;
  readonly hub: StreamHub;
  readonly heartbeatSeconds?: number;
  readonly now?: () => Date;
  /** Damage found in history, shown by /health (`wfx daemon status`). */
  readonly historyDamage?: () => HistoryDamageReport;
  /** What the state is kept in, and the lease on it (never the database's address: /health needs no credential). */
  readonly storeHealth?: () => StoreHealth;
  /** The other daemons sharing the database: their executions' events are streamed too. */
  readonly others?: OtherDaemons;
}

/** GET /health, /auth/whoami, /events (SSE), /openapi.json. */
export function metaRoutes(app: FastifyInstance, deps: MetaRouteDeps): void {
  app.get('/health', {
    config: { auth: { permission: 'none' } },
    schema: { tags: ['meta'], summary: 'Liveness: 200 while the daemon can serve' },
    handler: async (): Promise<Health> => {
      if (deps.store.failed) throw deps.store.failed;
      const store = deps.storeHealth?.();
      if (!deps.historyDamage) return { status: 'ok', version: VERSION, ...(store && { store }) };
      // Damage to finished executions does not stop serving; it is reported here for operators.
      // Without a credential, where only: which executions are damaged is in the daemon log.
      const { damagedRecords, findings } = deps.historyDamage();
      return {
        status: 'ok',
        version: VERSION,
        ...(store && { store }),
        history: {
          damagedRecords,
          findings: findings.map(({ file, offset, code, message }) => ({ file, offset, code, message })),
        },
      };
    },
  });

  app.get('/auth/whoami', {
    config: { auth: { permission: 'any' } },
    schema: { tags: ['meta'], summary: 'Who the credential is: organization, system or not, permissions' },
    handler: async (request): Promise<WhoAmI> => whoAmI(request.caller!),
  });

  app.get('/events', {
    config: { auth: { permission: 'WORKFLOW_READ' } },
    schema: { tags: ['executions'], summary: "Lifecycle events of the caller's organization, as Server-Sent Events" },
    handler: async (request: FastifyRequest, reply: FastifyReply) => {
      const org = request.caller!.organization;
      let n = 0;
      const send = (event: string, data: string) => lapsed() || reply.sse({ id: String(++n), event, data });
      const unsubscribe = deps.hub.watchEvents((e: LifecycleEvent) => {
        if (org !== null && e.organization !== org) return;
        send(e.type, JSON.stringify(eventView(e)));
      });
      // The executions other daemons hold: their streams, relayed (each filters by the same credential).
      const relay =
        deps.others && !deps.others.passedOn(request)
          ? deps.others.follow(request, (e) => send(e.event!, e.data ?? ''))
          : null;
      const heartbeat = setInterval(
        () => lapsed() || reply.sse({ comment: 'heartbeat' }),
        (deps.heartbeatSeconds ?? 15) * 1000,
      );
      const stop = () => {
        clearInterval(heartbeat);
        unsubscribe();
        relay?.close();
        untrack();
      };
      const untrack = deps.hub.track(() => {
        stop();
        reply.sseContext.source.end();
      });
      const lapsed = lapsedCredential(deps.state, request.caller!, deps.now ?? (() => new Date()), reply, stop);
      request.raw.on('close', stop);
      reply.sse({ comment: 'connected' });
      return reply;
    },
  });

  app.get('/openapi.json', {
    config: { auth: { permission: 'none' } },
    schema: { hide: true },
    handler: async () => app.swagger(),
  });
}
