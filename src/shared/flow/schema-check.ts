/**
 * The flow's JSON Schema check. Bodies (`nodes:` of a loopNode or an embedded subProcess) are
 * checked one by one, each against the schema of a node map, never by the schema recursing into
 * them: how deep bodies nest then costs no stack, and no body depth overflows the validator's.
 */
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import { jsonPointerPath } from '../json-shape.js';
import { closestName } from '../suggest.js';
import { flowSchema } from './schema.js';

/** A schema error, and where its instance stands from the flow's root. */
export interface SchemaViolation {
  readonly path: readonly (string | number)[];
  readonly error: ErrorObject;
}

let compiled: { readonly flow: ValidateFunction; readonly nodes: ValidateFunction } | undefined;
function validators(): { readonly flow: ValidateFunction; readonly nodes: ValidateFunction } {
  if (!compiled) {
    // verbose: an error carries the schema it broke, whose properties name what "did you mean" offers.
    const ajv = new Ajv({ allErrors: true, strict: false, allowUnionTypes: true, verbose: true });
    const schema = flowSchema({ bodies: 'unchecked' });
    ajv.addSchema(schema);
    const id = String(schema.$id);
    compiled = { flow: ajv.getSchema(id)!, nodes: ajv.getSchema(`${id}#/definitions/nodes`)! };
  }
  return compiled;
}

/**
 * The schema errors of a flow: of `value` with its bodies left unchecked, then of each body of
 * `bodies` (the node maps under the top level, with their paths) as a node map. Noise of
 * `oneOf` and `if` alternatives is dropped. Pure.
 */
export function schemaViolations(
  value: unknown,
  bodies: ReadonlyArray<{ readonly path: readonly (string | number)[]; readonly nodes: unknown }>,
): SchemaViolation[] {
  const { flow, nodes } = validators();
  const found: SchemaViolation[] = [];
  const check = (validate: ValidateFunction, data: unknown, prefix: readonly (string | number)[]) => {
    if (validate(data)) return;
    for (const error of condenseErrors(validate.errors ?? []))
      found.push({ path: [...prefix, ...jsonPointerPath(error.instancePath)], error });
  };
  check(flow, value, []);
  for (const body of bodies) check(nodes, body.nodes, body.path);
  return found;
}

/**
 * Drops the noise of `oneOf`/`if` alternatives: keep the failing `oneOf` itself. Linear: an
 * error is noise when a prefix of its schema path up to a `/oneOf` is a failing oneOf's path.
 */
function condenseErrors(errors: readonly ErrorObject[]): ErrorObject[] {
  const oneOfs = new Set(errors.filter((e) => e.keyword === 'oneOf').map((e) => e.schemaPath));
  return errors.filter((e) => {
    if (e.keyword === 'if' || e.keyword === 'propertyNames') return false;
    for (let i = e.schemaPath.indexOf('/oneOf/'); i >= 0; i = e.schemaPath.indexOf('/oneOf/', i + 1))
      if (oneOfs.has(e.schemaPath.slice(0, i + '/oneOf'.length))) return false;
    return true;
  });
}

/** A schema error as a flow problem: its code, its message, and the property it names under its path. Pure. */
export function describeViolation(err: ErrorObject): {
  code: 'SCHEMA' | 'MISSING_PROPERTY';
  message: string;
  extra: string[];
} {
  const p = err.params as Record<string, unknown>;
  switch (err.keyword) {
    case 'required':
      return {
        code: 'MISSING_PROPERTY',
        message: `missing required property "${String(p.missingProperty)}"`,
        extra: [String(p.missingProperty)],
      };
    case 'additionalProperties': {
      const name = String(p.additionalProperty);
      const properties = (err.parentSchema as { properties?: Record<string, unknown> } | undefined)?.properties;
      const near = properties ? closestName(name, Object.keys(properties)) : undefined;
      return {
        code: 'SCHEMA',
        message: `unknown property "${name}"${near ? `; did you mean "${near}"?` : ''}`,
        extra: [name],
      };
    }
    case 'enum': {
      const allowed = (p.allowedValues as unknown[]).map(String);
      const near = typeof err.data === 'string' ? closestName(err.data, allowed) : undefined;
      return {
        code: 'SCHEMA',
        message: `must be one of: ${allowed.join(', ')}${near ? `; did you mean "${near}"?` : ''}`,
        extra: [],
      };
    }
    case 'oneOf': {
      const last = err.instancePath.split('/').at(-1);
      const what =
        last === 'next' || /^\d+$/.test(last ?? '')
          ? 'a node id or a non-empty list of node ids'
          : 'one of the allowed forms';
      return { code: 'SCHEMA', message: `must be ${what}`, extra: [] };
    }
    case 'pattern': {
      const what = String(err.schemaPath).includes('propertyNames')
        ? 'a node id: a letter or _ then letters, digits, _ or -'
        : /condition/.test(err.instancePath)
          ? 'a condition written ${...}'
          : /timeout|duration|ttl|Interval/.test(err.instancePath)
            ? 'a duration such as 30s, 5m, 2h or PT30M'
            : /processId/.test(err.instancePath)
              ? 'a UUID'
              : `text matching ${String(p.pattern)}`;
      return { code: 'SCHEMA', message: `must be ${what}`, extra: [] };
    }
    default:
      return { code: 'SCHEMA', message: err.message ?? 'is not valid', extra: [] };
  }
}
