/**
 * Every operation of /openapi.json named (its `operationId`, what client generators name their
 * methods by), from its method and path unless its route names it: `GET /process/instance/:id/logs`
 * is `getProcessInstanceByIdLogs`. Distinct routes get distinct names: each segment is kept in
 * its place, a parameter as `By` and its name. And the document finished as API tooling reads
 * it (openApiDocument): every operation with its error answers, nothing its version lacks.
 */
import type { FastifyInstance } from 'fastify';

/** Names each route added after this call that /openapi.json lists and that names none itself. */
export function nameOperations(app: FastifyInstance): void {
  app.addHook('onRoute', (route) => {
    const schema = route.schema as { operationId?: string; hide?: boolean } | undefined;
    if (!schema || schema.hide || schema.operationId !== undefined) return;
    const method = [route.method].flat().find((m) => m !== 'HEAD') ?? 'GET';
    route.schema = { ...schema, operationId: operationIdOf(method, route.url) };
  });
}

/** The operationId of `method` on path template `url` (Fastify's form: `:param`, `*`). */
export function operationIdOf(method: string, url: string): string {
  const words = url
    .split('/')
    .filter((s) => s !== '')
    .map((segment) =>
      segment === '*' ? 'Any' : segment.startsWith(':') ? `By${pascal(segment.slice(1))}` : pascal(segment),
    );
  return method.toLowerCase() + words.join('');
}

function pascal(text: string): string {
  return text
    .split(/[^A-Za-z0-9]+/)
    .filter((w) => w !== '')
    .map((w) => w[0]!.toUpperCase() + w.slice(1))
    .join('');
}

/** `value` with every `keyword` property of its objects left out, at any depth (a copy). */
export function withoutKeyword<T>(value: T, keyword: string): T {
  if (Array.isArray(value)) return value.map((v: unknown) => withoutKeyword(v, keyword)) as T;
  if (value === null || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) if (k !== keyword) out[k] = withoutKeyword(v, keyword);
  return out as T;
}

interface Operation {
  responses?: Record<string, unknown>;
}

/**
 * The document @fastify/swagger made, finished: `propertyNames` (a record's key pattern, which
 * OpenAPI 3.0 lacks) left out, and every operation that declares no 4xx answer given `4XX` with
 * the error body: every error goes through one handler that answers it (server.ts).
 */
export function openApiDocument<T extends object>(doc: T): T {
  const out = withoutKeyword(doc, 'propertyNames') as T & {
    components?: { schemas?: Record<string, { title?: string }> };
    paths?: Record<string, Record<string, Operation>>;
  };
  const error = Object.entries(out.components?.schemas ?? {}).find(([, s]) => s.title === 'Error')?.[0];
  if (error === undefined) return out;
  const answer = {
    description: 'An error: its code, a message, and details (docs/errors.md)',
    content: { 'application/json': { schema: { $ref: `#/components/schemas/${error}` } } },
  };
  for (const item of Object.values(out.paths ?? {}))
    for (const op of Object.values(item))
      if (!Object.keys(op.responses ?? {}).some((code) => code.startsWith('4')))
        op.responses = { ...op.responses, '4XX': answer };
  return out;
}
