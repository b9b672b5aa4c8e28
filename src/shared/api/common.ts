/*
 * Building blocks of the wire contract. Each schema here is the JSON Schema a route validates
 * with (the daemon's own Ajv, see server.ts) and, through `Static`, the type the client and the
 * handlers use. The helpers keep each schema's JSON exactly as the API has always validated and
 * documented it (`type: ['string', 'null']`, no `required` on answers), where TypeBox's own
 * builders would write it differently.
 */
import type { TObject, TProperties } from 'typebox';
import { Type, type Static, type TSchema, type TUnsafe } from './schema.js';
import type { ErrorCode } from '../errors.js';
import { RESERVED_NAMES } from '../names.js';

export type { Static };

/** The environments a flow version runs in, in the order the API validates and documents them. */
export const ENVIRONMENTS = ['DEVELOPMENT', 'PRODUCTION'] as const;
/** An environment name (one of ENVIRONMENTS). */
export type Environment = (typeof ENVIRONMENTS)[number];

/** A string of one of `values`: `{type: 'string', enum}`; static type the union of them. */
export function StringEnum<const T extends readonly string[]>(
  values: T,
  options: Record<string, unknown> = {},
): TUnsafe<T[number]> {
  return Type.Unsafe<T[number]>({ type: 'string', enum: [...values], ...options });
}

/** `{type: [type, 'null'], ...options}`: a value of `type`, or null. Pure. */
export function Nullable<T>(
  type: 'string' | 'integer' | 'number' | 'boolean' | 'object' | 'array',
  options: Record<string, unknown> = {},
): TUnsafe<T | null> {
  return Type.Unsafe<T | null>({ type: [type, 'null'], ...options });
}

/** A nullable string (`{type: ['string', 'null']}`). */
export const NullableString = (options: Record<string, unknown> = {}) => Nullable<string>('string', options);

/**
 * An answer object: `{type: 'object', properties}` without `required`, typed as the daemon
 * always sends it (every property not marked Optional is present). The reply schemas of the
 * API never listed `required`; fast-json-stringify would refuse an answer missing one.
 */
export function Answer<P extends TProperties>(
  properties: P,
  options: Record<string, unknown> = {},
): TUnsafe<Static<TObject<P>>> {
  return Type.Unsafe<Static<TObject<P>>>({ type: 'object', properties, ...options });
}

/** A page of a list: `{items, nextCursor}` (nextCursor null on the last page). */
export function Page<T extends TSchema>(item: T) {
  return Answer({ items: Type.Array(item), nextCursor: NullableString() });
}

/** A list without pages: `{items}`. */
export function Items<T extends TSchema>(item: T) {
  return Answer({ items: Type.Array(item) });
}

/** A user-given name (organization, webhook, connection): never a reserved word. */
export const Name = Type.String({ pattern: '^[A-Za-z0-9][A-Za-z0-9_.-]{0,99}$', not: { enum: RESERVED_NAMES } });

/**
 * The `organization` filter of a list a system key reads across organizations: the one named,
 * else every one. `what` is what the list holds (`executions`); `everyone` how the default reads.
 */
export function OrganizationFilter(what: string, everyone = 'every organization') {
  return Type.Optional(
    Type.Unsafe<string>({
      ...Name,
      description: `system keys only: this organization's ${what} (default: ${everyone})`,
    }),
  );
}

/** Querystring of admin routes: `?organization=` (system callers name the organization they act in). */
export const OrganizationQuery = Type.Object({ organization: Type.Optional(Name) }, { additionalProperties: false });
export type OrganizationQuery = Static<typeof OrganizationQuery>;

/**
 * The `limit` and `cursor` of a querystring that reads a list a page at a time: at most
 * `maximum` items a page (`fallback` when none is asked for), after the `nextCursor` the page
 * before gave. Spread where they stand among the querystring's properties. Pure.
 */
export function PageFields(maximum: number, fallback: number, cursorMaxLength = 200) {
  return {
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum, default: fallback })),
    /** The `nextCursor` of the previous page. */
    cursor: Type.Optional(Type.String({ maxLength: cursorMaxLength })),
  };
}

/** Body of a PATCH: `properties` (each optional), no other, and at least one of them given. Pure. */
export function PatchBody<P extends TProperties>(properties: P) {
  return Type.Object(properties, { additionalProperties: false, minProperties: 1 });
}

/** What every catalogue entry named within an organization shows (a type only). */
export interface CatalogueEntryView {
  readonly name: string;
  readonly organization: string;
  readonly createdAt: string;
  readonly updatedAt: string;
}

/** Path parameter `id`: an execution or flow id. */
export const IdParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 200 }) });
export type IdParams = Static<typeof IdParams>;

/** Body of every error answer (SPEC.md section 5); registered as the shared schema `Error`. */
export const ErrorAnswer = Type.Unsafe<ErrorBody>({
  $id: 'Error',
  type: 'object',
  properties: {
    error: { type: 'string' },
    message: { type: 'string' },
    timestamp: { type: 'string' },
    details: {},
    retryAfter: { type: 'integer' },
  },
});

/** Body of every error answer (SPEC.md section 5). */
export interface ErrorBody {
  readonly error: ErrorCode;
  readonly message: string;
  readonly timestamp: string;
  readonly details?: unknown;
  readonly retryAfter?: number;
}

/** A reference to the `Error` schema, for reply schemas. */
export const ErrorRef = Type.Unsafe<ErrorBody>({ $ref: 'Error#' });

/** The error answers a route with a reply schema documents. */
export const ERROR_REPLIES = {
  400: ErrorRef,
  401: ErrorRef,
  403: ErrorRef,
  404: ErrorRef,
  409: ErrorRef,
  429: ErrorRef,
} as const;

/**
 * A request part as a handler sees it: the validator (Ajv's `useDefaults`) has filled the
 * properties `K` that have a schema `default`, which the wire type leaves optional.
 */
export type WithDefaults<T, K extends keyof T> = T & { [P in K]-?: Exclude<T[P], undefined> };
