import { WfxError } from '../../shared/errors.js';
import type { Caller } from './caller.js';

/**
 * The organization an admin request acts in: a system caller's named one (default `default`),
 * else the caller's own. Throws FORBIDDEN when an organization caller names another one.
 */
export function actingOrganization(caller: Caller, named: string | undefined): string {
  if (caller.system) return named ?? 'default';
  if (named !== undefined && named !== caller.organization)
    throw new WfxError('FORBIDDEN', 'an organization admin acts in its own organization only');
  return caller.organization!;
}

/**
 * The organization a list request reads: a system caller's named one (null: every
 * organization), else the caller's own. Throws FORBIDDEN when an organization caller names
 * another one, as `actingOrganization` does, so that every route answers that question alike.
 */
export function listedOrganization(caller: Caller, named: string | undefined): string | null {
  if (caller.system) return named ?? null;
  return actingOrganization(caller, named);
}
