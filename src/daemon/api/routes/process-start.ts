/**
 * POST /process/exec and /process/start: a start, answered once its first step is durable
 * (api/durable-reply.ts), or with `?wait=` once the execution ends (200, its end) or the wait
 * passes (202, its id as without).
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { ERROR_REPLIES, StartBody, Started, StartQuery, stateName } from '../../../shared/api/index.js';
import { extensibleCopy } from '../../../shared/json-object.js';
import type { Engine } from '../../engine/engine.js';
import { failureView } from '../../engine/failures.js';
import type { OrganizationScope } from '../../engine/scope.js';
import { queuedNode } from '../../state/concurrency-slots.js';
import { STATE, type Execution } from '../../state/state.js';
import { handOverTo } from '../durable-reply.js';
import { requestTraceparent } from '../request-spans.js';
import type { StreamHub } from '../streams.js';

/** A start's answer while the execution runs: `queued` while it waits for a slot of its flow's concurrency limit. */
export function startedAnswer(inst: Execution): Started {
  return {
    processInstanceId: inst.processInstanceId,
    processId: inst.processId,
    status: queuedNode(inst) === undefined ? 'started' : 'queued',
    startTime: inst.startTime,
  };
}

/** A synchronous start's answer once the execution ended: its state, variables (`data`, with `error`) and output. */
export function endedAnswer(inst: Execution): Started {
  const state = stateName(inst.stateCd);
  return {
    processInstanceId: inst.processInstanceId,
    processId: inst.processId,
    status: state.toLowerCase(),
    startTime: inst.startTime,
    state,
    stateCd: inst.stateCd,
    endTime: inst.endTime,
    data: inst.error ? extensibleCopy(inst.variables, { error: failureView(inst)! }) : inst.variables,
    output: inst.output,
  };
}

/**
 * Waits up to `seconds` for execution `id` to end: the ended execution, or null when the wait
 * passed, `request`'s client went away, or the daemon stopped first.
 */
export async function untilEnded(
  engine: Engine,
  hub: StreamHub,
  caller: OrganizationScope,
  request: FastifyRequest,
  id: string,
  seconds: number,
): Promise<Execution | null> {
  const gone = new AbortController();
  const onClose = () => gone.abort();
  request.raw.once('close', onClose);
  // Ended already (it may have ended before the wait began): no longer running here, resident or at rest.
  const ended = () => {
    const live = engine.executions.get(id);
    return live === undefined ? engine.executions.coldSummary(id) === undefined : live.stateCd !== STATE.RUNNING;
  };
  const done = await hub.untilEnded(id, seconds * 1000, ended, gone.signal).finally(() => {
    request.raw.off('close', onClose);
  });
  const now = done ? await engine.getInstance(caller, id) : null;
  return now !== null && now.stateCd !== STATE.RUNNING ? now : null;
}

/** The start routes (see the top of this file). */
export function startRoutes(fastify: FastifyInstance, engine: Engine, hub: StreamHub): void {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  // One start, for an organization's key (in its organization) and for a system key (any's).
  for (const [path, callerKind, summary] of [
    ['/process/exec', 'organization', "Start an execution in the caller's organization"],
    ['/process/start', 'system', "Start an execution of any organization's flow (system keys)"],
  ] as const)
    app.post(path, {
      config: { auth: { permission: 'WORKFLOW_EXECUTE', callerKind } },
      schema: {
        tags: ['executions'],
        summary,
        body: StartBody,
        querystring: StartQuery,
        response: { 200: Started, 202: Started, ...ERROR_REPLIES },
      },
      handler: async (request, reply: FastifyReply) => {
        const caller = request.caller!;
        const { body, query } = request;
        // The answer is known once the step is taken: it leaves once durable (api/durable-reply.ts).
        const inst = await engine.start(
          {
            organization: caller.organization,
            processId: body.processId,
            environment: query.environment,
            versionNumber: query.versionNumber,
            correlationKey: body.correlationKey ?? null,
            data: body.data ?? {},
            ...(body.priority !== undefined && { priority: body.priority }),
            traceparent: requestTraceparent(request),
          },
          handOverTo(request),
        );
        if (query.wait === undefined) return startedAnswer(inst);
        const ended = await untilEnded(engine, hub, caller, request, inst.processInstanceId, query.wait);
        if (ended !== null) return endedAnswer(ended);
        void reply.code(202);
        return startedAnswer(engine.executions.get(inst.processInstanceId) ?? inst);
      },
    });
}
