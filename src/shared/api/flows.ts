/*
 * Flows: publish, list, read and activate (/admin/flows), and the flows a caller may start
 * (GET /process/list). Answers here are types only (no reply schema: see process.ts).
 */
import { Type, type Static } from './schema.js';
import type { FlowDefinition } from '../flow/types.js';
import { Answer, ENVIRONMENTS, Items, Name, NullableString, Page, PageFields, StringEnum } from './common.js';

/** Body of POST /admin/flows: exactly one of `source` and `definition`. */
export const PublishBody = Type.Object(
  {
    source: Type.Optional(
      Type.String({
        maxLength: 1_000_000,
        description: "the flow file's text, YAML or JSON (problems get line:column)",
      }),
    ),
    definition: Type.Optional(Type.Unsafe<object>({ type: 'object', description: 'the flow as JSON' })),
    environment: Type.Optional(StringEnum(ENVIRONMENTS, { default: 'PRODUCTION' })),
    organization: Type.Optional(Name),
    dryRun: Type.Optional(
      Type.Boolean({ description: "only check, as a publish would against the daemon's state; nothing changes" }),
    ),
  },
  { additionalProperties: false },
);
export type PublishBody = Static<typeof PublishBody>;

/** What POST /admin/flows answers: what the publish did. */
export const Published = Answer({
  processId: Type.String(),
  name: Type.String(),
  organization: Type.String(),
  version: Type.String(),
  environment: StringEnum(ENVIRONMENTS),
  /** False when an identical definition was published before: its version is given back. */
  created: Type.Boolean(),
  /** Present with a dry run: nothing was published; version and created say what a publish would do. */
  dryRun: Type.Optional(Type.Boolean()),
});
export type Published = Static<typeof Published>;

/** Path parameters of /admin/flows/{processId}. */
export const FlowParams = Type.Object({ processId: Type.String({ maxLength: 200 }) });
export type FlowParams = Static<typeof FlowParams>;

/** Querystring of GET /admin/flows/{processId}: which version's definition (default: the latest). */
export const FlowQuery = Type.Object(
  { version: Type.Optional(Type.String({ pattern: '^[0-9]+$' })) },
  { additionalProperties: false },
);
export type FlowQuery = Static<typeof FlowQuery>;

/** A published version: its number, when, and the JSON Schema of its start data (`inputs:`), if it declares one. */
export const VersionInfo = Answer({
  version: Type.String(),
  publishedAt: Type.String(),
  inputs: Type.Optional(Type.Unsafe<Readonly<Record<string, unknown>>>({ type: 'object' })),
});
export type VersionInfo = Static<typeof VersionInfo>;

/** A flow as GET /admin/flows lists it. */
export const FlowSummary = Answer({
  processId: Type.String(),
  /** The name of the version that runs (PRODUCTION's active version, else DEVELOPMENT's, else the newest). */
  name: Type.String(),
  /** The trigger types of that version, each once (`on-demand`, `webhook`, `schedule`, `email`); [] without any. */
  triggers: Type.Array(Type.String()),
  organization: Type.String(),
  public: Type.Boolean(),
  /** Environment -> its active version (`{PRODUCTION: "2"}`); an environment without one is absent. */
  active: Type.Unsafe<Readonly<Record<string, string>>>({ type: 'object' }),
  versions: Type.Array(VersionInfo),
});
export type FlowSummary = Static<typeof FlowSummary>;

/** GET /admin/flows. */
export const FlowList = Items(FlowSummary);
export type FlowList = Static<typeof FlowList>;

/** GET /admin/flows/{processId}: the flow, and one version's definition. */
export type FlowDetail = FlowSummary & { readonly version: string; readonly definition: FlowDefinition };

/** Body of POST /admin/flows/{processId}/activate. */
export const ActivateBody = Type.Object(
  {
    version: Type.String({ pattern: '^[0-9]+$' }),
    environment: Type.Optional(StringEnum(ENVIRONMENTS, { default: 'PRODUCTION' })),
  },
  { additionalProperties: false },
);
export type ActivateBody = Static<typeof ActivateBody>;

