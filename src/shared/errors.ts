/**
 * The one catalogue of wfx error codes. Every error the daemon answers over HTTP, and every
 * error the CLI prints, is a `WfxError` with a code from here. Codes are stable: scripts and
 * tests match on them, never on message text. A test checks each code is documented in docs/.
 */

/** Definition of one error code: the HTTP status it maps to and a hint for people. */
interface ErrorDef {
  readonly status: number;
  readonly hint?: string;
}

export const ERROR_CODES = {
  // HTTP API (SPEC.md section 5)
  VALIDATION_ERROR: { status: 400 },
  UNAUTHORIZED: { status: 401, hint: 'Pass --api-key, set WFX_API_KEY, or run `wfx login`.' },
  FORBIDDEN: { status: 403 },
  CROSS_SITE_REQUEST: {
    status: 403,
    hint: "A request with the console's session cookie must come from the console's own pages.",
  },
  DUPLICATE_COOKIE: {
    status: 401,
    hint: "Clear this site's cookies in the browser and sign in again: another site under the same domain (or another path) set a cookie of the console's name.",
  },
  NOT_FOUND: { status: 404 },
  PROCESS_NOT_FOUND: { status: 404 },
  VERSION_NOT_FOUND: { status: 404 },
  INSTANCE_NOT_FOUND: { status: 404 },
  FILE_NOT_FOUND: { status: 404 },
  NO_MATCHING_SUBSCRIPTION: { status: 404 },
  NODE_NOT_WAITING: { status: 409 },
  TASK_CLAIMED: {
    status: 409,
    hint: 'Ask whoever claimed it to answer or unclaim it; a caller who may publish flows (WORKFLOW_PUBLISH) may take it over: `wfx task claim ID NODE --take-over`.',
  },
  INSTANCE_NOT_RUNNING: { status: 409 },
  INSTANCE_NOT_FAILED: {
    status: 409,
    hint: 'Only a failed execution is retried; `wfx instances replay ID --from NODE` runs any one again as a new execution.',
  },
  INSTANCE_NOT_ENDED: {
    status: 409,
    hint: '`wfx test record` writes an ended execution as a test: wait for it to end, or cancel it first.',
  },
  INSTANCE_IS_CHILD: { status: 409, hint: 'Retry or replay its top-level execution: a child is retried through it.' },
  NODE_NOT_FOUND: { status: 404 },
  NODE_NOT_REACHED: { status: 409, hint: 'Replay from a node the execution entered (its log lists them).' },
  REPLAY_VARIABLES_UNKNOWN: {
    status: 409,
    hint: "The execution's log grew too large to keep the variables at every node; replay from an earlier node.",
  },
  INSTANCE_NOT_MOVABLE: {
    status: 409,
    hint: 'Each problem (`details.problems` over HTTP) names a node it is at and why that node cannot go on in the target version (docs/flows.md, Moving executions): let it pass those nodes first, or move it to a version that keeps them.',
  },
  INSTANCE_MOVES_WITH_PARENT: {
    status: 409,
    hint: 'It runs a body of its parent (a loop iteration, an embedded subProcess): move the execution at the top of its tree, and it moves with it.',
  },
  PROCESS_NOT_PUBLISHED: { status: 409 },
  ALREADY_PROMOTED: {
    status: 409,
    hint: 'Both environments run the same version already: publish a new one to promote, or `wfx flow activate` another.',
  },
  PROCESS_ID_CONFLICT: { status: 409 },
  PROJECT_INVALID: {
    status: 400,
    hint: 'Nothing was changed. Each problem (`details.problems` over HTTP) names the file or wfx.yaml entry and what is wrong; fix them all and apply again.',
  },
  KEY_REVOKED: { status: 409, hint: 'A revoked key stays revoked; create a new one with `wfx keys create`.' },
  FLOW_INVALID: { status: 400, hint: 'Each problem names file:line:column; `wfx flow schema` prints the format.' },
  EXPRESSION_ERROR: { status: 400 },
  PAYLOAD_TOO_LARGE: { status: 413 },
  REQUEST_HEADERS_TOO_LARGE: { status: 431 },
  REQUEST_TIMEOUT: { status: 408 },
  EXPECTATION_FAILED: { status: 417 },
  RATE_LIMIT_EXCEEDED: { status: 429 },
  EXECUTION_LIMIT_EXCEEDED: {
    status: 429,
    hint: 'The organization runs as many executions as the daemon allows (--limit live-executions); let some finish or cancel them.',
  },
  ORG_RATE_EXCEEDED: {
    status: 429,
    hint: 'The organization starts as many executions a second as the daemon allows (--limit org-starts-per-second); retry after `retryAfter` seconds, or start fewer at once.',
  },
  BACKFILL_TOO_LARGE: {
    status: 400,
    hint: 'A backfill starts at most 1000 runs: backfill a shorter range at a time (`--from`, `--to`).',
  },
  CONCURRENCY_LIMIT_REACHED: {
    status: 409,
    hint: "The flow's concurrency limit is reached and its policy is cancel-new: start again once one ends, or choose policy queue.",
  },
  // Bulk operations (POST /process/bulk)
  BULK_NOT_FOUND: { status: 404 },
  BULK_NOT_RUNNING: { status: 409 },
  BULK_LIMIT_EXCEEDED: {
    status: 429,
    hint: 'As many bulk operations run as the daemon allows (--limit bulk-operations, bulk-operations-total); wait for one to finish or cancel it (`wfx instances bulk list`).',
  },
  BULK_TOO_LARGE: {
    status: 422,
    hint: 'The query selects more executions than one bulk operation may (--limit bulk-executions); narrow it (e.g. --started-before), or run it in parts.',
  },
  BULK_NO_LONGER_MATCHES: { status: 409 },
  // Webhook redelivery (POST /admin/webhooks/{name}/deliveries/{deliveryId}/redeliver)
  DELIVERY_NOT_REDELIVERABLE: {
    status: 409,
    hint: 'Only a verified delivery is redelivered: not one refused for its signature, size or as a duplicate (redeliver the delivery it repeats), nor one still being processed.',
  },
  DELIVERY_BODY_NOT_KEPT: {
    status: 410,
    hint: "The delivery log keeps the bodies of a registration's newest deliveries only (8 MiB of them); ask the provider to send the event again.",
  },
  INTERNAL_ERROR: { status: 500 },
  SERVICE_UNAVAILABLE: { status: 503, hint: 'The daemon is shutting down or its store failed; see its log.' },
  CONSOLE_NOT_BUILT: {
    status: 503,
    hint: 'The browser console is built with the rest of wfx: run `npm run build` (or `npm ci`) in the wfx checkout, then reload.',
  },
  TOO_MANY_CONNECTIONS: {
    status: 503,
    hint: 'The daemon serves as many connections as it may (--max-connections); try again shortly.',
  },

  // Data directory and store (they stop a daemon from starting; never sent over HTTP)
  DATA_DIR_LOCKED: {
    status: 500,
    hint: 'Another wfx daemon uses this data directory. Stop it with `wfx daemon stop`, or pass another --data-dir.',
  },
  DATA_DIR_INVALID: { status: 500, hint: 'Check the path and its permissions.' },
  JOURNAL_CORRUPT: {
    status: 500,
    hint: 'Acknowledged records are damaged; wfx will not start and drop them. Restore the data directory from a backup, or move the named file aside knowing what it held is lost.',
  },
  SNAPSHOT_CORRUPT: {
    status: 500,
    hint: 'The snapshot does not parse or does not match its checksum. Restore the data directory from a backup.',
  },
  DATA_DIR_DAMAGED: {
    status: 500,
    hint: 'A file the data directory should hold is missing, or its manifest is damaged or missing; `wfx daemon check` lists every problem. Restore the data directory from a backup.',
  },
  STORE_FAILED: {
    status: 503,
    hint: 'A write to disk or to the database failed (disk full, I/O error, the database gone). The daemon stops accepting writes; fix the cause and restart it.',
  },
  STORE_CLOSED: { status: 503 },
  STORE_LEASE_LOST: {
    status: 503,
    hint: 'Another daemon took over this database (this one could not renew its lease in time). This daemon stands by again; the other one serves its state.',
  },
  DAEMON_STANDBY: {
    status: 503,
    hint: 'This daemon stands by for a database another daemon serves, or waits for the database to come back. Send the request to the daemon that serves (`wfx daemon status` there says which), or try again after Retry-After.',
  },
  PARTITION_MOVING: {
    status: 503,
    hint: 'The execution is moving to another daemon of the database (or no daemon holds it right now); try again after Retry-After.',
  },
  DAEMON_REJOINING: {
    status: 503,
    hint: 'This daemon restarts on its database to take the partitions its departed holder left (its log says which); try again after Retry-After.',
  },
  DATABASE_UNREACHABLE: {
    status: 500,
    hint: 'Check the --store connection string, that PostgreSQL is running and that this host may connect to it.',
  },
  DATABASE_TOO_NEW: {
    status: 500,
    hint: "A newer wfx migrated this database's schema. Run that version of wfx, or a newer one.",
  },
  DATABASE_IN_USE: {
    status: 500,
    hint: 'Another wfx daemon serves this database. Stop it, or start this one with --standby to take over when it stops.',
  },
  // Secrets at rest (src/daemon/secrets): a start refused, or a use of a secret that cannot be opened
  SECRETS_KEY_MISSING: {
    status: 500,
    hint: 'Stored secrets are encrypted with a key this daemon was not given (its id is named): put the key file back (<data-dir>/secrets.key, --secrets-key-file or WFX_SECRETS_KEY); docs/operations.md, Secrets.',
  },
  SECRETS_KEY_INVALID: {
    status: 500,
    hint: 'The secrets key file (or WFX_SECRETS_KEY) holds one key a line, each 32 bytes in base64; lines starting with # are comments. Fix the line named, or restore the file.',
  },
  SECRET_UNREADABLE: {
    status: 500,
    hint: 'A stored secret fails its integrity check: it was changed on disk or moved from another record. Set it again (the API key, password or signing secret).',
  },
  HISTORY_DAMAGED: {
    status: 500,
    hint: 'The execution finished, but its history record is damaged on disk (see `wfx daemon status`). Restore the named history file from a backup.',
  },
  EXECUTION_SEGMENT_DAMAGED: {
    status: 500,
    hint: 'An execution segment or its index is damaged on disk (see `wfx daemon check`). Restore the data directory from a backup.',
  },

  // Backups (POST /admin/backup, `wfx daemon backup`)
  BACKUP_TARGET_NOT_EMPTY: { status: 409, hint: 'Name a directory that does not exist yet, or an empty one.' },
  BACKUP_TARGET_INVALID: {
    status: 400,
    hint: "Name an absolute path on the daemon's host, outside its data directory, where the daemon may create a directory.",
  },
  BACKUP_FAILED: {
    status: 500,
    hint: 'A read or write failed during the copy (disk full, say); nothing partial is left. See the daemon log.',
  },

  // Model providers (POST /admin/ai-providers/{name}/test, `wfx ai providers test`)
  AI_PROVIDER_TEST_FAILED: {
    status: 502,
    hint: 'The message starts with the node failure code (docs/flows.md): check the base URL, model and key with `wfx ai providers get`, or the model file.',
  },

  // Domains and jobs (the jobs API, `wfx domains`, `wfx worker run`)
  DOMAIN_NOT_FOUND: { status: 404, hint: 'Register it with `wfx domains register NAME --file domain.yaml`.' },
  DOMAIN_IN_USE: {
    status: 409,
    hint: 'Jobs of it (or of the actions left out) still wait; let them finish, or cancel their executions, first.',
  },
  JOB_NOT_FOUND: { status: 404 },
  JOB_LOCK_LOST: {
    status: 409,
    hint: "The job's lock lapsed (heartbeat sooner, or ask for a longer lockDuration) or another worker holds it: drop the result.",
  },
  JOB_OUTPUT_INVALID: { status: 422 },

  // CLI
  USAGE_ERROR: { status: 400, hint: 'See `wfx --help`.' },
  FILE_EXISTS: { status: 409, hint: 'Pick another name (or --dir), or remove the file first.' },
  AMBIGUOUS_ID: { status: 400, hint: 'Give more of the id: enough to name one of those listed.' },
  DAEMON_UNREACHABLE: {
    status: 503,
    hint: 'Start one with `wfx daemon start`, or point --url / WFX_URL at a running daemon.',
  },
  DAEMON_NOT_RUNNING: { status: 503, hint: 'Start one with `wfx daemon start`.' },
  DAEMON_START_FAILED: { status: 500, hint: 'Read the daemon log named above.' },
  WEBHOOK_NOTHING_STARTED: {
    status: 422,
    hint: "The reason is the delivery log's (`wfx webhooks deliveries NAME`); --replay sends the payload as it is.",
  },
  WEBHOOK_NOT_PROCESSED: { status: 504 },

  // Listening at start (never sent over HTTP)
  PORT_IN_USE: {
    status: 500,
    hint: 'Stop what holds the port (named above when known), or pass another --port (0 picks a free one).',
  },
  LISTEN_FAILED: {
    status: 500,
    hint: 'Pass a --host that is an address of this machine (127.0.0.1 by default), and a --port from 1024 up unless privileged.',
  },
} as const satisfies Record<string, ErrorDef>;

