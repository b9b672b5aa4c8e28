/**
 * The error body every answer takes (SPEC.md section 5): from a thrown value (the routes' one
 * error handler), or written on the socket for a request Node's HTTP parser refused.
 */
import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import type { FastifyError } from 'fastify';
import type { ErrorBody } from '../../shared/api/index.js';
import { ERROR_CODES, WfxError, type ErrorCode } from '../../shared/errors.js';

/** Fastify's own error codes that are the caller's fault, mapped to ours. */
const FASTIFY_CODES: Record<string, ErrorCode> = {
  FST_ERR_CTP_BODY_TOO_LARGE: 'PAYLOAD_TOO_LARGE',
  FST_ERR_CTP_INVALID_MEDIA_TYPE: 'VALIDATION_ERROR',
  FST_ERR_CTP_EMPTY_JSON_BODY: 'VALIDATION_ERROR',
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: 'VALIDATION_ERROR',
  FST_ERR_CTP_INVALID_JSON_BODY: 'VALIDATION_ERROR',
  FST_ERR_VALIDATION: 'VALIDATION_ERROR',
};

/** Turns any thrown value into the wire error body and status. Never exposes a stack. */
export function toErrorAnswer(err: unknown): { status: number; body: ErrorBody } {
  const timestamp = new Date().toISOString();
  if (err instanceof WfxError) {
    let body: ErrorBody = { error: err.code, message: err.message, timestamp };
    const details = err.details as { retryAfter?: number } | undefined;
    const retries =
      err.code === 'RATE_LIMIT_EXCEEDED' ||
      err.code === 'ORG_RATE_EXCEEDED' ||
      err.code === 'PARTITION_MOVING' ||
      err.code === 'TOO_MANY_CONNECTIONS';
    if (retries && typeof details?.retryAfter === 'number') body = { ...body, retryAfter: details.retryAfter };
    else if (err.details !== undefined) body = { ...body, details: err.details };
    return { status: err.status, body };
  }
  const fe = err as Partial<FastifyError> & {
    validation?: Array<{ instancePath?: string; message?: string }>;
    validationContext?: string;
  };
  const mapped = fe.code ? FASTIFY_CODES[fe.code] : undefined;
  if (mapped) {
    const body: ErrorBody = { error: mapped, message: fe.message ?? mapped, timestamp };
    const problems = fe.validation?.map((v) =>
      `${fe.validationContext ?? 'body'}${v.instancePath ?? ''} ${v.message ?? ''}`.trim(),
    );
    return { status: ERROR_CODES[mapped].status, body: problems ? { ...body, details: { problems } } : body };
  }
  // Bad JSON from the JSON parser is a SyntaxError with statusCode 400; any other client error
  // Fastify raises without a code of ours (an unsupported media type, a body that breaks off) is
  // the caller's too: a 400, never a 500.
  if (fe.statusCode === 413)
    return { status: 413, body: { error: 'PAYLOAD_TOO_LARGE', message: fe.message ?? 'payload too large', timestamp } };
  if (typeof fe.statusCode === 'number' && fe.statusCode >= 400 && fe.statusCode < 500) {
    return { status: 400, body: { error: 'VALIDATION_ERROR', message: fe.message ?? 'bad request', timestamp } };
  }
  return { status: 500, body: { error: 'INTERNAL_ERROR', message: 'internal error', timestamp } };
}

/** Node's HTTP parser errors (`clientError`) that have an answer other than 400. */
const CLIENT_ERRORS: Record<string, { status: number; code: ErrorCode; message: string }> = {
  HPE_HEADER_OVERFLOW: {
    status: 431,
    code: 'REQUEST_HEADERS_TOO_LARGE',
    message: 'the request headers are over the size limit',
  },
  ERR_HTTP_REQUEST_TIMEOUT: { status: 408, code: 'REQUEST_TIMEOUT', message: 'the request did not arrive in time' },
  ERR_HTTP_HEADERS_TIMEOUT: {
    status: 408,
    code: 'REQUEST_TIMEOUT',
    message: 'the request headers did not arrive in time',
  },
};

/**
 * Answers a request Node's HTTP parser refused (Fastify's `clientErrorHandler`) with the error
 * body, then closes the connection: after a parse error the stream is out of step. Nothing is
 * written on a socket that is reset or no longer writable; a connection that timed out before
 * sending anything is closed without an answer.
 */
export function answerClientError(err: Error & { code?: string }, socket: Duplex): void {
  if (err.code === 'ECONNRESET' || socket.destroyed) return;
  // A connection that never sent a byte has no request to answer: it is closed as a keep-alive
  // connection idle too long is, silently (a client that sends just then retries elsewhere).
  const timedOut = err.code === 'ERR_HTTP_REQUEST_TIMEOUT' || err.code === 'ERR_HTTP_HEADERS_TIMEOUT';
  if (timedOut && (socket as Partial<Socket>).bytesRead === 0) {
    socket.destroy();
    return;
  }
  const known = err.code ? CLIENT_ERRORS[err.code] : undefined;
  const status = known?.status ?? 400;
  const body: ErrorBody = {
    error: known?.code ?? 'VALIDATION_ERROR',
    message: known?.message ?? `malformed HTTP request (${err.code ?? 'unparsable'})`,
    timestamp: new Date().toISOString(),
  };
  const text = JSON.stringify(body);
  if (socket.writable) {
    socket.write(
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(text)}\r\nConnection: close\r\n\r\n${text}`,
    );
  }
  socket.destroy();
}
