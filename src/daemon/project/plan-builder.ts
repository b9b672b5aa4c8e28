/**
 * What a deploy's plan is made of as it is worked out (project/apply.ts): the changes it shows,
 * the records that carry them out, the problems that refuse it. Each kind's planner
 * (plan-entries.ts, plan-flows.ts) writes into one builder; nothing is committed here.
 */
import type {
  Environment,
  PlanChange,
  PlannedChange,
  ProjectConfig,
  ProjectKind,
  ProjectProblem,
} from '../../shared/api/index.js';
import { constantTimeEqual } from '../../shared/constant-time.js';
import { noValue } from '../secrets/flow-secret-values.js';
import type { SecretBox } from '../secrets/secret-box.js';
import type { WfxRecord } from '../state/records.js';
import type { FromSecret, WfxState } from '../state/state.js';

/** A flow secret's value as the deploy read it (null: it has none in the environment). */
export type SecretValues = ReadonlyMap<string, string | null>;

/** What every planner reads. */
export interface PlanContext {
  readonly state: WfxState;
  readonly secrets: SecretBox;
  readonly organization: string;
  readonly environment: Environment;
  readonly prune: boolean;
  readonly config: ProjectConfig;
  /** The values of every secret the project names, read before planning (the reads wait on files). */
  readonly secretValues: SecretValues;
  readonly now: Date;
}

export class PlanBuilder {
  readonly changes: PlannedChange[] = [];
  readonly records: WfxRecord[] = [];
  readonly problems: ProjectProblem[] = [];

  constructor(readonly ctx: PlanContext) {}

  /** Says what apply does to `name` of `kind`. */
  change(kind: ProjectKind, name: string, change: PlanChange, details: readonly string[] = [], file?: string): void {
    this.changes.push({ kind, name, change, ...(file !== undefined && { file }), details });
  }

  /** Refuses the deploy, for `name` of `kind`. */
  problem(
    kind: ProjectKind,
    name: string | undefined,
    code: string,
    message: string,
    at: Partial<ProjectProblem> = {},
  ): void {
    this.problems.push({ kind, ...(name !== undefined && { name }), code, message, ...at });
  }

  /**
   * The value of secret `secret` that entry `name` of `kind` takes its credential from, with
   * where it came from; a problem (and null) when the secret has no value in the environment.
   */
  credential(kind: ProjectKind, name: string, secret: string): { value: string; from: FromSecret } | null {
    const value = this.ctx.secretValues.get(secret) ?? null;
    if (value === null) {
      const env = this.ctx.environment;
      this.problem(kind, name, 'SECRET_NOT_FOUND', noValue(secret, env));
      return null;
    }
    return { value, from: { name: secret, environment: this.ctx.environment } };
  }

  /** Whether sealed `sealed` (for `context`) holds `value`; false when it cannot be opened. */
  holds(sealed: string | undefined, context: string, value: string): boolean {
    if (sealed === undefined) return false;
    try {
      return constantTimeEqual(Buffer.from(this.ctx.secrets.open(sealed, context)), Buffer.from(value));
    } catch {
      return false;
    }
  }
}

/** `a -> b` for a detail line; a missing value is `-`. */
export function arrow(field: string, a: unknown, b: unknown): string {
  const show = (v: unknown) => (v === undefined || v === null ? '-' : typeof v === 'string' ? v : JSON.stringify(v));
  return `${field} ${show(a)} -> ${show(b)}`;
}

/** The detail lines for each of `fields` whose value differs between `was` and `will` (compared as JSON). */
export function differences<W extends object, N extends object>(
  was: W,
  will: N,
  fields: ReadonlyArray<keyof W & keyof N & string>,
): string[] {
  return fields.filter((f) => JSON.stringify(was[f]) !== JSON.stringify(will[f])).map((f) => arrow(f, was[f], will[f]));
}
