import { jsonPointerPath } from '../json-shape.js';
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import { Ajv2020 } from 'ajv/dist/2020.js';

/**
 * The JSON Schemas a flow carries (an aiTask's or callAgent's answer `schema`, a flow's
 * `inputs:`), compiled one way for both sides: the flow validator refuses at publish what does
 * not compile, and the daemon validates with the same options at run time (answers, start
 * data, tool arguments), so a schema that published never fails to compile later. Strict: an
 * unknown keyword (a typo such as `proprties`) is an error, not silently ignored; `format` is
 * an annotation only (no formats are bundled).
 */
export type JsonSchemaCompilation =
  | { readonly ok: true; readonly validate: ValidateFunction }
  | {
      readonly ok: false;
      /** Where in the schema the problem is (a path of property names and indexes; [] for the whole). */
      readonly path: readonly (string | number)[];
      readonly message: string;
    };

const STRICT = {
  allErrors: false,
  strict: true,
  strictTypes: false,
  strictTuples: false,
  strictRequired: false,
  allowUnionTypes: true,
  validateFormats: false,
} as const;

/** The `$schema` of draft 2020-12 (with or without its empty fragment); any other or none is read as draft-07. */
const DRAFT_2020 = /^https:\/\/json-schema\.org\/draft\/2020-12\/schema#?$/;

/** How a schema is compiled beyond the shared strict options. */
export interface JsonSchemaOptions {
  /** Fill in each missing property that has a `default` (the validated data is changed): start data. */
  readonly useDefaults?: boolean;
  /** Report every violation, not the first only (a publish-time check that filters them). */
  readonly allErrors?: boolean;
}

/**
 * Ajv instances by draft and options, for schemas that name no part of themselves: compiled on
 * one and removed from it at once, a schema leaves nothing behind, and building an instance (its
 * meta-schema) for each of a flow's thousands of schemas is what cost.
 */
const instances = new Map<string, Ajv>();

/**
 * Compiles `schema` as draft-07, or as 2020-12 when its `$schema` says so. A schema that names
 * parts of itself (`$id`, `$anchor`) gets an Ajv of its own: schemas of different flows may
 * reuse a name. Pure; never throws: a schema that does not compile is reported with where and why.
 */
export function compileJsonSchema(schema: unknown, options: JsonSchemaOptions = {}): JsonSchemaCompilation {
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema))
    return { ok: false, path: [], message: 'a JSON Schema must be an object' };
  const version = (schema as { $schema?: unknown }).$schema;
  const draft2020 = typeof version === 'string' && DRAFT_2020.test(version);
  const opts = {
    ...STRICT,
    ...(options.useDefaults && { useDefaults: true }),
    ...(options.allErrors && { allErrors: true }),
  };
  const shared = !namesItself(schema);
  const key = `${draft2020}|${Boolean(options.useDefaults)}|${Boolean(options.allErrors)}`;
  let ajv = shared ? instances.get(key) : undefined;
  if (!ajv) {
    ajv = draft2020 ? new Ajv2020(opts) : new Ajv(opts);
    if (shared) instances.set(key, ajv);
  }
  try {
    return compileOn(ajv, schema);
  } finally {
    if (shared) ajv.removeSchema(schema);
  }
}

/** Whether `schema` declares an `$id`, `$anchor` or `$dynamicAnchor` anywhere (iterative). */
function namesItself(schema: object): boolean {
  const stack: unknown[] = [schema];
  while (stack.length > 0) {
    const v = stack.pop();
    if (typeof v !== 'object' || v === null) continue;
    if (!Array.isArray(v) && ('$id' in v || '$anchor' in v || '$dynamicAnchor' in v)) return true;
    for (const child of Object.values(v)) if (typeof child === 'object' && child !== null) stack.push(child);
  }
  return false;
}

function compileOn(ajv: Ajv, schema: object): JsonSchemaCompilation {
  let valid: boolean;
  try {
    valid = ajv.validateSchema(schema) as boolean;
  } catch (err) {
    // A `$schema` Ajv does not know (draft 2019-09, draft-04, a typo) throws rather than answering.
    return {
      ok: false,
      path: ['$schema'],
      message: `not a JSON Schema version this daemon reads: ${(err as Error).message}`,
    };
  }
  if (!valid) {
    const first = (ajv.errors ?? [])[0];
    return {
      ok: false,
      path: first ? jsonPointerPath(first.instancePath) : [],
      message: `not a valid JSON Schema: ${first ? describe(first) : 'it does not match the meta-schema'}`,
    };
  }
  try {
    return { ok: true, validate: ajv.compile(schema) };
  } catch (err) {
    return { ok: false, path: [], message: `the JSON Schema does not compile: ${(err as Error).message}` };
  }
}

/** The first violation of an answer, as `path: message` (`/category: must be one of ...`). Pure. */
export function describeSchemaError(errors: readonly ErrorObject[] | null | undefined): string {
  const first = errors?.[0];
  if (!first) return 'the answer does not match the schema';
  return `${first.instancePath === '' ? '(the answer)' : first.instancePath}: ${describe(first)}`;
}

function describe(err: ErrorObject): string {
  const p = err.params as Record<string, unknown>;
  if (err.keyword === 'enum') return `must be one of: ${(p.allowedValues as unknown[]).map(String).join(', ')}`;
  if (err.keyword === 'additionalProperties') return `unknown property "${String(p.additionalProperty)}"`;
  return err.message ?? 'is not valid';
}
