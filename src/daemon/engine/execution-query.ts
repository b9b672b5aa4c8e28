/**
 * The wire's filters of a list of executions (GET /process/instances, a bulk operation's query)
 * as the engine's ExecutionQuery: a state by its code, instants as milliseconds. Every other
 * filter passes as it is, so one added to the wire's query reaches the filter unchanged.
 */
import { STATE, type BulkQuery } from '../../shared/api/index.js';
import type { ExecutionQuery } from './execution-filter.js';

/** `name=value` (its form checked by the query's schema) as its pair. Pure. */
function searchPair(text: string): readonly [string, string] {
  const eq = text.indexOf('=');
  return [text.slice(0, eq), text.slice(eq + 1)];
}

/** `filters` (their `organization` resolved by the caller as `organization`) as an ExecutionQuery without its page. Pure. */
export function executionQueryOf(filters: BulkQuery, organization: string | null): Omit<ExecutionQuery, 'limit'> {
  const { organization: _asked, state, startedAfter, startedBefore, where, ...rest } = filters;
  return {
    ...rest,
    organization,
    ...(where !== undefined && where.length > 0 && { search: where.map(searchPair) }),
    ...(state !== undefined && { stateCd: STATE[state] }),
    ...(startedAfter !== undefined && { startedAfter: Date.parse(startedAfter) }),
    ...(startedBefore !== undefined && { startedBefore: Date.parse(startedBefore) }),
  };
}
