/**
 * POST /webhook/receive/{token}: a provider's delivery. The body is read raw (signatures are
 * computed over its bytes exactly) and only up to the registration's `maxBodyBytes`: a body
 * whose Content-Length says more is refused before a byte of it is read, one without a length
 * as soon as it passes the limit; either is answered 413 and recorded in the delivery log
 * with its size. Every other delivery is answered 200 {received: true, deliveryId}, whatever
 * its verdict (triggers/webhooks.ts).
 */
import type { IncomingMessage } from 'node:http';
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type {} from '@fastify/swagger'; // schema.tags, schema.summary
import { ReceiveParams } from '../../../shared/api/index.js';
import { WfxError } from '../../../shared/errors.js';
import { normalizePayload } from '../../../shared/webhooks/providers.js';
import { maxBodyOf, verifyWith, type WebhookReceiver } from '../../triggers/webhooks.js';
import type { Engine } from '../../engine/engine.js';
import type { StreamHub } from '../streams.js';
import { answerDelivery } from '../webhook-answer.js';

export interface WebhookReceiveDeps {
  readonly receiver: WebhookReceiver;
  readonly now?: () => Date;
  /** What a registration with `respondWithin` waits on for its execution's answer (absent: every delivery is answered at once). */
  readonly answers?: { readonly engine: Engine; readonly hub: StreamHub };
}

/** A Slack `url_verification` body is a token, a challenge and a type: one larger is not read as one. */
const SLACK_CHALLENGE_MAX_BYTES = 4096;

/** What reading a body up to a limit gave: the body, or how much there was (or was read) when it was over. */
type Read = { readonly body: Buffer } | { readonly body: null; readonly bytes: number; readonly whole: boolean };

/**
 * Reads `stream` whole when it holds at most `limit` bytes. Over it: by `declared` (the
 * Content-Length), nothing is read; else reading stops at the chunk that passes the limit.
 */
function readUpTo(stream: IncomingMessage, limit: number, declared: string | undefined): Promise<Read> {
  const length = declared === undefined ? NaN : Number(declared);
  if (length > limit) return Promise.resolve({ body: null, bytes: length, whole: true });
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let bytes = 0;
    const stop = () => {
      stream.off('data', onData);
      stream.off('end', onEnd);
      stream.off('error', onError);
      stream.off('close', onClose);
    };
    const onData = (chunk: Buffer) => {
      bytes += chunk.length;
      if (bytes <= limit) return void chunks.push(chunk);
      stop();
      chunks.length = 0;
      resolve({ body: null, bytes, whole: false });
    };
    const onEnd = () => {
      stop();
      resolve({ body: Buffer.concat(chunks, bytes) });
    };
    const onError = (err: Error) => {
      stop();
      reject(Object.assign(err, { statusCode: 400 }));
    };
    const onClose = () => onError(new Error('the request ended before its body did'));
    stream.on('data', onData);
    stream.on('end', onEnd);
    stream.on('error', onError);
    stream.on('close', onClose);
  });
}

/** Registers POST /webhook/receive/{token} in a scope of its own (its body parser takes every content type raw). */
export function webhookReceiveRoute(fastify: FastifyInstance, deps: WebhookReceiveDeps): void {
  const { receiver } = deps;
  const now = deps.now ?? (() => new Date());
  void fastify.register(async (plain) => {
    const raw = plain.withTypeProvider<TypeBoxTypeProvider>();
    raw.removeAllContentTypeParsers();
    raw.addContentTypeParser('*', (request, payload, done) => {
      const token = (request.params as { token?: string }).token ?? '';
      const endpoint = receiver.endpointOf(token);
      // An unknown token: nothing of the body is read.
      if (!endpoint) return done(new WfxError('NOT_FOUND', 'no webhook endpoint has this token'), undefined);
      const limit = maxBodyOf(endpoint.webhook);
      readUpTo(payload, limit, request.headers['content-length']).then(
        (read) => {
          if (read.body !== null) return done(null, read.body);
          receiver.refuseTooLarge(token, request.headers, read.bytes, read.whole);
          done(
            new WfxError('PAYLOAD_TOO_LARGE', `this webhook endpoint takes bodies of ${limit} bytes at most`),
            undefined,
          );
        },
        (err: Error) => done(err, undefined),
      );
    });
    raw.post('/webhook/receive/:token', {
      config: { auth: { permission: 'none' } },
      schema: {
        tags: ['webhooks'],
        summary:
          "Receive a provider's delivery: 200 {received: true, deliveryId} once verified and journaled (or refused and logged); processed after. 413 over the registration's maxBodyBytes",
        params: ReceiveParams,
      },
      handler: async (request, reply) => {
        const body = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
        const endpoint = receiver.endpointOf(request.params.token);
        if (!endpoint) throw new WfxError('NOT_FOUND', 'no webhook endpoint has this token');
        // Slack checks an Events API URL by asking for its challenge back, signed like any delivery.
        if (endpoint.webhook.provider === 'SLACK' && body.length <= SLACK_CHALLENGE_MAX_BYTES) {
          const payload = normalizePayload(body, request.headers['content-type']) as {
            type?: unknown;
            challenge?: unknown;
          };
          if (payload && payload.type === 'url_verification' && typeof payload.challenge === 'string') {
            // A secret that cannot be opened answers no challenge: the delivery's log says why.
            const { webhook, environment } = endpoint;
            const verdict = verifyWith(webhook, environment, receiver.secrets, request.headers, body, now());
            if (verdict.ok) return { challenge: payload.challenge };
          }
        }
        // The delivery's id lets a sender (wfx webhooks send) look up what it did in the log.
        const deliveryId = await receiver.receive(request.params.token, request.headers, body);
        const within = endpoint.webhook.respondWithin;
        if (within === undefined || deliveryId === null || deps.answers === undefined)
          return { received: true, deliveryId };
        const answers = { receiver, ...deps.answers };
        return answerDelivery(answers, request, reply, endpoint.webhook.webhookId, deliveryId, within);
      },
    });
  });
}
