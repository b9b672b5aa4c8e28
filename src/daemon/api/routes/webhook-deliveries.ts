/**
 * A registration's delivery log (/admin/webhooks/{name}/deliveries): the list, the live
 * stream, one delivery with its kept headers and body, and its redelivery. ADMIN only: a
 * delivery's body is what a provider sent, possibly personal data.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type {} from 'fastify-sse-v2'; // reply.sse
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type {} from '@fastify/swagger'; // schema.tags, schema.summary
import {
  DeliveryParams,
  WebhookParams,
  type DeliveryDetail,
  type DeliveryList,
  type DeliveryRecord,
} from '../../../shared/api/index.js';
import { namedEntrySchema } from '../route-schemas.js';
import { WfxError } from '../../../shared/errors.js';
import type { WfxRecord } from '../../state/records.js';
import { WEBHOOK_LOG_SIZE, type WebhookRegistration, type WfxState } from '../../state/state.js';
import type { DurableStore } from '../../store/store.js';
import { insertByReceipt } from '../../state/webhook-log.js';
import { detailOf } from '../../triggers/webhook-kept.js';
import type { WebhookReceiver } from '../../triggers/webhooks.js';
import { actorOf, type Caller } from '../caller.js';
import { lapsedCredential, type StreamHub } from '../streams.js';

export interface WebhookDeliveryRouteDeps {
  readonly store: DurableStore<WfxState, WfxRecord>;
  readonly receiver: WebhookReceiver;
  readonly hub: StreamHub;
  readonly heartbeatSeconds?: number;
  readonly now?: () => Date;
  /** The registration `name` of the caller's (or the named) organization; throws NOT_FOUND. */
  readonly find: (caller: Caller, name: string, org?: string) => WebhookRegistration;
}

/** GET .../deliveries, .../deliveries/stream, .../deliveries/{deliveryId}, POST .../redeliver. */
export function webhookDeliveryRoutes(fastify: FastifyInstance, deps: WebhookDeliveryRouteDeps): void {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const { store, receiver, find } = deps;
  const state = store.state;
  const now = deps.now ?? (() => new Date());
  const admin = { auth: { permission: 'ADMIN' as const } };

  /** The log of `w` as shown: refused deliveries not written yet take their places by time. */
  const logOf = (w: WebhookRegistration): DeliveryRecord[] => {
    const log = [...(state.webhookDeliveries[w.webhookId] ?? [])];
    for (const r of receiver.unwrittenRefusals(w.webhookId)) insertByReceipt(log, r);
    return log;
  };

  app.get('/admin/webhooks/:name/deliveries', {
    config: admin,
    schema: namedEntrySchema(
      ['webhooks'],
      'The last deliveries, newest first: signature verdict, event, what started, or why nothing did',
      WebhookParams,
    ),
    handler: async (request): Promise<DeliveryList> => {
      const w = find(request.caller!, request.params.name, request.query.organization);
      const pending = Object.values(state.pendingDeliveries)
        .filter((d) => d.webhookId === w.webhookId)
        .map((d) => ({
          deliveryId: d.deliveryId,
          receivedAt: d.receivedAt,
          environment: d.environment,
          pending: true as const,
        }));
      return {
        name: w.name,
        items: [...pending, ...logOf(w).slice(-WEBHOOK_LOG_SIZE).reverse()],
        refused: receiver.refusedCount(w.webhookId),
      };
    },
  });

  app.get('/admin/webhooks/:name/deliveries/stream', {
    config: admin,
    schema: namedEntrySchema(
      ['webhooks'],
      "A registration's deliveries as they are processed, as Server-Sent Events (`event: delivery`)",
      WebhookParams,
    ),
    handler: async (request: FastifyRequest, reply: FastifyReply) => {
      const { name } = request.params as { name: string };
      const w = find(request.caller!, name, (request.query as { organization?: string }).organization);
      let n = 0;
      const onProcessed = (e: { webhookId: string; record: DeliveryRecord | null }) => {
        if (e.webhookId !== w.webhookId || !e.record || lapsed()) return;
        reply.sse({ id: String(++n), event: 'delivery', data: JSON.stringify(e.record) });
      };
      receiver.on('processed', onProcessed);
      const heartbeat = setInterval(
        () => lapsed() || reply.sse({ comment: 'heartbeat' }),
        (deps.heartbeatSeconds ?? 15) * 1000,
      );
      const stop = () => {
        clearInterval(heartbeat);
        receiver.off('processed', onProcessed);
        untrack();
      };
      const untrack = deps.hub.track(() => {
        stop();
        reply.sseContext.source.end();
      });
      const lapsed = lapsedCredential(state, request.caller!, now, reply, stop);
      request.raw.on('close', stop);
      reply.sse({ comment: 'connected' });
      return reply;
    },
  });

  app.get('/admin/webhooks/:name/deliveries/:deliveryId', {
    config: admin,
    schema: namedEntrySchema(
      ['webhooks'],
      'One delivery: its record and, while kept, its headers (no signature or credential header) and body (payload)',
      DeliveryParams,
    ),
    handler: async (request): Promise<DeliveryDetail> => {
      const w = find(request.caller!, request.params.name, request.query.organization);
      const record = logOf(w).find((r) => r.deliveryId === request.params.deliveryId);
      if (!record)
        throw new WfxError('NOT_FOUND', `the delivery log of ${w.name} has no delivery ${request.params.deliveryId}`);
      return detailOf(receiver.files, record);
    },
  });

  app.post('/admin/webhooks/:name/deliveries/:deliveryId/redeliver', {
    config: admin,
    schema: namedEntrySchema(
      ['webhooks'],
      "Process a verified delivery's kept payload again as a new delivery (redeliveryOf), starting the flows subscribed now; no duplicate check",
      DeliveryParams,
    ),
    handler: async (request, reply) => {
      const caller = request.caller!;
      const w = find(caller, request.params.name, request.query.organization);
      const record = await receiver.redeliver(w, request.params.deliveryId, actorOf(caller));
      return reply.status(201).send(record);
    },
  });
}
