/* The audit trail (GET /admin/audit): who changed what through the API, and when. Answers are types only. */
import { Type, type Static } from './schema.js';
import { Name, PageFields } from './common.js';

/** Querystring of GET /admin/audit: newest first, a page at a time, with filters. */
export const AuditListQuery = Type.Object(
  {
    ...PageFields(1000, 100),
    /** A system admin's filter on one organization (an organization's admin reads only its own). */
    organization: Type.Optional(Name),
    /** `key:<keyId>`, `oidc:<subject>`, `daemon`, or a bare key id or token subject. */
    actor: Type.Optional(Type.String({ minLength: 1, maxLength: 300 })),
    /** Text the record's action contains (`POST /admin/keys`, `/cancel`, `DELETE`...). */
    action: Type.Optional(Type.String({ minLength: 1, maxLength: 300 })),
    /** An id among the record's targets (an execution's id, a key id, a webhook id, a flow's processId...). */
    target: Type.Optional(Type.String({ minLength: 1, maxLength: 300 })),
    since: Type.Optional(Type.String({ format: 'date-time' })),
    until: Type.Optional(Type.String({ format: 'date-time' })),
  },
  { additionalProperties: false },
);
export type AuditListQuery = Static<typeof AuditListQuery>;

/**
 * One audit record: a change made through the API, with who made it, from where, when, and what.
 * It never holds a secret: targets are the route's path parameters (a webhook's token excepted)
 * and the ids its answer named; the summary holds only fields known to carry none.
 */
export interface AuditEntry {
  /** A UUIDv7 (time-ordered). */
  readonly id: string;
  readonly at: string;
  /** The organization acted on (the caller's; for a system key, the one the request named, or null). */
  readonly organization: string | null;
  /** `key:<keyId>`, `oidc:<subject>` or `daemon` (as recovery operations record it). */
  readonly actor: string;
  readonly keyId?: string;
  readonly subject?: string;
  /** The bearer token's issuer. */
  readonly issuer?: string;
  /** The console session the request came with (`ses_...`). */
  readonly session?: string;
  /** The remote address of the connection. */
  readonly remote?: string;
  /** The User-Agent, cut to 200 characters. */
  readonly userAgent?: string;
  /** `METHOD /route/:param`: the route as registered, not the URL. */
  readonly action: string;
  readonly status: number;
  /** Ids acted on: the path's parameters and the ids the answer named. */
  readonly targets: Readonly<Record<string, string>>;
  /** A few fields of the request known to carry no secret (names, roles, states, node ids). */
  readonly summary?: Readonly<Record<string, string | number | boolean>>;
}

/** Answer of GET /admin/audit. */
export interface AuditPage {
  readonly items: readonly AuditEntry[];
  readonly nextCursor: string | null;
}
