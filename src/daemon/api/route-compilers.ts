/**
 * The routes' schema compilers, put off until they are needed. Each route's validators (Ajv)
 * and response serializers (fast-json-stringify, as Fastify's own) are compiled when the route
 * first needs them or, once the daemon is up, by `compileAll` a turn of the event loop at a time,
 * not while the routes are registered: compiling them (and Ajv's meta-schema) at registration
 * slowed every start, and begun as soon as the server listened, they still delayed the daemon
 * saying it is up (a compile between each of the steps that write daemon.json;
 * docs/decisions/019-restart-path.md).
 */
import { SerializerSelector, type SerializerFactory } from '@fastify/fast-json-stringify-compiler';
import { Ajv, type ValidateFunction } from 'ajv';

/** Compiles put off, oldest first: each runs once, on first use or in `compileAll`. */
export class CompileQueue {
  private todo: Array<() => unknown> = [];

  /** `compile`, run once when the returned function is first called (or by compileAll); it returns what it made. */
  lazy<T>(compile: () => T): () => T {
    let made: { readonly value: T } | null = null;
    const real = (): T => (made ??= { value: compile() }).value;
    this.todo.push(real);
    return real;
  }

  /** Runs every compile not run yet, one per turn of the event loop; rejects with the first that throws. */
  async compileAll(): Promise<void> {
    const todo = this.todo;
    this.todo = [];
    for (const real of todo) {
      await new Promise((resolve) => setImmediate(resolve));
      real();
    }
  }
}

/** Validation context as Ajv passes it (the root's parent: how a coerced root value reaches the request). */
type ValidationContext = Parameters<ValidateFunction>[1];

/** A route's validator as Fastify calls it: Ajv's signature, and its errors after a call that failed. */
interface RouteValidator {
  (data: unknown, context?: ValidationContext): boolean;
  errors: ValidateFunction['errors'];
  /** Set so that Fastify passes the request as the root's parent, as it does for Ajv's own functions: Ajv puts a coerced root value there. */
  readonly schemaEnv: true;
}

/**
 * The routes' validators, compiled through `queue`. Bodies are checked strictly (a mistyped
 * field is an error, not coerced); query and path coerce.
 */
export function validatorCompilers(queue = new CompileQueue()) {
  const ajvCoercing = (coerceTypes: false | 'array') =>
    new Ajv({
      coerceTypes,
      useDefaults: true,
      removeAdditional: false,
      allErrors: true,
      strict: false,
      allowUnionTypes: true,
    });
  const [strict, loose] = [ajvCoercing(false), ajvCoercing('array')];
  for (const ajv of [strict, loose])
    ajv.addFormat('date-time', (v: string) => !Number.isNaN(Date.parse(v)) && /^\d{4}-\d{2}-\d{2}T/.test(v));
  const compile = ({ schema, httpPart }: { schema: object; httpPart?: string }): RouteValidator => {
    const ajv = httpPart === 'body' ? strict : loose;
    const real = queue.lazy(() => ajv.compile(schema));
    const validate = (data: unknown, context?: ValidationContext): boolean => {
      const fn = real();
      const ok = fn(data, context);
      validate.errors = fn.errors;
      return ok;
    };
    validate.errors = null as ValidateFunction['errors'];
    validate.schemaEnv = true as const;
    return validate;
  };
  return { compile, compileAll: () => queue.compileAll() };
}

/**
 * Fastify's serializer factory (`schemaController.compilersFactory.buildSerializer`): its own,
 * with each route's serializer compiled through `queue`.
 */
export function serializerFactory(queue: CompileQueue): SerializerFactory {
  const fastifys = SerializerSelector();
  return (externalSchemas, options) => {
    const build = fastifys(externalSchemas, options);
    return (route) => {
      const real = queue.lazy(() => build(route));
      return (doc: unknown) => real()(doc);
    };
  };
}
