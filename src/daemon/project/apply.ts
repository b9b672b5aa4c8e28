/**
 * A deploy (`wfx apply`, POST /admin/project/apply): makes the daemon hold what a project
 * directory declares. It reads what it must wait for first (each flow checked, each secret
 * named read, each model file looked at), then plans every kind at once against the state as it
 * is and commits the plan's records in one journal entry: a refused item refuses the whole
 * deploy with nothing changed, and a crash leaves all of it or none.
 */
import {
  PROJECT_KINDS,
  type ApplyProjectBody,
  type Environment,
  type PlanChange,
  type ProjectApplied,
  type ProjectProblem,
} from '../../shared/api/index.js';
import { constantTimeEqual } from '../../shared/constant-time.js';
import { WfxError, errorMessage } from '../../shared/errors.js';
import { secretNamesOf } from '../../shared/flow/secret-refs.js';
import { checkProvider } from '../ai/provider-config.js';
import type { Catalogue } from '../catalogue/catalogue.js';
import { crashPoint } from '../store/crash-point.js';
import type { FlowChecker } from '../flows/check.js';
import type { FlowSecretValues } from '../secrets/flow-secret-values.js';
import type { SecretBox } from '../secrets/secret-box.js';
import type { WfxState } from '../state/state.js';
import { PlanBuilder } from './plan-builder.js';
import { declaredProvider, planConnections, planProviders, planWebhooks, pruneEntries } from './plan-entries.js';
import { planFlows, planSchedules, planSecrets, planVariables, type ProjectFlow } from './plan-flows.js';

export interface ApplyDeps {
  readonly state: WfxState;
  readonly catalogue: Catalogue;
  readonly flowChecker: FlowChecker;
  readonly secrets: SecretBox;
  readonly secretValues: FlowSecretValues;
  readonly now: () => Date;
}

export interface ApplyRequest {
  readonly organization: string;
  readonly environment: Environment;
  readonly dryRun: boolean;
  readonly prune: boolean;
  /** Whether the caller may name files on the daemon's host (a local provider's model): system keys. */
  readonly hostFiles: boolean;
  readonly flows: ApplyProjectBody['flows'];
  readonly config: ApplyProjectBody['config'];
  /** Values of named secrets the deploy sets (plain text: sealed as the plan is made). */
  readonly secretValues?: ApplyProjectBody['secretValues'];
}

/** Refuses the deploy: nothing changed. */
function refused(problems: readonly ProjectProblem[]): WfxError {
  const n = problems.length;
  return new WfxError('PROJECT_INVALID', `the project has ${n} problem${n === 1 ? '' : 's'}; nothing was changed`, {
    details: { problems },
  });
}

