import { WfxError } from '../../shared/errors.js';
import { ownEntry } from '../../shared/json-object.js';
import { flowToolSpecs, toolNameFor, toolProcessId } from '../../shared/flow/agent-tools.js';
import { nodesWithin, type FlowDefinition } from '../../shared/flow/types.js';
import type { FlowProblem } from '../../shared/flow/validate.js';
import type { WfxRecord } from '../state/records.js';
import type { Environment, WfxState } from '../state/state.js';
import type { DurableStore } from '../store/store.js';
import { domainTaskProblems } from '../jobs/domains.js';
import { flowHash } from './flow-hash.js';

/** What a publish did. */
export interface PublishResult {
  readonly processId: string;
  readonly name: string;
  readonly organization: string;
  readonly version: string;
  readonly environment: Environment;
  /** False when an identical definition was published before: its version is given back. */
  readonly created: boolean;
  /** Set when only checked (`dryRun`): the version and `created` say what a publish would do. */
  readonly dryRun?: true;
}

/**
 * Publishes a validated flow into `organization` and activates it in `environment`. The same
 * definition again gives back its existing version; a changed one becomes the next version
 * ("1", "2", ...). Resolves once durable. Throws PROCESS_ID_CONFLICT when another organization
 * owns the processId, FLOW_INVALID when a webhook trigger names no registration of the organization,
 * or a domainTask no registered domain and action (or input that cannot match its schema).
 * With `dryRun`, only checks: the same refusals, nothing written.
 */
export async function publishFlow(
  store: DurableStore<WfxState, WfxRecord>,
  req: {
    definition: FlowDefinition;
    /**
     * flowHash(definition), given with a definition from a FlowChecker: such a definition is the
     * caller's to give away and is kept as it is (copied otherwise, so the caller may change it).
     */
    hash?: string;
    organization: string;
    environment: Environment;
    now?: Date;
    dryRun?: boolean;
  },
): Promise<PublishResult> {
  const { definition, organization, environment } = req;
  const at = (req.now ?? new Date()).toISOString();
  const existing = store.state.flows[definition.processId];
  if (existing && existing.organization !== organization) {
    throw new WfxError('PROCESS_ID_CONFLICT', `processId ${definition.processId} belongs to another organization`);
  }
  const problems = publishProblems(store.state, definition, organization, environment);
  if (problems.length > 0) throw new WfxError('FLOW_INVALID', problems.map((p) => p.message).join('; '), { details: { problems } });
  const hash = req.hash ?? flowHash(definition);
  const same = existing && Object.values(existing.versions).find((v) => v.hash === hash);
  const version = same?.version ?? String(existing ? Math.max(0, ...Object.keys(existing.versions).map(Number)) + 1 : 1);
  if (req.dryRun === true) {
    return { processId: definition.processId, name: definition.name, organization, version, environment, created: !same, dryRun: true };
  }
  const records: WfxRecord[] = [];
  if (!store.state.organizations[organization]) records.push({ type: 'organization.created', name: organization, at });
  if (!same) {
    records.push({
      type: 'flow.published',
      processId: definition.processId,
      organization,
      version: { version, definition: req.hash === undefined ? structuredClone(definition) : definition, hash, publishedAt: at },
    });
  }
  if (existing?.active[environment] !== version) records.push({ type: 'flow.activated', processId: definition.processId, environment, version });
  // An unchanged publish answers from state that may still be on its way to disk: wait for it.
  if (records.length > 0) await store.commit(...records);
  else await store.flush();
  return { processId: definition.processId, name: definition.name, organization, version, environment, created: !same };
}

/**
 * What a publish of `definition` into `organization` and `environment` refuses, beyond the
 * validator's checks: a webhook or email trigger that names no registration, a callAgent tool
 * that cannot run there, a domainTask no registered domain takes. `state` may be the state a
 * deploy plans (project/plan-flows.ts), not the live one.
 */
export function publishProblems(
  state: WfxState,
  definition: FlowDefinition,
  organization: string,
  environment: Environment,
): FlowProblem[] {
  // A trigger that names no registration would never fire: refuse it, like an unknown node.
  const problems: FlowProblem[] = (definition.triggers ?? []).flatMap((t, i): FlowProblem[] => {
    if (t.type === 'webhook' && !Object.values(state.webhooks).some((w) => w.organization === organization && w.name === t.webhook)) {
      return [{ code: 'UNKNOWN_WEBHOOK', property: `triggers.${i}.webhook`, message: `no webhook registration named "${t.webhook}" in organization ${organization} (create it first: wfx webhooks create)` }];
    }
    if (t.type === 'email' && !Object.values(state.emailConnections).some((c) => c.organization === organization && c.name === t.connection)) {
      return [{ code: 'UNKNOWN_CONNECTION', property: `triggers.${i}.connection`, message: `no email connection named "${t.connection}" in organization ${organization} (create it first: wfx email-connections create)` }];
    }
    return [];
  });
  problems.push(...agentToolProblems(state, definition, organization, environment));
  problems.push(...domainTaskProblems(state, definition, organization));
  return problems;
}

