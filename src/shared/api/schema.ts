/*
 * TypeBox's builders, for the wire contract: each returns the plain JSON Schema object TypeBox's
 * own would (the keywords the API uses), typed with TypeBox's types, so `Static<typeof X>` and
 * `@fastify/type-provider-typebox` give the static types. TypeBox itself is imported for its
 * types only: loading it costs the daemon's and the CLI's start more than Fastify does
 * (docs/decisions/030-wire-schemas-without-typebox-runtime.md).
 */
import type {
  Static,
  TArray,
  TBoolean,
  TInteger,
  TObject,
  TOptional,
  TProperties,
  TSchema,
  TString,
  TUnknown,
  TUnsafe,
} from 'typebox';

export type { Static, TSchema, TUnsafe };

/** Marks a property schema made by `Type.Optional` (not enumerable: no JSON Schema keyword). */
const OPTIONAL = '~optional';

type Options = Record<string, unknown>;

/** The builders the wire contract uses, named and typed as TypeBox's `Type.*`. Pure. */
export const Type = {
  /**
   * `{type: 'object', required, ...options, properties}`: `required` lists the properties not
   * made Optional, in order (none: no `required`); keys in the order /openapi.json has them.
   */
  Object<P extends TProperties>(properties: P, options: Options = {}): TObject<P> {
    const required = Object.keys(properties).filter((k) => !(OPTIONAL in properties[k]!));
    return {
      type: 'object',
      ...(required.length > 0 && { required }),
      ...options,
      properties,
    } as unknown as TObject<P>;
  },
  /** A property the object may lack: the same schema, marked. */
  Optional<T extends TSchema>(schema: T): TOptional<T> {
    return Object.defineProperty({ ...schema }, OPTIONAL, {
      value: true,
      enumerable: false,
    }) as unknown as TOptional<T>;
  },
  String(options: Options = {}): TString {
    return { type: 'string', ...options } as unknown as TString;
  },
  Integer(options: Options = {}): TInteger {
    return { type: 'integer', ...options } as unknown as TInteger;
  },
  Boolean(options: Options = {}): TBoolean {
    return { type: 'boolean', ...options } as unknown as TBoolean;
  },
  Array<T extends TSchema>(items: T, options: Options = {}): TArray<T> {
    return { type: 'array', items, ...options } as unknown as TArray<T>;
  },
  /** Any value: `{}`. */
  Unknown(options: Options = {}): TUnknown {
    return { ...options } as unknown as TUnknown;
  },
  /** `schema` as given, with the static type `T`: for shapes TypeBox's builders would write otherwise. */
  Unsafe<T>(schema: Options): TUnsafe<T> {
    return { ...schema } as unknown as TUnsafe<T>;
  },
};
