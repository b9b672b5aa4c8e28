/**
 * A deploy's plan for the flows of a project directory, the environment's variables, the
 * secrets it needs, and the schedules' on/off state. A flow whose source a version of it has
 * already is not published again: that version is activated if the environment runs another
 * (the same versions reach PRODUCTION as ran in DEVELOPMENT). Every flow is checked as a publish
 * checks it, against the state the deploy makes (its webhooks, connections and tool flows).
 */
import { canonicalJson } from '../flows/flow-hash.js';
import { publishProblems } from '../flows/publish.js';
import { noValue } from '../secrets/flow-secret-values.js';
import { flowSecretContext } from '../state/secret-fields.js';
import type { FlowDefinition } from '../../shared/flow/types.js';
import type { FlowProblem } from '../../shared/flow/validate.js';
import type { Flow, WfxState } from '../state/state.js';
import { arrow, type PlanBuilder } from './plan-builder.js';

/** A flow file of the project, validated (by the daemon's flow checker). */
export interface ProjectFlow {
  readonly file: string;
  readonly source: string;
  readonly definition: FlowDefinition;
  readonly hash: string;
}

/** A flow file whose publish checks found problems: located in its source before they are reported. */
export interface UnlocatedProblems {
  readonly file: string;
  readonly source: string;
  readonly problems: readonly FlowProblem[];
}

/** The names in `names`, the first five, then how many more. */
function few(names: readonly string[]): string {
  return names.length <= 5 ? names.join(', ') : `${names.slice(0, 5).join(', ')} and ${names.length - 5} more`;
}

/** What differs between two versions of a flow, a short line per kind of change. */
export function definitionChanges(was: FlowDefinition, will: FlowDefinition): string[] {
  const out: string[] = [];
  const a = was.nodes;
  const b = will.nodes;
  const added = Object.keys(b).filter((id) => !(id in a));
  const removed = Object.keys(a).filter((id) => !(id in b));
  const changed = Object.keys(b).filter((id) => id in a && canonicalJson(a[id]) !== canonicalJson(b[id]));
  if (added.length > 0) out.push(`nodes added: ${few(added)}`);
  if (removed.length > 0) out.push(`nodes removed: ${few(removed)}`);
  if (changed.length > 0) out.push(`nodes changed: ${few(changed)}`);
  const keys = [...new Set([...Object.keys(was), ...Object.keys(will)])].filter((k) => k !== 'nodes').sort();
  for (const k of keys) {
    const x = (was as unknown as Record<string, unknown>)[k];
    const y = (will as unknown as Record<string, unknown>)[k];
    if (canonicalJson(x ?? null) !== canonicalJson(y ?? null))
      out.push(k === 'name' ? arrow('name', x, y) : `${k} changed`);
  }
  return out;
}

/**
 * Plans the project's flows into `planned` (a copy of the state's flows and entries, which the
 * records so far are already in), and the removal of those it no longer has under `prune`.
 * Gives the flows whose publish checks failed, to be located and reported.
 */
export function planFlows(plan: PlanBuilder, flows: readonly ProjectFlow[], planned: WfxState): UnlocatedProblems[] {
  const { state, organization, environment } = plan.ctx;
  const seen = new Map<string, string>();
  const ours: ProjectFlow[] = [];
  for (const f of flows) {
    const pid = f.definition.processId;
    const other = seen.get(pid);
    if (other !== undefined) {
      plan.problem(
        'flow',
        pid,
        'DUPLICATE_PROCESS_ID',
        `${f.file} and ${other} both declare processId ${pid}: one would replace the other`,
        { file: f.file },
      );
      continue;
    }
    seen.set(pid, f.file);
    const existing = state.flows[pid];
    if (existing && existing.organization !== organization) {
      plan.problem('flow', pid, 'PROCESS_ID_CONFLICT', `processId ${pid} belongs to another organization`, {
        file: f.file,
      });
      continue;
    }
    ours.push(f);
    const same = existing && Object.values(existing.versions).find((v) => v.hash === f.hash);
    const version =
      same?.version ?? String(existing ? Math.max(0, ...Object.keys(existing.versions).map(Number)) + 1 : 1);
    const at = plan.ctx.now.toISOString();
    const runs = existing?.active[environment];
    if (!same) {
      const v = { version, definition: f.definition, hash: f.hash, publishedAt: at };
      plan.records.push({ type: 'flow.published', processId: pid, organization, version: v });
      const base = existing && (runs !== undefined ? existing.versions[runs] : undefined);
      plan.change(
        'flow',
        pid,
        existing ? 'update' : 'create',
        [
          runs === undefined ? `version ${version}` : `version ${runs} -> ${version}`,
          ...(base ? definitionChanges(base.definition, f.definition) : []),
        ],
        f.file,
      );
    } else if (runs !== version) {
      plan.change(
        'flow',
        pid,
        'update',
        [`version ${runs ?? '-'} -> ${version} (published before: activated, not published again)`],
        f.file,
      );
    } else plan.change('flow', pid, 'unchanged', [`version ${version}`], f.file);
    if (runs !== version) plan.records.push({ type: 'flow.activated', processId: pid, environment, version });
    const flow: Flow = existing
      ? { ...existing, versions: { ...existing.versions }, active: { ...existing.active } }
      : {
          processId: pid,
          organization,
          name: f.definition.name,
          public: f.definition.public === true,
          versions: {},
          active: {},
        };
    flow.versions[version] ??= { version, definition: f.definition, hash: f.hash, publishedAt: at };
    flow.active[environment] = version;
    planned.flows[pid] = flow;
  }
  if (plan.ctx.prune)
    for (const flow of Object.values(state.flows)) {
      const runs = flow.active[environment];
      if (flow.organization !== organization || runs === undefined || seen.has(flow.processId)) continue;
      plan.records.push({ type: 'flow.deactivated', processId: flow.processId, environment });
      plan.change('flow', flow.processId, 'remove', [
        `version ${runs} no longer runs in ${environment}; executions under way go on`,
      ]);
      const copy = { ...flow, active: { ...flow.active } };
      delete copy.active[environment];
      planned.flows[flow.processId] = copy;
    }
  const unlocated: UnlocatedProblems[] = [];
  for (const f of ours) {
    const problems = publishProblems(planned, f.definition, organization, environment);
    if (problems.length > 0) unlocated.push({ file: f.file, source: f.source, problems });
  }
  return unlocated;
}

