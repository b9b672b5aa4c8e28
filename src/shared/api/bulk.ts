/*
 * Bulk operations over the executions a query selects (POST /process/bulk and its reads): an
 * operation (cancel, ...) applied to each selected execution, durably, at a bounded rate, with a
 * result per execution. The query is GET /process/instances' (less its paging), so a filter
 * added there comes along here.
 */
import { Type, type Static, type TSchema } from './schema.js';
import { Answer, Nullable, NullableString, Page, PageFields, StringEnum, OrganizationFilter } from './common.js';
import { ExecutionListQuery, InstanceSummary, SearchAttributes } from './process.js';

const { limit: _limit, cursor: _cursor, ...filters } = ExecutionListQuery.properties;

/** Which executions a bulk operation selects: GET /process/instances' filters, without its paging. */
export const BulkQuery = Type.Object(
  { ...filters, search: Type.Optional(SearchAttributes) },
  { additionalProperties: false },
);
export type BulkQuery = Static<typeof BulkQuery>;

/**
 * Each bulk operation and the schema of its `params` (null: it takes none). The body's union,
 * the operations' names and their params' types all come from this table: an operation is added
 * here and in the daemon's table of operations (engine/bulk/operations.ts), which the compiler
 * then requires.
 */
const BulkData = Type.Unsafe<Record<string, unknown>>({ type: 'object' });

export const BULK_OPERATION_PARAMS = {
  cancel: null,
  /** Retry each failed execution where it failed (POST /process/instance/{id}/retry), `data` set first. */
  retry: Type.Object(
    { data: Type.Optional({ ...BulkData, description: 'variables set in each execution first' }) },
    { additionalProperties: false },
  ),
  /** Replay each execution from its start event with its start variables (a rerun), `data` over them. */
  replay: Type.Object(
    { data: Type.Optional({ ...BulkData, description: 'variables set over the start variables' }) },
    { additionalProperties: false },
  ),
  /** Move each running execution to `version` of its flow (POST /process/instance/{id}/move). */
  move: Type.Object({ version: Type.String({ pattern: '^[0-9]+$', maxLength: 20 }) }, { additionalProperties: false }),
} as const satisfies Record<string, TSchema | null>;

/** A bulk operation's name (a key of BULK_OPERATION_PARAMS). */
export type BulkOperationName = keyof typeof BULK_OPERATION_PARAMS;

/** The operations' names, in the table's order. */
export const BULK_OPERATION_NAMES = Object.keys(BULK_OPERATION_PARAMS) as BulkOperationName[];

/** The `params` operation `K` takes (undefined for one that takes none). */
export type BulkParamsOf<K extends BulkOperationName> = (typeof BULK_OPERATION_PARAMS)[K] extends TSchema
  ? Static<(typeof BULK_OPERATION_PARAMS)[K]>
  : undefined;

/** Most executions a dry run's `sample` lists. */
export const BULK_SAMPLE_MAX = 100;

/** Body of POST /process/bulk for operation `K`. */
export type BulkRequestOf<K extends BulkOperationName> = {
  readonly operation: K;
  readonly query: BulkQuery;
  /** Count the selection and list a sample of it, changing nothing. */
  readonly dryRun?: boolean;
  /** How many of the selection a dry run lists (default 10). */
  readonly sample?: number;
} & (BulkParamsOf<K> extends undefined ? { readonly params?: undefined } : { readonly params?: BulkParamsOf<K> });

/** Body of POST /process/bulk: one object per operation, each with its own `params`. */
export type BulkRequest = { [K in BulkOperationName]: BulkRequestOf<K> }[BulkOperationName];

/** The body's schema for operation `operation` with params `params` (required when they require a field). */
function bulkRequestSchema(operation: BulkOperationName, params: TSchema | null): TSchema {
  const needsParams = params !== null && Array.isArray((params as { required?: unknown }).required);
  return Type.Object(
    {
      operation: Type.Unsafe<string>({ type: 'string', const: operation }),
      query: BulkQuery,
      ...(params !== null && { params: needsParams ? params : Type.Optional(params) }),
      dryRun: Type.Optional(Type.Boolean()),
      sample: Type.Optional(Type.Integer({ minimum: 1, maximum: BULK_SAMPLE_MAX })),
    },
    { additionalProperties: false },
  );
}

/** Body of POST /process/bulk (a union over the operations: each validates its own `params`). */
export const BulkRequest = Type.Unsafe<BulkRequest>({
  oneOf: BULK_OPERATION_NAMES.map((name) => bulkRequestSchema(name, BULK_OPERATION_PARAMS[name])),
});

/** A bulk operation's states. */
export const BULK_STATES = ['RUNNING', 'COMPLETED', 'CANCELLED', 'FAILED'] as const;
/** A bulk operation's state (one of BULK_STATES). */
export type BulkState = (typeof BULK_STATES)[number];