/**
 * Makes `version` the one `environment` runs (rollback, or promotion). Throws
 * PROCESS_NOT_FOUND (also for another organization's flow), VERSION_NOT_FOUND, and FLOW_INVALID
 * when a callAgent tool of the version is not active in `environment` (checked at publish for
 * the environment published into only: a promotion must find its tools where it goes).
 */
export async function activateVersion(
  store: DurableStore<WfxState, WfxRecord>,
  req: { processId: string; organization: string | null; environment: Environment; version: string },
): Promise<void> {
  const flow = ownEntry(store.state.flows, req.processId);
  if (!flow || (req.organization !== null && flow.organization !== req.organization)) {
    throw new WfxError('PROCESS_NOT_FOUND', `no flow ${req.processId}`);
  }
  if (!flow.versions[req.version]) throw new WfxError('VERSION_NOT_FOUND', `flow ${req.processId} has no version ${req.version}`);
  if (flow.active[req.environment] === req.version) return store.flush();
  const problems = agentToolProblems(store.state, flow.versions[req.version]!.definition, flow.organization, req.environment);
  if (problems.length > 0) throw new WfxError('FLOW_INVALID', problems.map((p) => p.message).join('; '), { details: { problems } });
  await store.commit({ type: 'flow.activated', processId: req.processId, environment: req.environment, version: req.version });
}

/**
 * Makes the version `from` runs the one `to` runs (a promotion: the same version, not a new
 * one), checked as activateVersion checks it. Throws PROCESS_NOT_FOUND, PROCESS_NOT_PUBLISHED
 * (`from` runs none), ALREADY_PROMOTED (`to` runs it already), FLOW_INVALID (its agent tools in
 * `to`). Gives the version and the one `to` ran before (null: none).
 */
export async function promoteVersion(
  store: DurableStore<WfxState, WfxRecord>,
  req: { processId: string; organization: string | null; from: Environment; to: Environment },
): Promise<{ version: string; previous: string | null }> {
  if (req.from === req.to) throw new WfxError('VALIDATION_ERROR', `from and to are both ${req.from}`);
  const flow = ownEntry(store.state.flows, req.processId);
  if (!flow || (req.organization !== null && flow.organization !== req.organization))
    throw new WfxError('PROCESS_NOT_FOUND', `no flow ${req.processId}`);
  const version = flow.active[req.from];
  if (version === undefined)
    throw new WfxError('PROCESS_NOT_PUBLISHED', `flow ${req.processId} has no active version in ${req.from}`);
  const previous = flow.active[req.to] ?? null;
  if (previous === version)
    throw new WfxError('ALREADY_PROMOTED', `flow ${req.processId} runs version ${version} in ${req.from} and ${req.to} already`);
  await activateVersion(store, { processId: req.processId, organization: req.organization, environment: req.to, version });
  return { version, previous };
}

/**
 * What is wrong with the tools of the flow's callAgent nodes (in bodies too): each must be a
 * flow of the organization with an active version in `environment` that declares `inputs:`
 * (its parameters), and the names the model sees must differ. A flow may name itself. A problem
 * inside a body names the container node and the path in it (`each`, `nodes.a.tools.0`), as
 * the validator's do.
 */
function agentToolProblems(
  state: WfxState,
  definition: FlowDefinition,
  organization: string,
  environment: Environment,
): FlowProblem[] {
  const problems: FlowProblem[] = [];
  for (const { node, nodeId, at } of nodesWithin(definition.nodes)) {
    if (node.type !== 'callAgent') continue;
      const named = new Map<string, number>();
      for (const { spec, index: i } of flowToolSpecs(node.tools)) {
        const processId = toolProcessId(spec);
        const self = processId === definition.processId;
        const flow = ownEntry(state.flows, processId);
        const version = flow?.active[environment];
        const tool = self ? definition : version === undefined ? undefined : flow!.versions[version]?.definition;
        const property = `${at}tools.${i}`;
        if (!self && (!flow || flow.organization !== organization)) {
          problems.push({ code: 'UNKNOWN_TOOL', nodeId, property, message: `tool flow ${processId} does not exist in organization ${organization} (publish it first)` });
          continue;
        }
        if (!tool) {
          problems.push({ code: 'UNKNOWN_TOOL', nodeId, property, message: `tool flow ${processId} has no active version in ${environment} (publish it there first)` });
          continue;
        }
        if (tool.inputs === undefined) {
          problems.push({ code: 'TOOL_WITHOUT_INPUTS', nodeId, property, message: `tool flow ${tool.name} (${processId}) declares no inputs: (its parameters for the model)` });
        }
        const name = toolNameFor(spec, tool.name);
        const other = named.get(name);
        if (other !== undefined) {
          problems.push({ code: 'SCHEMA', nodeId, property, message: `tools ${other} and ${i} are both named ${name} for the model; give one a name:` });
        }
        named.set(name, i);
      }
  }
  return problems;
}
