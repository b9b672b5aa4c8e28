/**
 * A start resolved to what the step launches: the flow version found, its start data checked
 * (depth, size, the flow's `inputs:`). Used by every start (API, triggers, callProcess).
 */
import { WfxError } from '../../../shared/errors.js';
import { checkInputs } from '../../../shared/flow/inputs.js';
import { resolveSearch } from '../../../shared/flow/search-attributes.js';
import { cloneData, ownEntry } from '../../../shared/json-object.js';
import { jsonSize } from '../../../shared/json-size.js';
import type { WfxState, Writable } from '../../state/state.js';
import type { LaunchParams, StartRequest, StepContext } from './context.js';
import { checkDataDepth, checkVariablesBytes } from './request-data.js';
import { slotKey } from './slot-key.js';

/**
 * What a start runs: the flow version resolved, its start data checked against the flow's
 * `inputs:` (defaults filled in). Throws PROCESS_NOT_FOUND, VERSION_NOT_FOUND,
 * PROCESS_NOT_PUBLISHED, VALIDATION_ERROR (data nested deeper than maxJsonDepth, or not
 * matching the inputs; `details.path` names the field), PAYLOAD_TOO_LARGE.
 */
export function resolveStart(
  state: WfxState,
  ctx: Pick<StepContext, 'maxJsonDepth' | 'limits' | 'tracing'>,
  req: StartRequest,
): LaunchParams {
  const flow = ownEntry(state.flows, req.processId);
  if (!flow || (req.organization !== null && flow.organization !== req.organization)) {
    throw new WfxError('PROCESS_NOT_FOUND', `no flow ${req.processId}`);
  }
  const environment = req.environment ?? 'PRODUCTION';
  const version = req.versionNumber ?? flow.active[environment];
  if (version === undefined) {
    // Say where it does run: the usual slip is a flow published to DEVELOPMENT only.
    const other = environment === 'PRODUCTION' ? 'DEVELOPMENT' : 'PRODUCTION';
    const there = flow.active[other];
    throw new WfxError(
      'PROCESS_NOT_PUBLISHED',
      `flow ${flow.name} (${req.processId}) has no active version in ${environment}` +
        (there === undefined
          ? ''
          : `; version ${there} is active in ${other}: start it there (environment ${other}, wfx run --env ${other})`),
      { details: { processId: req.processId, environment, active: flow.active } },
    );
  }
  const published = flow.versions[version];
  if (!published) throw new WfxError('VERSION_NOT_FOUND', `flow ${req.processId} has no version ${version}`);
  // Before the copy (it recurses): triggers and callProcess start here without a request body.
  if (req.data !== undefined) checkDataDepth(req.data, ctx.maxJsonDepth, 'the start data');
  // Before the copy too: a trigger's payload can be as large as its body limit allows.
  const limit = ctx.limits.variablesBytes;
  checkVariablesBytes(req.data === undefined ? 2 : jsonSize(req.data, limit), limit, 'the start data is');
  const variables = cloneData(req.data ?? {});
  // On the copy: declared defaults are filled in.
  const violation = checkInputs(published.definition, variables);
  if (violation) {
    throw new WfxError(
      'VALIDATION_ERROR',
      `${violation.path} ${violation.message} (the inputs of flow ${published.definition.name}, version ${version})`,
      { details: { path: violation.path, processId: flow.processId, version } },
    );
  }
  const params: Writable<LaunchParams> = {
    processId: flow.processId,
    processName: published.definition.name,
    processVersion: version,
    organization: flow.organization,
    environment,
    correlationKey: req.correlationKey ?? null,
    parentInstanceId: req.parentInstanceId ?? null,
    variables,
  };
  if (req.priority !== undefined && req.priority !== 0) params.priority = req.priority;
  // A top-level start of a flow with a concurrency limit holds or waits for a slot (concurrency.ts).
  const concurrency = published.definition.concurrency;
  if (concurrency !== undefined && params.parentInstanceId === null)
    params.concurrency = slotKey(environment, flow.processId, concurrency.key, variables);
  const search = published.definition.search;
  if (search !== undefined) {
    const { set } = resolveSearch(search, variables);
    if (Object.keys(set).length > 0) params.search = set;
  }
  // Only while tracing is on: the record form of the span it continues (Step.started completes it).
  if (ctx.tracing !== null && req.traceparent !== undefined) {
    const trace = ctx.tracing.continued(req.traceparent);
    if (trace !== undefined) params.trace = trace;
  }
  return params;
}
