import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type {} from 'fastify-sse-v2'; // reply.sse
import type {} from '@fastify/swagger'; // schema.tags, schema.summary
import {
  Cancelled,
  ERROR_REPLIES,
  ErrorRef,
  EventBody,
  ExecutionListQuery,
  EventDelivered,
  FlowPageQuery,
  IdParams,
  InstanceListQuery,
  LogsHeaders,
  LogsQuery,
  TaskAnswerBody,
  TaskAnswered,
  TaskListQuery,
  TaskPage,
  stateName,
  type InstanceView,
  type WithDefaults,
} from '../../../shared/api/index.js';
import { executionsSchema } from '../route-schemas.js';
import { WfxError } from '../../../shared/errors.js';
import { SEARCH_MAX_ATTRIBUTES } from '../../../shared/flow/search-attributes.js';
import { extensibleCopy, ownEntry } from '../../../shared/json-object.js';
import type { Engine } from '../../engine/engine.js';
import { waitingTasks } from '../../engine/tasks.js';
import { executionQueryOf } from '../../engine/execution-query.js';
import { flowListing } from '../../flows/running-version.js';
import { failureView } from '../../engine/failures.js';
import type { Execution, WfxState } from '../../state/state.js';
import { ConcurrencySlots } from '../../state/concurrency-slots.js';
import { handOverTo } from '../durable-reply.js';
import { actorOf } from '../caller.js';
import type { StreamHub } from '../streams.js';
import { streamLogs } from '../log-stream.js';
import { InstanceReads } from '../instance-reads.js';
import { startRoutes } from './process-start.js';
import type { OtherDaemons } from '../cluster-port.js';

export interface ProcessRouteDeps {
  readonly engine: Engine;
  readonly hub: StreamHub;
  readonly state: WfxState;
  /** Seconds between SSE heartbeat comments (default 15). */
  readonly heartbeatSeconds?: number;
  readonly now?: () => Date;
  /** The other daemons sharing the database: an event is delivered to their executions too. */
  readonly others?: OtherDaemons;
}

/**
 * The execution resource (the seed's fields, plus output, parentInstanceId, error and nodes;
 * a node that started child executions lists them in childInstanceIds).
 */
export function instanceResource(inst: Execution, queuedAhead?: number | null): InstanceView {
  return {
    processInstanceId: inst.processInstanceId,
    processId: inst.processId,
    processName: inst.processName,
    processVersion: inst.processVersion,
    stateCd: inst.stateCd,
    state: stateName(inst.stateCd),
    startTime: inst.startTime,
    endTime: inst.endTime,
    correlationKey: inst.correlationKey,
    organization: inst.organization,
    data: inst.error ? extensibleCopy(inst.variables, { error: failureView(inst)! }) : inst.variables,
    output: inst.output,
    parentInstanceId: inst.parentInstanceId,
    ...(inst.parentNodeInstanceId !== undefined && { parentNodeInstanceId: inst.parentNodeInstanceId }),
    ...(inst.root !== undefined && { rootId: inst.root }),
    ...(inst.iteration !== undefined && { iteration: inst.iteration }),
    ...(inst.toolCallId !== undefined && { toolCallId: inst.toolCallId }),
    environment: inst.environment,
    ...(inst.priority !== undefined && { priority: inst.priority }),
    ...(inst.search !== undefined && { search: inst.search }),
    ...(queuedAhead !== undefined && queuedAhead !== null && { queuePosition: queuedAhead + 1 }),
    nodes: Object.values(inst.nodes).map((n) => ({
      nodeInstanceId: n.id,
      nodeId: n.nodeId,
      nodeName: n.nodeName,
      nodeType: n.nodeType,
      statusCd: n.statusCd,
      startTime: n.startTime,
      endTime: n.endTime,
      ...(n.wait && { wait: n.wait }),
      ...(n.children && { childInstanceIds: n.children }),
      ...(n.agent && { agent: n.agent }),
      ...(n.attempts !== undefined && { attempts: n.attempts }),
      ...(n.answeredBy !== undefined && { answeredBy: n.answeredBy, answeredAt: n.answeredAt }),
      ...(n.claimedBy !== undefined && { claimedBy: n.claimedBy, claimedAt: n.claimedAt }),
    })),
    ...(inst.usage && { usage: inst.usage }),
    ...(inst.retries && { retries: inst.retries }),
    ...(inst.replayOf && { replayOf: inst.replayOf }),
    ...(inst.triggeredBy && { triggeredBy: inst.triggeredBy }),
  };
}

