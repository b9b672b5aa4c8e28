/**
 * Domains: registering one (its actions' schemas checked to compile), what the API shows of
 * it, and the publish-time checks of domainTask nodes against the organization's domains
 * (an unknown domain or action, input that can never match the action's input schema).
 */
import type { DomainView, RegisterDomainBody } from '../../shared/api/index.js';
import { WfxError } from '../../shared/errors.js';
import { findReferences } from '../../shared/expr/template.js';
import { compileJsonSchema } from '../../shared/flow/json-schema.js';
import { nodesWithin, type FlowDefinition } from '../../shared/flow/types.js';
import type { FlowProblem } from '../../shared/flow/validate.js';
import { jsonPointerPath } from '../../shared/json-shape.js';
import { ownEntry } from '../../shared/json-object.js';
import { JobQueues } from '../state/job-queues.js';
import type { Domain, DomainAction, WfxState } from '../state/state.js';

/** A path as a flow problem's property path goes on: `.items.0.sku` (empty for the root). */
const dotted = (path: readonly (string | number)[]): string => path.map((k) => `.${k}`).join('');

/** An action's input schema when it names none: any object. */
const ANY_OBJECT = { type: 'object' } as const;

/**
 * The domain a registration body describes, every action's schemas checked to compile (input:
 * an object schema). Pure. Throws VALIDATION_ERROR with `details.problems` listing each
 * problem (`actions.charge.output: ...`).
 */
export function domainOf(
  organization: string,
  name: string,
  body: RegisterDomainBody,
  at: string,
  existing: Domain | undefined,
): Domain {
  const problems: string[] = [];
  const actions: Record<string, DomainAction> = {};
  for (const [action, spec] of Object.entries(body.actions)) {
    const input = spec.input ?? { ...ANY_OBJECT };
    const output = spec.output ?? {};
    for (const [part, schema] of [
      ['input', input],
      ['output', output],
    ] as const) {
      const compiled = compileJsonSchema(schema);
      if (!compiled.ok) problems.push(`actions.${action}.${part}${dotted(compiled.path)}: ${compiled.message}`);
    }
    if (input.type !== undefined && input.type !== 'object')
      problems.push(`actions.${action}.input.type: a job's input is an object: the schema's type must be object`);
    actions[action] = { description: spec.description ?? null, input, output };
  }
  if (problems.length > 0)
    throw new WfxError('VALIDATION_ERROR', `domain ${name}: ${problems.join('; ')}`, { details: { problems } });
  return {
    name,
    organization,
    description: body.description ?? null,
    actions,
    createdAt: existing?.createdAt ?? at,
    updatedAt: at,
  };
}

/** The domain `name` of `organization`, or undefined. */
export function domainNamed(state: WfxState, organization: string, name: string): Domain | undefined {
  const org = ownEntry(state.domains, organization);
  return org && ownEntry(org, name);
}

/**
 * Refuses to drop actions that jobs still wait for: a registration that leaves `kept` out (all
 * of them for a delete). Throws DOMAIN_IN_USE with `details.jobs` (how many wait).
 */
export function checkNoJobsLeft(
  state: WfxState,
  organization: string,
  domain: string,
  kept: ReadonlySet<string>,
): void {
  const queues = JobQueues.of(state);
  const dropped = queues.actions(organization, domain).filter((a) => !kept.has(a));
  const jobs = dropped.reduce((n, a) => n + queues.queue(organization, domain, a).size, 0);
  if (jobs === 0) return;
  throw new WfxError(
    'DOMAIN_IN_USE',
    `${jobs} job${jobs === 1 ? '' : 's'} of domain ${domain} (${dropped.join(', ')}) still wait${jobs === 1 ? 's' : ''}`,
    { details: { jobs, actions: dropped } },
  );
}

/** A domain as the API shows it. */
export function domainView(d: Domain): DomainView {
  return {
    name: d.name,
    organization: d.organization,
    description: d.description,
    actions: d.actions,
    createdAt: d.createdAt,
    updatedAt: d.updatedAt,
  };
}