/** Every stable error code. */
export type ErrorCode = keyof typeof ERROR_CODES;

/** Whether `code` is one of ours (an answer read from another daemon, say). */
export function isErrorCode(code: string): code is ErrorCode {
  return Object.hasOwn(ERROR_CODES, code);
}

/**
 * An expected failure with a stable code. `details` is safe to show to the caller (never
 * secrets, never stacks); `cause` is for logs only.
 */
export class WfxError extends Error {
  readonly code: ErrorCode;
  readonly details?: unknown;
  private readonly statusOverride?: number;

  /**
   * `status` overrides the code's usual HTTP status where the contract gives one code two
   * statuses (VALIDATION_ERROR: 400 for a malformed request, 422 for task data that does not
   * fit the node).
   */
  constructor(code: ErrorCode, message: string, options: { details?: unknown; cause?: unknown; status?: number } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'WfxError';
    this.code = code;
    if (options.details !== undefined) this.details = options.details;
    if (options.status !== undefined) this.statusOverride = options.status;
  }

  /** HTTP status of this error. */
  get status(): number {
    return this.statusOverride ?? ERROR_CODES[this.code].status;
  }

  /** A hint for people on what to do next, if the catalogue has one. */
  get hint(): string | undefined {
    const def: ErrorDef = ERROR_CODES[this.code];
    return def.hint;
  }
}

/** True when `err` is a WfxError, optionally with the given code. */
export function isWfxError(err: unknown, code?: ErrorCode): err is WfxError {
  return err instanceof WfxError && (code === undefined || err.code === code);
}

/**
 * A thrown value's message for a log line, a failure or an answer: an Error's message (its
 * name when the message is empty, as an AggregateError's is), anything else as a string.
 * Pure; never throws.
 */
export function errorMessage(err: unknown): string {
  if (err instanceof Error) return err.message || err.name;
  return String(err);
}
