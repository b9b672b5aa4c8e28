/* Who claimed a task, as the console says it: the daemon names callers `key:<id>` or `oidc:<subject>`. */
import type { WhoAmI } from '../../shared/api/meta.js';

/** The session as the daemon names a caller (api/caller.ts, actorOf), or null before it is read. Pure. */
export function actorOfSession(who: WhoAmI | undefined): string | null {
  if (who === undefined) return null;
  if (who.keyId !== undefined) return `key:${who.keyId}`;
  return who.subject !== undefined && who.subject !== null ? `oidc:${who.subject}` : null;
}

/** Who claimed a task, for the person reading: `you`, the claimer's name, or `nobody`. Pure. */
export function claimWords(claimedBy: string | null, me: string | null, name?: string): string {
  if (claimedBy === null) return 'nobody';
  if (claimedBy === me) return 'you';
  return name ?? claimedBy;
}
