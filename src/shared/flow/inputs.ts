/**
 * A flow's `inputs:`: the JSON Schema of its start data. Checked at publish (it compiles, and
 * it describes an object), validated on every start (API, CLI, triggers, subProcess,
 * callProcess, an agent's tool call), and read as a list of parameters by the CLI, the TUI and
 * an agent's tool definitions. A flow without `inputs:` accepts any object.
 */
import type { ErrorObject, ValidateFunction } from 'ajv';
import { formatJsonPath, jsonPointerPath } from '../json-shape.js';
import { compileJsonSchema } from './json-schema.js';
import type { FlowDefinition } from './types.js';

export { inputFields, type InputField } from './input-fields.js';

/** Why start data does not match a flow's inputs: where (`data.customer.id`) and what. */
export interface InputViolation {
  /** The path from the data's root, as text (`data.items[2].sku`). */
  readonly path: string;
  readonly message: string;
}

const validators = new WeakMap<object, ValidateFunction | Error>();

/** The problem with `inputs` as a flow's inputs (null when fine), with where in it. Pure. */
export function inputsProblem(
  inputs: unknown,
): { readonly path: (string | number)[]; readonly message: string } | null {
  if (typeof inputs !== 'object' || inputs === null || Array.isArray(inputs))
    return { path: [], message: 'inputs must be a JSON Schema (a mapping)' };
  const type = (inputs as { type?: unknown }).type;
  if (type !== undefined && type !== 'object')
    return { path: ['type'], message: 'start data is always an object: inputs must have type object' };
  const compiled = compileJsonSchema(inputs, { useDefaults: true });
  return compiled.ok ? null : { path: [...compiled.path], message: compiled.message };
}

/**
 * Checks start `data` against the flow's `inputs:` and fills in declared defaults (`data` is
 * changed: pass a copy). Null when it matches, or the flow declares none. The validator is
 * compiled once per published definition. Never throws: inputs that do not compile (refused at
 * publish; only a definition written before that check) are a violation.
 */
export function checkInputs(definition: FlowDefinition, data: Record<string, unknown>): InputViolation | null {
  const inputs = definition.inputs;
  if (inputs === undefined) return null;
  let validate = validators.get(inputs);
  if (validate === undefined) {
    const compiled = compileJsonSchema(inputs, { useDefaults: true });
    validate = compiled.ok ? compiled.validate : new Error(compiled.message);
    validators.set(inputs, validate);
  }
  if (validate instanceof Error)
    return { path: 'data', message: `the flow's inputs cannot be used: ${validate.message}` };
  if (validate(data)) return null;
  return describeViolation(validate.errors?.[0]);
}

function describeViolation(err: ErrorObject | undefined): InputViolation {
  if (!err) return { path: 'data', message: "does not match the flow's inputs" };
  const path = jsonPointerPath(err.instancePath);
  const p = err.params as Record<string, unknown>;
  switch (err.keyword) {
    case 'required':
      return { path: formatJsonPath([...path, String(p.missingProperty)], 'data'), message: 'is required' };
    case 'additionalProperties':
      return {
        path: formatJsonPath([...path, String(p.additionalProperty)], 'data'),
        message: 'is not an input of the flow',
      };
    case 'enum':
      return {
        path: formatJsonPath(path, 'data'),
        message: `must be one of: ${(p.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(', ')}`,
      };
    default:
      return { path: formatJsonPath(path, 'data'), message: err.message ?? 'is not valid' };
  }
}