/** What POST /process/bulk with `dryRun` answers: the selection's size and its first executions. */
export const BulkDryRun = Answer({
  dryRun: Type.Boolean(),
  operation: StringEnum(BULK_OPERATION_NAMES),
  /** How many executions the operation would be applied to (past `maxExecutions`: maxExecutions + 1, and it would be refused). */
  count: Type.Integer(),
  /** The most executions one operation may select (the daemon's `bulk-executions` limit). */
  maxExecutions: Type.Integer(),
  /** The first of them, newest first. */
  sample: Type.Array(InstanceSummary),
  /**
   * The instant the selection was made before (the query's `startedBefore` if earlier): sent as
   * the query's `startedBefore`, the operation selects what was previewed, and no execution
   * started since.
   */
  startedBefore: Type.String(),
  /**
   * For a move: each selected execution that could not move now, with why (the code it would be
   * skipped with, and a move's problems); at most BULK_SAMPLE_MAX listed, `refusedCount` all.
   */
  refused: Type.Optional(
    Type.Array(
      Type.Object({
        processInstanceId: Type.String(),
        code: Type.String(),
        message: Type.String(),
        problems: Type.Optional(
          Type.Array(Type.Unsafe<Record<string, unknown>>({ type: 'object', additionalProperties: true })),
        ),
      }),
    ),
  ),
  /** For a move: how many of the selection could not move now. */
  refusedCount: Type.Optional(Type.Integer()),
});
export type BulkDryRun = Static<typeof BulkDryRun>;

/** A bulk operation and its progress: POST /process/bulk (202), GET /process/bulk/{bulkId}, its cancel. */
export const BulkView = Answer({
  bulkId: Type.String(),
  operation: StringEnum(BULK_OPERATION_NAMES),
  params: Type.Unsafe<Record<string, unknown> | null>({ type: ['object', 'null'], additionalProperties: true }),
  /** The query as given. */
  query: Type.Unsafe<BulkQuery>({ type: 'object', additionalProperties: true }),
  /** Whose executions it selects: an organization's, or every one's (null: a system key's without `organization`). */
  organization: NullableString(),
  state: StringEnum(BULK_STATES),
  /** Executions selected: fixed when the operation was created (see `selected`). */
  total: Type.Integer(),
  /**
   * Whether every partition's executions are selected. True from the creation on, but on daemons
   * sharing a database, where each selects its own partitions' (within a second): `total` grows
   * until then.
   */
  selected: Type.Boolean(),
  /** Applied so far. */
  done: Type.Integer(),
  /** Passed over so far, each with its reason (GET /process/bulk/{bulkId}/results). */
  skipped: Type.Integer(),
  /** Neither yet (once cancelled or failed: never). */
  pending: Type.Integer(),
  createdAt: Type.String(),
  /** Only executions started before this instant are selected: the creation, or the query's `startedBefore` if earlier. */
  startedBefore: Type.String(),
  finishedAt: NullableString(),
  /** Who created it (`key:<id>`, `oidc:<subject>`). */
  by: Type.String(),
  /** Who cancelled it, once cancelled. */
  cancelledBy: NullableString(),
  /** Why it failed, once failed. */
  error: Nullable<{ readonly code: string; readonly message: string }>('object', {
    properties: { code: { type: 'string' }, message: { type: 'string' } },
  }),
  /** Seconds until the rest is applied at the rate seen so far, while running; null otherwise or before a first chunk. */
  etaSeconds: Nullable<number>('integer'),
});
export type BulkView = Static<typeof BulkView>;

/** Querystring of GET /process/bulk. */
export const BulkListQuery = Type.Object(
  {
    state: Type.Optional(StringEnum(BULK_STATES)),
    organization: OrganizationFilter('bulk operations', "every one's"),
    ...PageFields(200, 50),
  },
  { additionalProperties: false },
);
export type BulkListQuery = Static<typeof BulkListQuery>;

/** GET /process/bulk: bulk operations, newest first. */
export const BulkPage = Page(BulkView);
export type BulkPage = Static<typeof BulkPage>;

/** Path parameter `bulkId`. */
export const BulkIdParams = Type.Object({ bulkId: Type.String({ minLength: 1, maxLength: 200 }) });
export type BulkIdParams = Static<typeof BulkIdParams>;

/** The outcomes of one execution in a bulk operation. */
export const BULK_OUTCOMES = ['DONE', 'SKIPPED'] as const;
export type BulkOutcome = (typeof BULK_OUTCOMES)[number];

/** Querystring of GET /process/bulk/{bulkId}/results. */
export const BulkResultsQuery = Type.Object(
  {
    outcome: Type.Optional(StringEnum(BULK_OUTCOMES)),
    ...PageFields(1000, 100),
  },
  { additionalProperties: false },
);
export type BulkResultsQuery = Static<typeof BulkResultsQuery>;

/** One execution's result in a bulk operation. */
export const BulkResult = Answer({
  processInstanceId: Type.String(),
  outcome: StringEnum(BULK_OUTCOMES),
  /** Why it was skipped (an error code: INSTANCE_NOT_RUNNING, ...); null when done. */
  code: NullableString(),
});
export type BulkResult = Static<typeof BulkResult>;

/** GET /process/bulk/{bulkId}/results: results so far, newest execution first. */
export const BulkResultPage = Page(BulkResult);
export type BulkResultPage = Static<typeof BulkResultPage>;