/** Plans the project and, unless a dry run, carries the plan out. Throws PROJECT_INVALID. */
export async function applyProject(deps: ApplyDeps, req: ApplyRequest): Promise<ProjectApplied> {
  const { organization, environment, config } = req;
  const problems: ProjectProblem[] = [];
  // What must be waited for, first: the plan itself is worked out and committed in one go.
  const flows: ProjectFlow[] = [];
  for (const f of req.flows) {
    const checked = await deps.flowChecker.check(organization, { source: f.source });
    if (checked.ok) flows.push({ file: f.file, source: f.source, definition: checked.flow, hash: checked.hash });
    else
      for (const p of checked.problems)
        problems.push({
          kind: 'flow',
          file: f.file,
          code: p.code,
          message: p.message,
          ...(p.line !== undefined && { line: p.line, column: p.column }),
        });
  }
  const flowSecrets = [
    ...new Set([...(config.secrets ?? []), ...flows.flatMap((f) => secretNamesOf(f.definition))]),
  ].sort();
  const named = [
    ...flowSecrets,
    ...[...(config.webhooks ?? []), ...(config.emailConnections ?? []), ...(config.providers ?? [])].flatMap((e) =>
      e.secret === undefined ? [] : [e.secret],
    ),
  ];
  const secretValues = new Map<string, string | null>();
  // Values the deploy sets (`--from-env`): each replaces the one kept; `given` says whether it is new.
  const given = new Map<string, 'create' | 'update' | 'unchanged'>();
  for (const name of Object.keys(req.secretValues ?? {}))
    if (!named.includes(name))
      problems.push({
        kind: 'secret',
        name,
        code: 'SECRET_NOT_NAMED',
        message: `secret ${name} is given a value but the project names it nowhere (secrets:, a flow, an entry's secret:)`,
      });
  for (const name of new Set(named)) {
    const value = req.secretValues?.[name];
    try {
      const kept = await deps.secretValues.open(organization, environment, name);
      if (value !== undefined)
        given.set(
          name,
          kept === null ? 'create' : constantTimeEqual(Buffer.from(kept), Buffer.from(value)) ? 'unchanged' : 'update',
        );
      secretValues.set(name, value ?? kept);
    } catch (err) {
      if (value !== undefined) {
        // What is kept cannot be read, and is replaced: the deploy's value is the one to use.
        given.set(name, 'update');
        secretValues.set(name, value);
        continue;
      }
      problems.push({
        kind: 'secret',
        name,
        code: 'SECRET_UNREADABLE',
        message: `secret ${name}: ${errorMessage(err)}`,
      });
    }
  }
  for (const p of config.providers ?? []) {
    const existing = Object.values(deps.state.aiProviders).find(
      (x) => x.organization === organization && x.name === p.name,
    );
    // As over the API: naming a file on the daemon's host takes a system key; keeping one does not.
    if (p.modelPath !== undefined && p.modelPath !== existing?.modelPath && !req.hostFiles) {
      problems.push({
        kind: 'provider',
        name: p.name,
        code: 'FORBIDDEN',
        message: "a local model is a file on the daemon's host: only a system key deploys one (with --org)",
      });
      continue;
    }
    await checkProvider({ ...declaredProvider(p), providerId: '', organization, createdAt: '', updatedAt: '' }).catch(
      (err: unknown) =>
        problems.push({
          kind: 'provider',
          name: p.name,
          code: err instanceof WfxError ? err.code : 'VALIDATION_ERROR',
          message: errorMessage(err),
        }),
    );
  }

  // From here to the commit, nothing awaits: the plan is made against the state as it is.
  const plan = new PlanBuilder({
    state: deps.state,
    secrets: deps.secrets,
    organization,
    environment,
    prune: req.prune,
    config,
    secretValues,
    now: deps.now(),
  });
  plan.problems.push(...problems);
  planSecrets(plan, [...new Set([...flowSecrets, ...given.keys()])].filter((n) => secretValues.has(n)).sort(), given);
  planVariables(plan);
  planWebhooks(plan);
  planConnections(plan);
  planProviders(plan);
  const planned: WfxState = {
    ...deps.state,
    flows: { ...deps.state.flows },
    webhooks: { ...deps.state.webhooks },
    emailConnections: { ...deps.state.emailConnections },
  };
  for (const r of plan.records) {
    if (r.type === 'webhook.saved') planned.webhooks[r.webhook.webhookId] = r.webhook;
    if (r.type === 'emailConnection.saved') planned.emailConnections[r.connection.connectionId] = r.connection;
  }
  const unlocated = planFlows(plan, flows, planned);
  pruneEntries(plan, (kind, name) => {
    for (const f of Object.values(planned.flows)) {
      if (f.organization !== organization) continue;
      for (const version of Object.values(f.active)) {
        const triggers = f.versions[version]?.definition.triggers ?? [];
        if (
          triggers.some((t) =>
            kind === 'webhook'
              ? t.type === 'webhook' && t.webhook === name
              : t.type === 'email' && t.connection === name,
          )
        )
          return f.processId;
      }
    }
    return null;
  });
  planSchedules(plan, planned);

  if (plan.problems.length > 0 || unlocated.length > 0) {
    for (const u of unlocated) {
      const located = await deps.flowChecker.locate(organization, u.source, u.problems).catch(() => u.problems);
      for (const p of located)
        plan.problems.push({
          kind: 'flow',
          file: u.file,
          code: p.code,
          message: p.message,
          ...(p.line !== undefined && { line: p.line, column: p.column }),
        });
    }
    throw refused(plan.problems);
  }
  const order = (k: (typeof PROJECT_KINDS)[number]) => PROJECT_KINDS.indexOf(k);
  const changes = [...plan.changes].sort((a, b) => order(a.kind) - order(b.kind) || a.name.localeCompare(b.name));
  const counts: Record<PlanChange, number> = { create: 0, update: 0, remove: 0, unchanged: 0 };
  for (const c of changes) counts[c.change]++;
  if (!req.dryRun) {
    crashPoint('project:planned'); // the plan made, nothing of it written
    await deps.catalogue.commitProject(organization, plan.records, plan.ctx.now.toISOString());
    crashPoint('project:committed'); // all of it durable, not yet answered
  }
  return { organization, environment, applied: !req.dryRun, changes, counts };
}
