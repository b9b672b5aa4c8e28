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

/**
 * `filters` (their `organization` resolved by the caller as `organization`) as an ExecutionQuery
 * without its page: search attributes from `where`, `search` and `search.NAME` keys (a
 * querystring's) together. Pure.
 */
export function executionQueryOf(filters: BulkQuery, organization: string | null): Omit<ExecutionQuery, 'limit'> {
  const { organization: _asked, state, startedAfter, startedBefore, where, search, ...others } = filters;
  const pairs = (where ?? []).map(searchPair);
  if (search !== undefined) pairs.push(...Object.entries(search));
  const rest: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(others))
    if (key.startsWith('search.')) pairs.push([key.slice('search.'.length), String(value)]);
    else rest[key] = value;
  return {
    ...(rest as typeof others),
    organization,
    ...(pairs.length > 0 && { search: pairs }),
    ...(state !== undefined && { stateCd: STATE[state] }),
    ...(startedAfter !== undefined && { startedAfter: Date.parse(startedAfter) }),
    ...(startedBefore !== undefined && { startedBefore: Date.parse(startedBefore) }),
  };
}
