/*
 * Deploys of a project directory (POST /admin/project/apply, GET /admin/project): its flow files
 * and its wfx.yaml, whose top-level keys are lists of what the admin API takes, with the same
 * field names, except that a secret is named (`secret: NAME`), never given. Answers are types only.
 */
import { Type, type Static } from './schema.js';
import { ENVIRONMENTS, Name, StringEnum, type Environment } from './common.js';
import { RegisterWebhookBody } from './webhooks.js';
import { CreateConnectionBody } from './email-connections.js';
import { CreateProviderBody } from './ai-providers.js';
import { EnvVariableParams, SetVariableBody } from './admin.js';
import { FlowSecretParams, SetFlowSecretBody } from './secrets.js';

/** The most flow files, and entries of each list, a project may hold. */
export const PROJECT_MAX_ITEMS = 1000;
/** The largest body POST /admin/project/apply takes: every flow file of the project at once. */
export const PROJECT_MAX_BODY_BYTES = 32 * 1024 * 1024;

/** A flow secret's name: where a wfx.yaml entry takes its credential from (`wfx secrets set NAME`). */
const SecretName = FlowSecretParams.properties.name;
const secretField = {
  secret: Type.Optional({
    ...SecretName,
    description: 'the flow secret (wfx secrets set NAME) whose value, in the environment applied, is the credential',
  }),
};

/** A webhook registration as wfx.yaml declares it: RegisterWebhookBody with the signing secret named. */
const { secret: _webhookSecret, ...webhookFields } = RegisterWebhookBody.properties;
export const ProjectWebhook = Type.Object({ ...webhookFields, ...secretField }, { additionalProperties: false });
export type ProjectWebhook = Static<typeof ProjectWebhook>;

/** An email connection as wfx.yaml declares it: the password named as a secret. */
const { password: _password, ...connectionFields } = CreateConnectionBody.properties;
export const ProjectConnection = Type.Object({ ...connectionFields, ...secretField }, { additionalProperties: false });
export type ProjectConnection = Static<typeof ProjectConnection>;

/** A model provider as wfx.yaml declares it: the API key named as a secret. */
const { apiKey: _apiKey, ...providerFields } = CreateProviderBody.properties;
export const ProjectProvider = Type.Object({ ...providerFields, ...secretField }, { additionalProperties: false });
export type ProjectProvider = Static<typeof ProjectProvider>;

const list = <T extends Parameters<typeof Type.Array>[0]>(item: T) =>
  Type.Optional(Type.Array(item, { maxItems: PROJECT_MAX_ITEMS }));

/**
 * A project's wfx.yaml. A key left out says nothing of its kind: apply changes none of it, and
 * `prune` removes none of it. `env` and `schedules` are applied for the environment applied only.
 */
export const ProjectConfig = Type.Object(
  {
    webhooks: list(ProjectWebhook),
    emailConnections: list(ProjectConnection),
    providers: list(ProjectProvider),
    env: Type.Optional(
      Type.Unsafe<Partial<Record<Environment, Record<string, string>>>>({
        type: 'object',
        propertyNames: { enum: [...ENVIRONMENTS] },
        additionalProperties: {
          type: 'object',
          propertyNames: EnvVariableParams.properties.name,
          additionalProperties: SetVariableBody.properties.value,
          maxProperties: PROJECT_MAX_ITEMS,
        },
      }),
    ),
    secrets: list(SecretName),
    schedules: Type.Optional(
      Type.Unsafe<Record<string, 'on' | 'off'>>({
        type: 'object',
        propertyNames: { minLength: 1, maxLength: 200 },
        additionalProperties: { type: 'string', enum: ['on', 'off'] },
        maxProperties: PROJECT_MAX_ITEMS,
      }),
    ),
  },
  { additionalProperties: false },
);
export type ProjectConfig = Static<typeof ProjectConfig>;

/** Body of POST /admin/project/apply. */
export const ApplyProjectBody = Type.Object(
  {
    environment: Type.Optional(StringEnum(ENVIRONMENTS, { default: 'PRODUCTION' })),
    organization: Type.Optional(Name),
    dryRun: Type.Optional(Type.Boolean({ description: 'plan only: nothing changes' })),
    prune: Type.Optional(
      Type.Boolean({
        description:
          'remove what the project no longer declares: its flows are deactivated in the environment; webhooks, connections and providers deleted, variables unset (only kinds wfx.yaml has a key for)',
      }),
    ),
    flows: Type.Array(
      Type.Object(
        {
          file: Type.String({ minLength: 1, maxLength: 1000, description: "the file's path in the project" }),
          source: Type.String({ maxLength: 4 * 1024 * 1024 }),
        },
        { additionalProperties: false },
      ),
      { maxItems: PROJECT_MAX_ITEMS },
    ),
    config: ProjectConfig,
    secretValues: Type.Optional(
      Type.Unsafe<Record<string, string>>({
        type: 'object',
        propertyNames: SecretName,
        additionalProperties: SetFlowSecretBody.properties.value,
        maxProperties: PROJECT_MAX_ITEMS,
        description:
          'values of secrets the project names, set in the environment applied as part of the deploy (`wfx apply --from-env`); sealed at once, never answered or recorded',
      }),
    ),
  },
  { additionalProperties: false },
);
export type ApplyProjectBody = Static<typeof ApplyProjectBody>;

/** Querystring of GET /admin/project. */
export const ProjectQuery = Type.Object(
  {
    environment: Type.Optional(StringEnum(ENVIRONMENTS, { default: 'PRODUCTION' })),
    organization: Type.Optional(Name),
  },
  { additionalProperties: false },
);
export type ProjectQuery = Static<typeof ProjectQuery>;

/** The kinds of thing a project declares, in the order a plan lists them. */
export const PROJECT_KINDS = ['secret', 'env', 'webhook', 'emailConnection', 'provider', 'flow', 'schedule'] as const;
export type ProjectKind = (typeof PROJECT_KINDS)[number];

/** What apply does to one thing: `+`, `~`, `-`, `=` in the CLI's plan. */
export type PlanChange = 'create' | 'update' | 'remove' | 'unchanged';

/** One line of a plan. */
export interface PlannedChange {
  readonly kind: ProjectKind;
  /** A flow's processId, a variable's or secret's NAME, an entry's name. */
  readonly name: string;
  readonly change: PlanChange;
  /** The flow file it comes from. */
  readonly file?: string;
  /** What changes, a short line each (`version 2 -> 3`, `maxBodyBytes 1048576 -> 2097152`); never a secret. */
  readonly details: readonly string[];
}

/** One reason an apply is refused: nothing changed. */
export interface ProjectProblem {
  readonly kind: ProjectKind;
  readonly name?: string;
  readonly file?: string;
  readonly code: string;
  readonly message: string;
  readonly line?: number;
  readonly column?: number;
}

/** What POST /admin/project/apply answers: the plan, carried out unless `dryRun`. */
export interface ProjectApplied {
  readonly organization: string;
  readonly environment: Environment;
  /** False for a dry run: the plan says what an apply would do. */
  readonly applied: boolean;
  readonly changes: readonly PlannedChange[];
  readonly counts: Readonly<Record<PlanChange, number>>;
}

/** What GET /admin/project answers: what apply reads, as the daemon holds it for one environment. */
export interface ProjectExport {
  readonly organization: string;
  readonly environment: Environment;
  /** The version each flow runs in the environment. */
  readonly flows: ReadonlyArray<{
    readonly processId: string;
    readonly version: string;
    readonly definition: unknown;
  }>;
  readonly config: ProjectConfig;
}
