/* The route declarations many routes share: one place says what OpenAPI documents of them. */
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type {} from '@fastify/swagger'; // schema.tags, schema.summary
import { ERROR_REPLIES, OrganizationQuery, type Deleted, type Name } from '../../shared/api/index.js';
import type { TObject, TSchema } from 'typebox';
import type { Caller, RouteAuth } from './caller.js';

/**
 * The schema of a route of the executions API (tag `executions`): its summary, the parts it
 * validates (`params`, `querystring`, `body`), and its documented answers: `answer` on 200 and
 * the error replies. Pure.
 */
export function executionsSchema<const P extends object, const A extends TSchema>(
  summary: string,
  parts: P,
  answer: A,
) {
  return { tags: ['executions'], summary, ...parts, response: { 200: answer, ...ERROR_REPLIES } };
}

/**
 * The schema of a route on one catalogue entry named in its path (`params`), in the caller's
 * organization or the one `?organization=` names, with any other part it validates (`body`). Pure.
 */
export function namedEntrySchema<const P extends TSchema, const M extends object = Record<never, never>>(
  tags: string[],
  summary: string,
  params: P,
  more?: M,
) {
  return { tags, summary, params, querystring: OrganizationQuery, ...(more as M) };
}

/** What `deleteNamedEntryRoute` declares and does. */
export interface NamedEntryDeletion<E extends { readonly name: string }> {
  readonly config: { readonly auth: RouteAuth };
  readonly tags: string[];
  readonly summary: string;
  /** `{ name }`: the entry's path parameter. */
  readonly params: TObject<{ name: typeof Name }>;
  /** The entry `name` names in the acting organization; throws NOT_FOUND. */
  readonly find: (caller: Caller, name: string, organization?: string) => E;
  /** Removes the entry from the catalogue. */
  readonly remove: (entry: E) => Promise<void>;
}

/**
 * Declares DELETE `path` (ending in `/:name`) of a catalogue entry: finds the entry, removes it,
 * and answers `{ name, deleted: true }`.
 */
export function deleteNamedEntryRoute<E extends { readonly name: string }>(
  fastify: FastifyInstance,
  path: string,
  route: NamedEntryDeletion<E>,
): void {
  fastify.withTypeProvider<TypeBoxTypeProvider>().delete(path, {
    config: route.config,
    schema: namedEntrySchema(route.tags, route.summary, route.params),
    handler: async (request): Promise<Deleted> => {
      const entry = route.find(request.caller!, request.params.name, request.query.organization);
      await route.remove(entry);
      return { name: entry.name, deleted: true };
    },
  });
}
