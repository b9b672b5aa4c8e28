/**
 * The compiled JSON Schemas of domain actions, each compiled once: a domainTask's input is
 * checked when its node is reached, a worker's output when it completes, and compiling a
 * schema costs far more than checking a value against it.
 */
import type { ValidateFunction } from 'ajv';
import { compileJsonSchema, describeSchemaError } from '../../shared/flow/json-schema.js';
import { describeDepthExcess, jsonDepthExcess } from '../../shared/json-shape.js';

/**
 * Validators of domain action schemas, by the schema object itself: a registration replaces a
 * domain's objects, so a changed schema is a new key and an old one is collected with its
 * domain (a WeakMap, owned by this one instance per engine).
 */
export class DomainSchemas {
  private readonly compiled = new WeakMap<object, ValidateFunction | string>();

  constructor(private readonly maxJsonDepth: number) {}

  /**
   * Why `value` does not match `schema` (`path: message`, or the depth it nests too deep), or
   * null when it does. A schema that does not compile (registered before a stricter check) is
   * reported as the value's problem too. Never throws.
   */
  problem(schema: Record<string, unknown>, value: unknown, what: string): string | null {
    const excess = jsonDepthExcess(value, this.maxJsonDepth);
    if (excess !== null) return `${what} is ${describeDepthExcess(excess)}`;
    let validate = this.compiled.get(schema);
    if (validate === undefined) {
      const c = compileJsonSchema(schema);
      validate = c.ok ? c.validate : `the schema does not compile: ${c.message}`;
      this.compiled.set(schema, validate);
    }
    if (typeof validate === 'string') return validate;
    return validate(value) ? null : `${what} does not match its schema: ${describeSchemaError(validate.errors)}`;
  }
}