/**
 * What is wrong with the flow's domainTask nodes (in bodies too) against the organization's
 * domains: the domain and action must be registered, and the input must be able to match the
 * action's input schema: its literal values are checked as they are, a property that holds a
 * `{ref}` only for its name (required properties present, no unknown one where the schema
 * allows none); an input that is one `{ref}` is checked when the node runs.
 */
export function domainTaskProblems(state: WfxState, definition: FlowDefinition, organization: string): FlowProblem[] {
  const problems: FlowProblem[] = [];
  for (const { node, nodeId, at } of nodesWithin(definition.nodes)) {
    if (node.type !== 'domainTask') continue;
    const domain = domainNamed(state, organization, node.domain);
    if (!domain) {
      problems.push({
        code: 'UNKNOWN_DOMAIN',
        nodeId,
        property: `${at}domain`,
        message: `no domain ${node.domain} in organization ${organization} (register it first: wfx domains register ${node.domain} --file FILE)`,
      });
      continue;
    }
    const action = ownEntry(domain.actions, node.action);
    if (!action) {
      problems.push({
        code: 'UNKNOWN_DOMAIN',
        nodeId,
        property: `${at}action`,
        message: `domain ${node.domain} has no action ${node.action} (it has: ${Object.keys(domain.actions).join(', ')})`,
      });
      continue;
    }
    for (const p of inputMismatches(node.input, action.input))
      problems.push({ code: 'JOB_INPUT_MISMATCH', nodeId, property: `${at}input${p.path}`, message: p.message });
  }
  return problems;
}

/** True when `value` holds a `{ref}` anywhere (it is known only when the node runs). */
function templated(value: unknown): boolean {
  if (typeof value === 'string') return findReferences(value).length > 0;
  if (Array.isArray(value)) return value.some(templated);
  if (typeof value === 'object' && value !== null) return Object.values(value).some(templated);
  return false;
}

/** Where and why a node's `input` cannot match `schema` (paths like `.amount`). */
function inputMismatches(input: unknown, schema: Record<string, unknown>): Array<{ path: string; message: string }> {
  if (input === undefined) input = {};
  if (typeof input === 'string') {
    const refs = findReferences(input);
    return refs.length === 1 && input.trim() === `{${refs[0]}}`
      ? []
      : [{ path: '', message: 'input is a map of values, or one {ref} to an object' }];
  }
  if (typeof input !== 'object' || input === null || Array.isArray(input))
    return [{ path: '', message: 'input is a map of values, or one {ref} to an object' }];
  const compiled = compileJsonSchema(schema, { allErrors: true });
  if (!compiled.ok) return [];
  const entries = Object.entries(input as Record<string, unknown>);
  const later = new Set(entries.filter(([, v]) => templated(v)).map(([k]) => k));
  const literal = Object.fromEntries(entries.filter(([k]) => !later.has(k)));
  const out: Array<{ path: string; message: string }> = [];
  if (!compiled.validate(literal)) {
    for (const e of compiled.validate.errors ?? []) {
      const p = e.params as Record<string, unknown>;
      if (e.keyword === 'required' && e.instancePath === '' && later.has(String(p.missingProperty))) continue;
      const path = dotted(jsonPointerPath(e.instancePath));
      const message =
        e.keyword === 'required'
          ? `the action's input schema requires ${String(p.missingProperty)}`
          : e.keyword === 'additionalProperties'
            ? `the action's input schema has no property ${String(p.additionalProperty)}`
            : `input${path} ${e.message ?? 'does not match'} (the action's input schema)`;
      out.push({ path, message });
    }
  }
  const properties = (schema.properties ?? {}) as Record<string, unknown>;
  if (schema.additionalProperties === false)
    for (const k of later)
      if (!Object.hasOwn(properties, k))
        out.push({ path: '', message: `the action's input schema has no property ${k}` });
  return out;
}
