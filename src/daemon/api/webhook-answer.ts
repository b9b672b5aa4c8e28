/**
 * A webhook registration's `respondWithin`: its delivery's caller (a form, a chat integration)
 * gets the answer of the execution the delivery started, in the same request. The flow says it
 * with its output: `status` (an HTTP status, default 200) and `body` (default: the whole output).
 * An execution that fails or is cancelled answers 500 with its error; nothing started, or no end
 * within the time, answers 202 `{received: true, deliveryId}` as an ordinary delivery would.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { DeliveryRecord } from '../state/state.js';
import { STATE, stateName } from '../../shared/api/index.js';
import type { Engine } from '../engine/engine.js';
import type { WebhookReceiver } from '../triggers/webhooks.js';
import { untilEnded } from './routes/process-start.js';
import type { StreamHub } from './streams.js';

/** The record of delivery `deliveryId` of `webhookId` once processed, or null when `ms` pass first. */
function processed(
  receiver: WebhookReceiver,
  webhookId: string,
  deliveryId: string,
  ms: number,
): Promise<DeliveryRecord | null> {
  const done = receiver.processedRecord(webhookId, deliveryId);
  if (done !== undefined) return Promise.resolve(done);
  return new Promise((resolve) => {
    const onProcessed = (e: { webhookId: string; record: DeliveryRecord | null }) => {
      if (e.record?.deliveryId !== deliveryId) return;
      settle(e.record);
    };
    const settle = (record: DeliveryRecord | null) => {
      clearTimeout(timer);
      receiver.off('processed', onProcessed);
      resolve(record);
    };
    const timer = setTimeout(() => settle(null), ms);
    receiver.on('processed', onProcessed);
  });
}

/** Answers delivery `deliveryId` of `webhookId` with its execution's answer, waiting `seconds` at most (see the top of this file). */
export async function answerDelivery(
  deps: { readonly receiver: WebhookReceiver; readonly engine: Engine; readonly hub: StreamHub },
  request: FastifyRequest,
  reply: FastifyReply,
  webhookId: string,
  deliveryId: string,
  seconds: number,
): Promise<unknown> {
  const deadline = Date.now() + seconds * 1000;
  const record = await processed(deps.receiver, webhookId, deliveryId, seconds * 1000);
  const id = record?.startedInstanceIds[0];
  const left = (deadline - Date.now()) / 1000;
  const ended =
    id === undefined || left <= 0
      ? null
      : await untilEnded(deps.engine, deps.hub, { organization: null }, request, id, left);
  if (ended === null) return reply.code(202).send({ received: true, deliveryId });
  if (ended.stateCd !== STATE.COMPLETED)
    return reply.code(500).send({
      received: true,
      deliveryId,
      processInstanceId: ended.processInstanceId,
      state: stateName(ended.stateCd),
      error: ended.error ?? { code: 'CANCELLED', message: 'the execution was cancelled' },
    });
  const output = ended.output ?? {};
  const status = output.status;
  const code = typeof status === 'number' && Number.isInteger(status) && status >= 200 && status <= 599 ? status : 200;
  const body = Object.hasOwn(output, 'body') ? output.body : output;
  return typeof body === 'string'
    ? reply.code(code).type('text/plain; charset=utf-8').send(body)
    : reply.code(code).send(body ?? null);
}