/** Plans the environment's variables, when wfx.yaml's `env` has a map for it. */
export function planVariables(plan: PlanBuilder): void {
  const { state, organization, environment, config } = plan.ctx;
  const declared = config.env?.[environment];
  if (declared === undefined) return;
  const current = state.environments[organization]?.[environment] ?? {};
  const short = (v: string) => (v.length > 60 ? `${JSON.stringify(v.slice(0, 57))}...` : JSON.stringify(v));
  for (const [name, value] of Object.entries(declared)) {
    const was = current[name];
    if (was === value) plan.change('env', name, 'unchanged');
    else {
      plan.records.push({ type: 'env.set', organization, environment, name, value });
      plan.change('env', name, was === undefined ? 'create' : 'update', [
        was === undefined ? short(value) : `${short(was)} -> ${short(value)}`,
      ]);
    }
  }
  if (plan.ctx.prune)
    for (const name of Object.keys(current))
      if (!(name in declared)) {
        plan.records.push({ type: 'env.set', organization, environment, name, value: null });
        plan.change('env', name, 'remove');
      }
}

/**
 * Checks that each secret wfx.yaml lists or a flow names has a value in the environment, and
 * sets those the deploy gives (`given`: whether each is new, changed or the same as kept).
 */
export function planSecrets(
  plan: PlanBuilder,
  names: readonly string[],
  given: ReadonlyMap<string, 'create' | 'update' | 'unchanged'>,
): void {
  const { organization, environment, secrets } = plan.ctx;
  const at = plan.ctx.now.toISOString();
  for (const name of names) {
    const value = plan.ctx.secretValues.get(name) ?? null;
    const change = given.get(name);
    if (value === null) plan.problem('secret', name, 'SECRET_NOT_FOUND', noValue(name, environment));
    else if (change === undefined || change === 'unchanged') plan.change('secret', name, 'unchanged', ['has a value']);
    else {
      const sealed = secrets.seal(value, flowSecretContext({ organization, environment, name }));
      plan.records.push({ type: 'flowSecret.set', organization, environment, name, value: sealed, at });
      plan.change('secret', name, change, [
        change === 'create' ? 'value set by the deploy' : 'value changed by the deploy',
      ]);
    }
  }
}

/** Plans the schedules' on/off state wfx.yaml declares, for flows as `planned` holds them. */
export function planSchedules(plan: PlanBuilder, planned: WfxState): void {
  const { organization, environment, config } = plan.ctx;
  for (const [named, want] of Object.entries(config.schedules ?? {})) {
    const own = Object.values(planned.flows).filter((f) => f.organization === organization);
    const byId = own.find((f) => f.processId === named);
    const byName = own.filter((f) => f.name === named);
    if (!byId && byName.length > 1) {
      plan.problem(
        'schedule',
        named,
        'AMBIGUOUS_FLOW',
        `${byName.length} flows are named ${named}: name one by its processId`,
      );
      continue;
    }
    const flow = byId ?? byName[0];
    const runs = flow?.active[environment];
    const definition = runs === undefined ? undefined : flow!.versions[runs]?.definition;
    if (!flow || !definition) {
      plan.problem('schedule', named, 'PROCESS_NOT_FOUND', `no flow ${named} runs in ${environment}`);
      continue;
    }
    if (!(definition.triggers ?? []).some((t) => t.type === 'schedule')) {
      plan.problem('schedule', named, 'NO_SCHEDULE', `flow ${named} (version ${runs}) has no schedule trigger`);
      continue;
    }
    const on = want === 'on';
    const wasOn = !(flow.schedulesOff ?? []).includes(environment);
    if (on === wasOn) plan.change('schedule', flow.processId, 'unchanged', [want]);
    else {
      plan.records.push({ type: 'flow.schedules', processId: flow.processId, environment, on });
      plan.change('schedule', flow.processId, 'update', [arrow('', wasOn ? 'on' : 'off', want).trim()]);
    }
  }
}