/** What POST /admin/flows/{processId}/activate answers. */
export const Activated = Answer({
  processId: Type.String(),
  environment: StringEnum(ENVIRONMENTS),
  version: Type.String(),
});
export type Activated = Static<typeof Activated>;

/** Body of POST /admin/flows/{processId}/promote: the environment whose active version the other takes. */
export const PromoteBody = Type.Object(
  { from: StringEnum(ENVIRONMENTS), to: StringEnum(ENVIRONMENTS) },
  { additionalProperties: false },
);
export type PromoteBody = Static<typeof PromoteBody>;

/** What POST /admin/flows/{processId}/promote answers. */
export const Promoted = Answer({
  processId: Type.String(),
  from: StringEnum(ENVIRONMENTS),
  to: StringEnum(ENVIRONMENTS),
  /** The version `to` runs now: `from`'s. */
  version: Type.String(),
  /** The version `to` ran before; null when it ran none. */
  previous: NullableString(),
});
export type Promoted = Static<typeof Promoted>;

/** Querystring of GET /process/list. */
export const FlowPageQuery = Type.Object(PageFields(1000, 100), { additionalProperties: false });
export type FlowPageQuery = Static<typeof FlowPageQuery>;

/** A flow as GET /process/list gives it (public flows only without WORKFLOW_READ). */
export const StartableFlow = Answer({
  processId: Type.String(),
  /** As FlowSummary's: the name of the version that runs. */
  name: Type.String(),
  /** As FlowSummary's: the trigger types of the version that runs. */
  triggers: Type.Array(Type.String()),
  public: Type.Boolean(),
  organization: Type.String(),
  versions: Type.Array(Type.String()),
  activeVersions: Answer({ PRODUCTION: NullableString(), DEVELOPMENT: NullableString() }),
});
export type StartableFlow = Static<typeof StartableFlow>;

/** GET /process/list. */
export const FlowPage = Page(StartableFlow);
export type FlowPage = Static<typeof FlowPage>;

/** A part of a flow its tests took (shared/flow/coverage-items.ts names them). */
const CoveredPart = Type.Object(
  { node: Type.String({ maxLength: 2000 }), part: Type.String({ maxLength: 100 }) },
  { additionalProperties: false },
);

/** How many of the cases that ran on the flow passed and failed. */
const CaseCounts = Type.Object(
  { passed: Type.Integer({ minimum: 0 }), failed: Type.Integer({ minimum: 0 }) },
  { additionalProperties: false },
);

/** Body of POST /admin/flows/{processId}/coverage: what a run of the flow's tests took (`wfx test --send-coverage`). */
export const CoverageBody = Type.Object(
  {
    /** The hash of the definition the tests ran (a published version's: flows/flow-hash.ts). */
    hash: Type.String({ pattern: '^[0-9a-f]{64}$', description: 'SHA-256 of the canonical JSON of the definition' }),
    /** The flow file, as the run showed it. */
    file: Type.String({ maxLength: 1000 }),
    cases: CaseCounts,
    covered: Type.Array(CoveredPart, { maxItems: 100_000 }),
  },
  { additionalProperties: false },
);
export type CoverageBody = Static<typeof CoverageBody>;

/** A version's last test coverage, as the daemon keeps it for the console. */
export const FlowCoverageView = Answer({
  processId: Type.String(),
  version: Type.String(),
  file: Type.String(),
  /** When the daemon received it. */
  measuredAt: Type.String(),
  cases: Answer({ passed: Type.Integer(), failed: Type.Integer() }),
  covered: Type.Array(Answer({ node: Type.String(), part: Type.String() })),
});
export type FlowCoverageView = Static<typeof FlowCoverageView>;

/** GET /admin/flows/{processId}/coverage: newest first. */
export const FlowCoverageList = Items(FlowCoverageView);
export type FlowCoverageList = Static<typeof FlowCoverageList>;
