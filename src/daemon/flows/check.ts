/**
 * Checking a flow before it is published: validation (parse, limits, schema, graph) and its
 * hash. The daemon runs checks in a worker thread (check-pool.ts) so that no flow, however big
 * its limits let it be, stalls the other requests; `inlineFlowChecker` runs the same check in
 * the calling thread (route tests built without a daemon).
 */
import type { FlowDefinition } from '../../shared/flow/types.js';
import { locateProblems, validateFlowSource, validateFlowValue, type FlowProblem } from '../../shared/flow/validate.js';
import { flowHash } from './flow-hash.js';

/** What to check: a flow's source text (YAML or JSON), or an already parsed definition. */
export type FlowInput = { readonly source: string } | { readonly definition: unknown };

/** A flow checked: valid, with its hash (for publishFlow), or its problems. */
export type CheckedFlow =
  | { readonly ok: true; readonly flow: FlowDefinition; readonly hash: string }
  | { readonly ok: false; readonly problems: readonly FlowProblem[] };

/** One unit of work of a checker: check a flow, or locate in `source` problems found at publish. */
export type FlowCheckRequest =
  | { readonly kind: 'check'; readonly input: FlowInput }
  | { readonly kind: 'locate'; readonly source: string; readonly problems: readonly FlowProblem[] };

/** The answer to a FlowCheckRequest of the same kind. */
export type FlowCheckResult =
  | { readonly kind: 'check'; readonly checked: CheckedFlow }
  | { readonly kind: 'locate'; readonly problems: readonly FlowProblem[] };

/** Checks flows for publishing; the daemon's runs them off its event loop. */
export interface FlowChecker {
  /**
   * Validates a flow for `organization` (whose checks wait in line with its own only) and hashes
   * it when valid. Rejects with RATE_LIMIT_EXCEEDED when too many checks of the organization
   * wait already, SERVICE_UNAVAILABLE once closed, INTERNAL_ERROR when the check itself broke.
   */
  check(organization: string, input: FlowInput): Promise<CheckedFlow>;
  /** Gives problems found at publish the line:column of what they name in `source`; rejects as check does. */
  locate(organization: string, source: string, problems: readonly FlowProblem[]): Promise<readonly FlowProblem[]>;
  /** Stops checking: waiting checks are refused (SERVICE_UNAVAILABLE). */
  close(): Promise<void>;
}

/** Carries out one request in the calling thread. Pure; never throws for any input flow. */
export function runFlowCheck(request: FlowCheckRequest): FlowCheckResult {
  if (request.kind === 'locate') return { kind: 'locate', problems: locateProblems(request.source, request.problems) };
  const input = request.input;
  const v = 'source' in input ? validateFlowSource(input.source) : validateFlowValue(input.definition);
  return {
    kind: 'check',
    checked: v.ok ? { ok: true, flow: v.flow, hash: flowHash(v.flow) } : { ok: false, problems: v.problems },
  };
}

/** A FlowChecker that checks in the calling thread, one call at a time, with no queue. */
export function inlineFlowChecker(): FlowChecker {
  const run = async (request: FlowCheckRequest) => runFlowCheck(request);
  return {
    check: async (_organization, input) => {
      const r = await run({ kind: 'check', input });
      return (r as Extract<FlowCheckResult, { kind: 'check' }>).checked;
    },
    locate: async (_organization, source, problems) => {
      const r = await run({ kind: 'locate', source, problems });
      return (r as Extract<FlowCheckResult, { kind: 'locate' }>).problems;
    },
    close: async () => undefined,
  };
}
