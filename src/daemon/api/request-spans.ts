/**
 * HTTP server spans of the API, installed only while tracing is on (server.ts): one span per
 * request, continuing the request's `traceparent`, named by its route, with its caller
 * (actorOf) and status. A start through the API (or a webhook delivery's) continues the
 * request's span into the execution (requestTraceparent).
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { newTraceId, NOT_SAMPLED, parseTraceparent, traceparentOf } from '../observe/trace-context.js';
import { SPAN_KIND, type Span, type Tracer } from '../observe/tracer.js';
import { TRACER } from '../observe/tracing.js';
import { actorOf } from './caller.js';

/** Each request's server span, or the `traceparent` its executions continue when it is not sampled. */
const spans = new WeakMap<FastifyRequest, Span | string>();

/**
 * Adds the hooks that make a server span of each sampled request: one whose `traceparent` says
 * sampled, or a new trace the tracer's ratio samples (parent-based sampling). A request not
 * sampled makes no span, and the executions it starts none either.
 */
export function traceRequests(app: FastifyInstance, tracer: Tracer): void {
  app.addHook('onRequest', (request, _reply, done) => {
    const header = request.headers.traceparent;
    const parent = parseTraceparent(header);
    const traceId = parent?.traceId ?? newTraceId();
    if (parent !== null ? !parent.sampled : !tracer.samples(traceId)) {
      spans.set(request, parent !== null ? [header].flat()[0]! : NOT_SAMPLED);
      return done();
    }
    const route = request.routeOptions.url;
    const span = tracer.start(
      route === undefined ? request.method : `${request.method} ${route}`,
      SPAN_KIND.SERVER,
      parent,
      undefined,
      undefined,
      traceId,
    );
    span.set('http.request.method', request.method).set('http.route', route).set('url.path', request.url.split('?')[0]);
    spans.set(request, span);
    done();
  });
  app.addHook('onResponse', (request, reply, done) => {
    const span = spans.get(request);
    if (span !== undefined && typeof span !== 'string') {
      spans.delete(request);
      const caller = request.caller;
      span.set('http.response.status_code', reply.statusCode);
      if (caller) span.set('wfx.caller', actorOf(caller)).set('wfx.organization', caller.organization ?? undefined);
      if (reply.statusCode >= 500) span.fail(String(reply.statusCode));
      span.end();
    }
    done();
  });
}

/**
 * The `traceparent` an execution started by `request` continues: its server span's while
 * tracing is on (NOT_SAMPLED, or the caller's unsampled header, for a request not sampled),
 * else none (the header itself is not read: tracing off costs nothing).
 */
export function requestTraceparent(request: FastifyRequest): string | undefined {
  if (TRACER === null) return undefined;
  const span = spans.get(request);
  return span === undefined ? undefined : typeof span === 'string' ? span : traceparentOf(span);
}
