/**
 * The audit trail's recorder: every mutating route (POST, PUT, PATCH, DELETE) that needs a
 * credential leaves one record in the trail (trail.ts) of who asked, from where, when and what,
 * once it has answered with success. The record is durable before the answer leaves, right
 * after the route's own change (docs/decisions/067-audit.md says why not with it).
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AuditEntry } from '../../shared/api/index.js';
import { actorOf, type Caller } from './caller.js';
import { hookList } from './auth.js';
import { takeDurable } from './durable-reply.js';
import { uuidv7 } from '../state/ids.js';
import type { AuditTrail } from '../store/audit-trail.js';

/** Methods that change something: their routes are audited unless AUDIT_EXCLUDED names them. */
export const MUTATING_METHODS: ReadonlySet<string> = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/**
 * Mutating routes left out of the audit trail, each with why. A route is named `METHOD /url` as
 * registered. Routes that need no credential (webhook deliveries, sign-in, sign-out) have no
 * caller to name and are left out by that rule, not by this list.
 */
export const AUDIT_EXCLUDED: Readonly<Record<string, string>> = {
  'POST /jobs/activate':
    "a worker's long poll for jobs: machine traffic that hands out leases; what a job changes is recorded by its complete/fail",
  'POST /jobs/:key/heartbeat':
    "extends a job's lease every few seconds and changes no outcome: it would drown the trail",
  'POST /admin/webhooks/:name/sign': 'signs a test payload with the secret and changes nothing',
  'POST /admin/ai-providers/:name/test': 'one test call to a model provider; changes nothing',
  'POST /mcp':
    'the MCP transport carries many messages; each tools/call, which starts an execution, is recorded by itself (action `POST /mcp tools/call`)',
  'DELETE /mcp': 'ends an MCP session, which holds nothing but the connection; its calls run on',
  'POST /admin/flows/:processId/coverage':
    "a test run's coverage, kept in memory for the console to draw: changes nothing the daemon runs or keeps",
};

/** Fields of a request body (or query) a record's summary may carry: names and states, never a value a secret could be in. */
const SUMMARY_FIELDS = [
  'name',
  'role',
  'processId',
  'version',
  'environment',
  'nodeId',
  'fromNodeId',
  'toNodeId',
  'state',
  'states',
  'status',
  'messageName',
  'kind',
  'isDefault',
  'model',
  'action',
  'label',
  'expiresAt',
  'namespace',
  'dryRun',
  'mode',
  'environmentMode',
] as const;

/** Fields of a request body or an answer that name what was acted on: copied into `targets`. */
const TARGET_FIELDS = [
  'processInstanceId',
  'instanceId',
  'nodeInstanceId',
  'processId',
  'keyId',
  'webhookId',
  'providerId',
  'connectionId',
  'fileId',
  'bulkId',
  'sessionId',
  'deliveryId',
  'replayOf',
  'messageId',
] as const;

const SUMMARIES: ReadonlySet<string> = new Set(SUMMARY_FIELDS);
const TARGETS: ReadonlySet<string> = new Set(TARGET_FIELDS);

/** Path parameters never recorded: a webhook endpoint's token is its credential. */
const SECRET_PARAMS: ReadonlySet<string> = new Set(['token']);

const MAX_TEXT = 200;

export interface AuditDeps {
  readonly trail: AuditTrail;
  readonly now?: () => Date;
}

declare module 'fastify' {
  interface FastifyRequest {
    /** Set by the audit's own last preHandler: the route's handler ran here (not passed on to another daemon). */
    audited?: true;
    /** The answer's object before it is serialized (a successful audited route's): read for the ids it names. */
    auditAnswer?: unknown;
  }
  interface FastifyInstance {
    /** Every mutating route (`METHOD /url`) and whether it is audited: the table test's list. */
    auditRoutes: Map<string, boolean>;
  }
}

/** Installs the recorder on `app`: before its routes are added, so that every one gets its hooks. */
export function installAudit(app: FastifyInstance, deps: AuditDeps): void {
  const now = deps.now ?? (() => new Date());
  const routes = new Map<string, boolean>();
  app.decorate('auditRoutes', routes);
  app.addHook('onRoute', (route) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    for (const method of methods) {
      if (!MUTATING_METHODS.has(method)) continue;
      const action = `${method} ${route.url}`;
      const auth = route.config?.auth;
      const audited = auth !== undefined && auth.permission !== 'none' && !(action in AUDIT_EXCLUDED);
      routes.set(action, audited);
      if (!audited) continue;
      route.preHandler = [...hookList(route.preHandler), reached];
      route.preSerialization = [...hookList(route.preSerialization), keep];
      route.onSend = [...hookList(route.onSend), record(action)];
    }
  });

  const reached = (request: FastifyRequest, _reply: FastifyReply, done: () => void): void => {
    request.audited = true;
    done();
  };

  // The answer as an object, so that its ids are read without parsing what it is serialized to.
  const keep = (request: FastifyRequest, _reply: FastifyReply, payload: unknown, done: () => void): void => {
    if (request.audited) request.auditAnswer = payload;
    done();
  };

  // Before the answer leaves: the record is durable before the caller hears of its change. A
  // change the handler handed over still on its way (api/durable-reply.ts) is written alongside.
  const record =
    (action: string) =>
    async (request: FastifyRequest, reply: FastifyReply, payload: unknown): Promise<unknown> => {
      const caller = request.caller;
      if (!request.audited || !caller || reply.statusCode >= 400) return payload;
      const answer = request.auditAnswer !== undefined ? request.auditAnswer : payload;
      const written = deps.trail.record(auditEntry(request, caller, action, reply.statusCode, answer, now()));
      await Promise.all([takeDurable(request), written]);
      return payload;
    };
}

