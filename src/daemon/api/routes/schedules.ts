/**
 * /admin/schedules/{processId}: pause and resume a flow's schedules in an environment (the
 * `flow.schedules` record a deploy's `schedules: {FLOW: off}` writes too), and backfill one of
 * them over a range of fire times (triggers/schedules.ts, Scheduler.backfill).
 */
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type {} from '@fastify/swagger'; // schema.tags, schema.summary
import {
  BackfillBody,
  FlowParams,
  SchedulePauseBody,
  type Backfilled,
  type SchedulesPaused,
  type WithDefaults,
} from '../../../shared/api/index.js';
import { WfxError } from '../../../shared/errors.js';
import { ownEntry } from '../../../shared/json-object.js';
import type { Flow } from '../../state/catalogue.js';
import type { WfxRecord } from '../../state/records.js';
import type { Environment, WfxState } from '../../state/state.js';
import type { DurableStore } from '../../store/store.js';
import type { Catalogue } from '../../catalogue/catalogue.js';

/** What the routes ask of the scheduler (the daemon's, on the daemon that holds the directory). */
export interface ScheduleBackfill {
  /** Starts schedule `index` (0-based) of a flow over its fire times from `from` to `to`: answers them. */
  backfill(processId: string, environment: Environment, index: number, from: Date, to: Date): Promise<string[]>;
}

export interface ScheduleRouteDeps {
  readonly store: DurableStore<WfxState, WfxRecord>;
  readonly catalogue: Catalogue;
  /** Absent: this daemon runs no schedules (a standby), and backfills are refused. */
  readonly scheduler?: ScheduleBackfill | undefined;
}

/** The flow `processId` the caller's organization (null: any) may change, with schedules; else PROCESS_NOT_FOUND. */
function flowWithSchedules(state: WfxState, processId: string, organization: string | null): Flow {
  const flow = ownEntry(state.flows, processId);
  if (!flow || (organization !== null && flow.organization !== organization))
    throw new WfxError('PROCESS_NOT_FOUND', `no flow ${processId}`);
  return flow;
}

/** The schedule routes (see the top of this file). */
export function scheduleRoutes(fastify: FastifyInstance, deps: ScheduleRouteDeps): void {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const { store } = deps;
  const publish = { auth: { permission: 'WORKFLOW_PUBLISH' as const } };

  for (const [action, paused] of [
    ['pause', true],
    ['resume', false],
  ] as const)
    app.post(`/admin/schedules/:processId/${action}`, {
      config: publish,
      schema: {
        tags: ['flows'],
        summary: paused
          ? "Pause a flow's schedules in an environment: no fire until resumed"
          : "Resume a flow's paused schedules: they fire from now on (missed fires follow missedRuns)",
        params: FlowParams,
        body: SchedulePauseBody,
      },
      handler: async (request): Promise<SchedulesPaused> => {
        const { environment } = request.body as WithDefaults<SchedulePauseBody, 'environment'>;
        const flow = flowWithSchedules(store.state, request.params.processId, request.caller!.organization);
        await deps.catalogue.setSchedules(flow.processId, environment, !paused);
        return { processId: flow.processId, environment, paused };
      },
    });

  app.post('/admin/schedules/:processId/backfill', {
    config: publish,
    schema: {
      tags: ['flows'],
      summary:
        "Start one execution per fire time of a flow's schedule in a range, each with its {scheduledTime}, as its overlap says",
      params: FlowParams,
      body: BackfillBody,
    },
    handler: async (request): Promise<Backfilled> => {
      const body = request.body as WithDefaults<BackfillBody, 'environment' | 'schedule'>;
      const flow = flowWithSchedules(store.state, request.params.processId, request.caller!.organization);
      const from = new Date(body.from);
      const to = new Date(body.to);
      if (!(from <= to)) throw new WfxError('VALIDATION_ERROR', `from (${body.from}) is after to (${body.to})`);
      if (deps.scheduler === undefined)
        throw new WfxError('SERVICE_UNAVAILABLE', 'this daemon runs no schedules (a standby): ask the one that does');
      const schedules = (flow.versions[flow.active[body.environment] ?? '']?.definition.triggers ?? []).flatMap(
        (t, i) => (t.type === 'schedule' ? [i] : []),
      );
      const index = schedules[body.schedule - 1];
      if (index === undefined)
        throw new WfxError(
          'NOT_FOUND',
          `flow ${flow.name} has ${schedules.length} schedule trigger${schedules.length === 1 ? '' : 's'} active in ${body.environment}, not ${body.schedule}`,
        );
      const fireTimes = await deps.scheduler.backfill(flow.processId, body.environment, index, from, to);
      return { processId: flow.processId, environment: body.environment, schedule: body.schedule, fireTimes };
    },
  });
}