/** POST /process/exec|start|task|event, cancel, GET instance, logs (SSE), list, instances, tasks. */
export function processRoutes(fastify: FastifyInstance, deps: ProcessRouteDeps): void {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const { engine, hub } = deps;
  const heartbeatMs = (deps.heartbeatSeconds ?? 15) * 1000;
  const reads = new InstanceReads(engine);
  const logStreams = { engine, hub, state: deps.state, now: deps.now ?? (() => new Date()), heartbeatMs };

  startRoutes(app, engine, hub);

  app.post('/process/task', {
    config: { auth: { permission: 'WORKFLOW_EXECUTE' } },
    schema: {
      tags: ['executions'],
      summary: 'Answer, claim or unclaim a waiting input node or user task',
      body: TaskAnswerBody,
      response: { 200: TaskAnswered, 422: ErrorRef, ...ERROR_REPLIES },
    },
    handler: async (request) => {
      const caller = request.caller!;
      const by = actorOf(caller);
      if (request.body.takeOver === true && !caller.permissions.has('WORKFLOW_PUBLISH'))
        throw new WfxError('FORBIDDEN', 'taking over a task another person claimed needs WORKFLOW_PUBLISH');
      await engine.submitTask({ organization: caller.organization, ...request.body, by }, handOverTo(request));
      const action = request.body.action;
      const status = action === 'CLAIM' ? 'claimed' : action === 'UNCLAIM' ? 'unclaimed' : 'resumed';
      return { processInstanceId: request.body.processInstanceId, status };
    },
  });

  app.post('/process/event', {
    config: { auth: { permission: 'WORKFLOW_EXECUTE' } },
    schema: executionsSchema(
      'Deliver a message or signal to waiting catch events',
      { body: EventBody },
      EventDelivered,
    ),
    handler: async (request, reply) => {
      const caller = request.caller!;
      const b = request.body;
      if (b.organization !== undefined && !caller.system && b.organization !== caller.organization) {
        throw new WfxError('FORBIDDEN', 'an organization-scoped credential delivers in its own organization only');
      }
      const others = deps.others && !deps.others.passedOn(request) ? deps.others : null;
      // The other daemons deliver it to what waits there, and keep nothing: kept, and its
      // message id remembered, here, once.
      const elsewhere = others
        ? () => {
            const { ttlSeconds: _ttl, messageId: _id, ...deliver } = b;
            return others.deliverEvent(request, reply, deliver);
          }
        : undefined;
      const res = await engine.publishEvent({
        organization: caller.organization ?? b.organization ?? 'default',
        eventType: b.eventType,
        correlationKey: b.correlationKey ?? null,
        data: b.data,
        ttlSeconds: b.ttlSeconds,
        messageId: b.messageId ?? null,
        ...(elsewhere && { elsewhere }),
      });
      return res.status === 'duplicate'
        ? { status: 'buffered' as const, duplicate: true, matched: [] }
        : (res as EventDelivered);
    },
  });

  app.post('/process/instance/:id/cancel', {
    config: { auth: { permission: 'WORKFLOW_EXECUTE' } },
    schema: executionsSchema('Cancel a running execution', { params: IdParams }, Cancelled),
    handler: async (request) => {
      await engine.cancel({ organization: request.caller!.organization, processInstanceId: request.params.id });
      return { processInstanceId: request.params.id, status: 'cancelled' };
    },
  });

  app.get('/process/instance/:id', {
    config: { auth: { permission: 'WORKFLOW_READ' } },
    schema: { tags: ['executions'], summary: 'An execution: state, variables, output, nodes', params: IdParams },
    handler: async (request) => {
      const { inst, release } = await reads.hold(request.caller!, request.params.id);
      try {
        return instanceResource(inst, ConcurrencySlots.of(deps.state).position(inst));
      } finally {
        release();
      }
    },
  });

  app.get('/process/instance/:id/logs', {
    config: { auth: { permission: 'WORKFLOW_READ' } },
    schema: {
      tags: ['executions'],
      summary:
        'The execution log as Server-Sent Events: every entry so far, then live ones; `event: end` once finished',
      params: IdParams,
      headers: LogsHeaders,
      querystring: LogsQuery,
    },
    handler: async (request, reply) => {
      const { inst, release } = await reads.hold(request.caller!, request.params.id);
      const header = request.headers['last-event-id'];
      const after = typeof header === 'string' && /^\d+$/.test(header) ? Number(header) : 0;
      try {
        streamLogs(logStreams, request, reply, inst, { after, follow: request.query.follow === true, onEnd: release });
      } catch (err) {
        release();
        throw err;
      }
      return reply;
    },
  });

  app.get('/process/list', {
    config: { auth: { permission: 'any' } },
    schema: {
      tags: ['flows'],
      summary: 'Flows the caller may see (public flows only without WORKFLOW_READ)',
      querystring: FlowPageQuery,
    },
    handler: async (request) => {
      const caller = request.caller!;
      const canRead = caller.permissions.has('WORKFLOW_READ');
      const flows = Object.values(deps.state.flows)
        .filter((f) => caller.organization === null || f.organization === caller.organization)
        .filter((f) => canRead || f.public)
        .filter((f) => request.query.cursor === undefined || f.processId > request.query.cursor)
        .sort((a, b) => (a.processId < b.processId ? -1 : 1));
      const page = flows.slice(0, request.query.limit);
      return {
        items: page.map((f) => ({
          processId: f.processId,
          // The name and triggers of what runs, as GET /admin/flows gives them.
          ...flowListing(f),
          public: f.public,
          organization: f.organization,
          versions: Object.keys(f.versions).sort((a, b) => Number(a) - Number(b)),
          activeVersions: { PRODUCTION: f.active.PRODUCTION ?? null, DEVELOPMENT: f.active.DEVELOPMENT ?? null },
        })),
        nextCursor: flows.length > page.length ? page.at(-1)!.processId : null,
      };
    },
  });

  app.get('/process/tasks', {
    config: { auth: { permission: 'WORKFLOW_READ' } },
    schema: executionsSchema(
      'Input nodes and user tasks waiting for POST /process/task, oldest waiting first',
      { querystring: TaskListQuery },
      TaskPage,
    ),
    handler: async (request) => {
      const caller = request.caller!;
      const q = request.query as WithDefaults<TaskListQuery, 'limit'>;
      if (!caller.system && q.organization !== undefined && q.organization !== caller.organization) {
        throw new WfxError('FORBIDDEN', "an organization-scoped credential reads its own organization's tasks only");
      }
      const organization = caller.system ? (q.organization ?? null) : caller.organization;
      if (q.processId !== undefined) {
        const flow = ownEntry(deps.state.flows, q.processId);
        if (!flow || (organization !== null && flow.organization !== organization))
          throw new WfxError('PROCESS_NOT_FOUND', `no flow ${q.processId}`);
      }
      return waitingTasks(deps.state, engine.executions, {
        organization,
        processId: q.processId,
        limit: q.limit,
        cursor: q.cursor,
      });
    },
  });

  app.get('/process/instances', {
    config: { auth: { permission: 'WORKFLOW_READ' } },
    schema: {
      tags: ['executions'],
      summary: 'Every execution the caller may see, newest first (keyset pages)',
      querystring: ExecutionListQuery,
    },
    handler: (request) => {
      const caller = request.caller!;
      const q = request.query as WithDefaults<ExecutionListQuery, 'limit' | 'children'>;
      if (!caller.system && q.organization !== undefined && q.organization !== caller.organization) {
        throw new WfxError(
          'FORBIDDEN',
          "an organization-scoped credential reads its own organization's executions only",
        );
      }
      const { limit, cursor, ...filters } = q;
      const dotted = Object.keys(filters).filter((k) => k.startsWith('search.')).length;
      if (dotted + (filters.where?.length ?? 0) > SEARCH_MAX_ATTRIBUTES)
        throw new WfxError(
          'VALIDATION_ERROR',
          `at most ${SEARCH_MAX_ATTRIBUTES} search attributes a query (search.NAME and where together)`,
        );
      const organization = caller.system ? (q.organization ?? null) : caller.organization;
      return engine.listExecutions({
        ...executionQueryOf(filters, organization),
        limit,
        ...(cursor !== undefined && { cursor }),
      });
    },
  });

  app.get('/process/:id/instances', {
    config: { auth: { permission: 'WORKFLOW_READ' } },
    schema: {
      tags: ['executions'],
      summary: 'Executions of a flow, newest first',
      params: IdParams,
      querystring: InstanceListQuery,
    },
    handler: (request) =>
      engine.listInstances(
        request.caller!,
        request.params.id,
        request.query as WithDefaults<InstanceListQuery, 'limit'>,
      ),
  });
}