/**
 * The audit record of `request`, answered `status` with `payload` (the answer's object, or the
 * JSON text it was sent as). Never copies a field outside the allowlists.
 */
export function auditEntry(
  request: FastifyRequest,
  caller: Caller,
  action: string,
  status: number,
  payload: unknown,
  at: Date,
): AuditEntry {
  const body = plainObject(request.body);
  const query = plainObject(request.query);
  const targets: Record<string, string> = {};
  const params = plainObject(request.params);
  if (params) for (const k in params) if (!SECRET_PARAMS.has(k)) putText(targets, k, params[k]);
  // A body or an answer has a few fields, the allowlists many: each field is looked up in them.
  if (body) for (const k in body) if (TARGETS.has(k)) putText(targets, k, body[k]);
  const answer = answerOf(payload);
  if (answer) for (const k in answer) if (TARGETS.has(k)) putText(targets, k, answer[k]);
  const summary: Record<string, string | number | boolean> = {};
  let summarized = false;
  for (const source of [query, body])
    if (source)
      for (const k in source) {
        if (!SUMMARIES.has(k)) continue;
        const v = source[k];
        if (typeof v === 'number' || typeof v === 'boolean') summary[k] = v;
        else if (typeof v === 'string') summary[k] = v.slice(0, MAX_TEXT);
        else if (Array.isArray(v) && v.every((x) => typeof x === 'string')) summary[k] = v.join(',').slice(0, MAX_TEXT);
        else continue;
        summarized = true;
      }
  const named = textOf(body?.organization) ?? textOf(query?.organization);
  const userAgent = request.headers['user-agent'];
  return {
    id: auditId(at),
    at: at.toISOString(),
    organization: caller.organization ?? named ?? null,
    actor: actorOf(caller),
    ...(caller.keyId !== null && { keyId: caller.keyId }),
    ...(caller.keyId === null && caller.subject !== null && { subject: caller.subject }),
    ...(caller.issuer !== undefined && { issuer: caller.issuer }),
    ...(caller.session && { session: caller.session.id }),
    ...(request.ip && { remote: request.ip }),
    ...(typeof userAgent === 'string' && { userAgent: userAgent.slice(0, MAX_TEXT) }),
    action,
    status,
    targets,
    ...(summarized && { summary }),
  };
}

/** The last record id's milliseconds and counter (auditId). */
const last = { ms: -1, seq: 0 };

/**
 * A UUIDv7 whose 12 bits after the version count up within a millisecond (RFC 9562, method 1),
 * so that this daemon's records sort in the order they were made, newest first, even when many
 * share a millisecond (or a test's clock stands still).
 */
export function auditId(at: Date): string {
  let ms = at.getTime();
  if (ms <= last.ms) {
    ms = last.ms;
    if (++last.seq > 0xfff) {
      ms++;
      last.seq = 0;
    }
  } else last.seq = 0;
  last.ms = ms;
  const id = uuidv7(new Date(ms));
  return `${id.slice(0, 14)}7${last.seq.toString(16).padStart(3, '0')}${id.slice(18)}`;
}

function plainObject(v: unknown): Record<string, unknown> | null {
  return typeof v === 'object' && v !== null && !Array.isArray(v) && !Buffer.isBuffer(v)
    ? (v as Record<string, unknown>)
    : null;
}

function textOf(v: unknown): string | undefined {
  return typeof v === 'string' && v !== '' ? v.slice(0, MAX_TEXT) : undefined;
}

function putText(out: Record<string, string>, k: string, v: unknown): void {
  const text = typeof v === 'number' ? String(v) : textOf(v);
  if (text !== undefined) out[k] = text;
}

/** The answer's top-level fields, when it is an object or the text of a small JSON object (the ids it names). */
function answerOf(payload: unknown): Record<string, unknown> | null {
  if (typeof payload !== 'string') return plainObject(payload);
  if (payload.length > 16_384 || payload[0] !== '{') return null;
  try {
    return plainObject(JSON.parse(payload));
  } catch {
    return null;
  }
}
