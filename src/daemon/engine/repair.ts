/**
 * Retry and replay as engine operations: what they need from history is read before their
 * step (a step never awaits), then the step decides (step/repair.ts). An execution may leave
 * the live state for history between the read and the step: the step says so (ReadAgain) and
 * the operation reads again, a bounded number of times.
 */
import { WfxError } from '../../shared/errors.js';
import type { Executions } from '../state/executions.js';
import type { Execution } from '../state/state.js';
import type { ExecutionArchive } from './archive.js';
import { readFailureChain } from './failure-point.js';
import { findInstance } from './queries.js';
import type { OrganizationScope } from './scope.js';
import { ReadAgain, type RunStep } from './step/index.js';

/** Reads before a step that are tried again at most this many times. */
const READ_ATTEMPTS = 3;

/** A retry or a replay as the API asks for it. */
export interface RepairRequest extends OrganizationScope {
  readonly processInstanceId: string;
  /** Variables set first (retry), or over those of the moment (replay). */
  readonly data?: Record<string, unknown>;
  /** Who asked (api/caller.ts, actorOf). */
  readonly by: string;
}

/** What retry and replay need of the engine. */
export interface RepairDeps {
  /** The seam before the executions: a failure's chain is one tree, ensured with its root. */
  readonly executions: Executions;
  readonly archive: ExecutionArchive;
  readonly step: RunStep;
}

/**
 * Retries failed execution `req.processInstanceId` where it failed. Throws INSTANCE_NOT_FOUND
 * (none the caller may see) and what the step throws (step/repair.ts, retry).
 */
export async function retryExecution(deps: RepairDeps, req: RepairRequest): Promise<void> {
  // Held in the live state while read and retried: one that left it meanwhile would be neither.
  const release = deps.archive.hold([req.processInstanceId]);
  const releases = [release];
  try {
    for (let attempt = 1; ; attempt++) {
      const root = await findInstance(deps.executions, deps.archive, req, req.processInstanceId);
      if (!root) throw new WfxError('INSTANCE_NOT_FOUND', `no execution ${req.processInstanceId}`);
      const archived = await readFailureChain(
        root,
        { live: (id) => deps.executions.get(id), archived: (id) => deps.archive.read(id) },
        (id) => releases.push(deps.archive.hold([id])),
      );
      try {
        await deps.step({
          kind: 'retry',
          instanceId: root.processInstanceId,
          ...(req.data !== undefined && { data: req.data }),
          by: req.by,
          archived,
        });
        return;
      } catch (err) {
        if (!(err instanceof ReadAgain) || attempt >= READ_ATTEMPTS) throw err;
      }
    }
  } finally {
    for (const r of releases) r();
  }
}

/**
 * Starts a replay of execution `req.processInstanceId` at `nodeId` (step/repair.ts, replay).
 * Throws INSTANCE_NOT_FOUND and what the step throws.
 */
export async function replayExecution(deps: RepairDeps, req: RepairRequest & { nodeId: string }): Promise<Execution> {
  const original = await findInstance(deps.executions, deps.archive, req, req.processInstanceId);
  if (!original) throw new WfxError('INSTANCE_NOT_FOUND', `no execution ${req.processInstanceId}`);
  return deps.step({
    kind: 'replay',
    original,
    nodeId: req.nodeId,
    ...(req.data !== undefined && { data: req.data }),
    by: req.by,
  });
}
