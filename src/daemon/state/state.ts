import type { MemoryStore } from './memory.js';
import type { StoredFile } from './stored-file.js';
import type { BufferedMessage, PendingThrow } from './events.js';

export type { StoredFile, BufferedMessage, PendingThrow };
import type { ExecutionTable } from './execution-table.js';
import type { ColdSubscriptions, SubscriptionBucket } from './subscriptions.js';
import type { JobQueues } from './job-queues.js';
import type { ConcurrencySlots } from './concurrency-slots.js';
import type { LiveCounts } from './live-counts.js';
import type { ColdTasks, TaskIndex } from './task-index.js';
import type { FileRefs } from './file-refs.js';
import type { Execution } from './execution-document.js';
import type { BulkOperation } from './bulk.js';

export type { Execution, LiveAgentState, LogLine, NodeInstance, TriggeredBy } from './execution-document.js';
import type { AuditEntry, DeliveryRecord, EndpointEnvironment, Environment } from '../../shared/api/index.js';
import type { AiProvider, ApiKey, EmailConnection, Flow, Organization, WebhookRegistration } from './catalogue.js';

// The wire's constants and types, defined in shared/api; re-exported for the daemon's modules.
export { ENVIRONMENTS, ROLE_PERMISSIONS, STATE, STATUS } from '../../shared/api/index.js';
export type {
  AgentCall,
  AgentMessage,
  AgentState,
  AgentToolCall,
  ApiKeyStatus,
  DeliveryRecord,
  EndpointEnvironment,
  Environment,
  ExecutionError,
  JobLock,
  JobWait,
  LogEntry,
  LoopState,
  Permission,
  Role,
  StateCd,
  StatusCd,
  Wait,
} from '../../shared/api/index.js';
// The catalogue's entries (catalogue.ts), where the daemon's modules have always found them.
export { AI_PROVIDER_KINDS } from './catalogue.js';
export type {
  AiProvider,
  AiProviderKind,
  ApiKey,
  EmailConnection,
  Flow,
  FlowVersion,
  FromSecret,
  Organization,
  WebhookEndpoint,
  WebhookRegistration,
  WebhookSecret,
} from './catalogue.js';

/** A flow secret's value, sealed, and when it was set. */
export interface FlowSecret {
  readonly value: string;
  readonly updatedAt: string;
}

/**
 * The daemon's live state: what the snapshot holds and the journal's records change. Plain
 * JSON (it is serialized as is). Finished executions do not live here (see store/history.ts).
 * Later capabilities (flows, executions, triggers) add their collections here and their records
 * to a family of records/ (joined in records.ts).
 */
export interface WfxState {
  /** Organizations by name. */
  organizations: Record<string, Organization>;
  /** API keys by keyId. */
  apiKeys: Record<string, ApiKey>;
  /** Published flows by processId. */
  flows: Record<string, Flow>;
  /**
   * Live executions (running, or finished and not yet moved to history) by id. An archived one
   * leaves `undefined` behind (a tombstone, see ExecutionTable): skip those when listing.
   * Changed only through `ExecutionTable.of(state)` (`put`, `archive`), which keeps its list of
   * keys: a key assigned any other way would be missing from snapshots.
   */
  instances: Record<string, Execution | undefined>;
  /**
   * The table that indexes `instances` (execution-table.ts), made on first use by
   * `ExecutionTable.of(state)`. Derived, so never written to a snapshot (DERIVED) nor to JSON.
   */
  instanceTable?: ExecutionTable<Execution> | undefined;
  /**
   * How many executions have been started under each root in all (the tree-created limit,
   * engine/limits.ts), by the root's id: children, loop iterations, agent tools and called
   * executions, however many have ended since. Counted by the reducer as each starts, and
   * forgotten once none of the tree runs (a tree with nothing running starts nothing): the step
   * that ends the last writes `tree.ended`. A root that never started an execution has no entry.
   */
  treeCreated: Record<string, number>;
  /**
   * Waiting catch events, by bucket (see subscriptionBucket: a message's bucket holds its
   * correlation key, so delivering one is a lookup, not a scan). Derived by the reducer from
   * node waits (and rebuilt from them at recovery: Engine.recover with indexEventWait), so never
   * written to a snapshot (DERIVED). See SubscriptionBucket for what a bucket holds.
   */
  subscriptions: Record<string, SubscriptionBucket>;
  /**
   * The subscriptions of the executions not in memory (at-rest/execution-cache.ts: its directory
   * answers for them; `subscriptions` holds only the resident ones'). Derived (DERIVED).
   */
  coldSubscriptions?: ColdSubscriptions | undefined;
  /** Messages kept (ttlSeconds) until a subscription consumes them, by id, oldest first. */
  messages: Record<string, BufferedMessage>;
  /** `organization|messageId` -> expiry of the dedup window. */
  messageIds: Record<string, string>;
  /**
   * Events executions threw that the other daemons sharing the database have not all been
   * given yet, by id (cluster/thrown-outbox.ts): given again after a crash. Empty on a daemon
   * that shares nothing.
   */
  thrown: Record<string, PendingThrow>;
  /**
   * Bulk operations by id (state/bulk.ts): running ones, and finished ones kept for their
   * results (engine/bulk/retention.ts). Part of the commons: any daemon's chunk advances them.
   */
  bulks: Record<string, BulkOperation>;
  /** `{env.NAME}` values by organization, then environment. */
  environments: Record<string, Partial<Record<Environment, Record<string, string>>>>;
  /** `{secret.NAME}` values by organization, then environment, then name: sealed (state/secret-fields.ts). */
  flowSecrets: Record<string, Partial<Record<Environment, Record<string, FlowSecret>>>>;
  /** Webhook registrations by webhookId. */
  webhooks: Record<string, WebhookRegistration>;
  /** SHA-256 of an endpoint token -> its registration and environment (derived by the reducer). */
  webhookTokens: Record<string, { readonly webhookId: string; readonly environment: EndpointEnvironment }>;
  /** Deliveries received (journaled) and not processed yet: recovery processes them. */
  pendingDeliveries: Record<string, PendingDelivery>;
  /** The last deliveries of each registration, newest last (WEBHOOK_LOG_SIZE, WEBHOOK_LOG_BYTES). */
  webhookDeliveries: Record<string, DeliveryRecord[]>;
  /** How many deliveries each registration refused as they arrived, in all (the log keeps the last). */
  webhookRefused: Record<string, number>;
  /**
   * Provider event ids and body hashes seen per registration, each remembered until its replay
   * window ends (SeenIds): idempotency. A snapshot of an earlier version holds a plain list of
   * ids here; the reducer converts it at the registration's next delivery (`seenIdsOf`).
   */
  webhookEventIds: Record<string, SeenIds | string[]>;
  /** IMAP connections (for email triggers) by connectionId. */
  emailConnections: Record<string, EmailConnection>;
  /**
   * Schedule triggers by key (`processId|environment|index|cron|timezone`): `at`, the instant
   * up to which fire times are dealt with (fired, skipped, or before the schedule was armed),
   * and the last instant it actually fired. Written with the executions a fire starts, so a
   * restart neither repeats a fire nor loses one.
   */
  scheduleFires: Record<string, ScheduleFires>;
  /**
   * Starts a webhook or email trigger's `debounce` holds back, by trigger and key value
   * (triggers/start-pacing.ts): the latest event's start, and when it is due. Written with the
   * delivery that holds it back, removed with the start it makes: a restart loses none.
   */
  debounced: Record<string, DebouncedStart>;
  /** Message-IDs of emails already processed, per connection, oldest first (EMAIL_SEEN_IDS kept): once per Message-ID. */
  emailSeen: Record<string, string[]>;
  /** Model providers (aiTask, callAgent) by providerId. */
  aiProviders: Record<string, AiProvider>;
  /** The key new secrets are sealed with (secrets/secret-box.ts): set at the first, changed by a rotation. */
  secretsKey: string | null;
  /** Secrets were sealed again and no checkpoint has removed their old forms from the journal since. */
  secretsResealed?: true;
  /** Durable memory (memoryAction, aiTask's `memory:`): organization -> namespace -> key -> entry. */
  memory: MemoryStore;
  /**
   * The file store's metadata by fileId (files/file-store.ts); the content is a blob under
   * `<data-dir>/files/`, named by its SHA-256 and written before the record that names it.
   */
  files: Record<string, StoredFile>;
  /** Domains (domainTask, the jobs API): organization -> name -> domain. */
  domains: Record<string, Record<string, Domain>>;
  /** Audit records a daemon before the trail's own files kept here, by id: moved to the trail at start (store/audit-sweep.ts), so empty. */
  audit: Record<string, AuditEntry>;
  /**
   * The waiting jobs by organization, domain and action (state/job-queues.ts), made from the job
   * waits by the recovery walk (engine/recovery.ts), else on first use by `JobQueues.of(state)`.
   * Derived, so never written to a snapshot (DERIVED).
   */
  jobQueues?: JobQueues | undefined;
  /**
   * The slots of flows' concurrency limits: who holds one, who is queued (concurrency-slots.ts),
   * made by the recovery walk, else on first use. Derived, so never written to a snapshot (DERIVED).
   */
  concurrencySlots?: ConcurrencySlots | undefined;
  /**
   * Running executions per organization, tree, parent and flow (live-counts.ts), made by the
   * recovery walk (engine/recovery.ts), else on first use by `LiveCounts.of(state)`. Derived,
   * so never written to a snapshot (DERIVED).
   */
  liveCounts?: LiveCounts | undefined;
  /**
   * The waiting input nodes and user tasks of running executions (task-index.ts), made by the
   * recovery walk or on first use by `TaskIndex.of(state)`. Derived, so never written to a snapshot (DERIVED).
   */
  taskIndex?: TaskIndex | undefined;
  /**
   * The tasks of the executions not in memory (at-rest/execution-cache.ts: its directory answers
   * for them; `taskIndex` holds only the resident ones'). Derived (DERIVED).
   */
  coldTasks?: ColdTasks | undefined;
  /**
   * The fileIds each live execution may name (file-refs.ts), made by the recovery walk of an
   * engine with a cold side, kept by the reducer: what the file store's collection knows of a
   * cold execution. Derived, so never written to a snapshot (DERIVED).
   */
  fileRefs?: FileRefs | undefined;
}

/** What is kept of one schedule trigger (WfxState.scheduleFires). */
export interface ScheduleFires {
  readonly at: string;
  readonly lastFire: string | null;
  readonly inactive?: boolean;
  /**
   * Under an `overlap` other than `allow`: the executions its latest fires started (those still
   * running hold back the next fire), and the fire times waiting their turn (a buffered fire, a
   * backfill), oldest first (triggers/schedule-overlap.ts). Absent: none.
   */
  readonly runs?: readonly string[];
  readonly pending?: readonly string[];
}

/** A start a trigger's `debounce` holds back (WfxState.debounced). */
export interface DebouncedStart {
  readonly organization: string;
  readonly processId: string;
  readonly environment: Environment;
  readonly data: Record<string, unknown>;
  /** When it starts, unless a later event of the burst moves it on. */
  readonly due: string;
}

/** Message-IDs remembered per email connection. */
export const EMAIL_SEEN_IDS = 5000;

// Webhook deliveries: the replay window (seen-ids.ts) and the delivery log (webhook-log.ts).
export { DEFAULT_REPLAY_WINDOW_MS, WEBHOOK_SEEN_IDS_MAX, type SeenIds } from './seen-ids.js';
export { WEBHOOK_LOG_BYTES, WEBHOOK_LOG_SIZE } from './webhook-log.js';
import type { SeenIds } from './seen-ids.js';

/** A delivery as received, journaled before it is acknowledged. */
export interface PendingDelivery {
  readonly deliveryId: string;
  readonly webhookId: string;
  readonly environment: EndpointEnvironment;
  readonly receivedAt: string;
  readonly headers: Record<string, string>;
  /** The raw body, base64. */
  readonly body: string;
  /** A redelivery (POST .../redeliver): the delivery whose kept payload this is; verified when that one arrived. */
  readonly redeliveryOf?: string;
  /** A redelivery's actor. */
  readonly by?: string;
}

/**
 * Top-level keys of the state derived from the rest (StoreOptions.derived): left out of
 * snapshots and rebuilt after a start. The subscription index comes from the waiting nodes
 * (Engine.recover with indexEventWait): large, and a checkpoint would copy it at once when its
 * copy began. The instance table indexes `instances` again on first use (ExecutionTable.of).
 */
export const DERIVED = [
  'subscriptions',
  'coldSubscriptions',
  'instanceTable',
  'jobQueues',
  'concurrencySlots',
  'liveCounts',
  'taskIndex',
  'coldTasks',
  'fileRefs',
] as const;

/**
 * Derived keys the engine makes once, which a partition taken or given up while running leaves
 * as they are (PartitionLayout.keptOnMoves): the hooks of its cache of executions, and the file
 * index (which forgets and learns the executions that move).
 */
export const KEPT_ON_MOVES = ['coldSubscriptions', 'coldTasks', 'fileRefs'] as const;

/** `T` with its readonly fields writable: for code that builds or shares a state object's fields in place. */
export type Writable<T> = { -readonly [K in keyof T]: T[K] };

/** The state of an empty data directory. */
export function initialState(): WfxState {
  return {
    organizations: {},
    apiKeys: {},
    flows: {},
    instances: {},
    instanceTable: undefined,
    treeCreated: {},
    subscriptions: {},
    coldSubscriptions: undefined,
    messages: {},
    messageIds: {},
    thrown: {},
    bulks: {},
    environments: {},
    flowSecrets: {},
    webhooks: {},
    webhookTokens: {},
    pendingDeliveries: {},
    webhookDeliveries: {},
    webhookRefused: {},
    webhookEventIds: {},
    emailConnections: {},
    scheduleFires: {},
    debounced: {},
    emailSeen: {},
    aiProviders: {},
    secretsKey: null,
    memory: {},
    files: {},
    domains: {},
    audit: {},
    jobQueues: undefined,
    concurrencySlots: undefined,
    liveCounts: undefined,
    taskIndex: undefined,
    coldTasks: undefined,
    fileRefs: undefined,
  };
}

/**
 * A domain: what external workers do for domainTasks, registered per organization. Each
 * action's schemas are JSON Schemas, checked to compile when registered (input: an object;
 * output: any value when absent).
 */
export interface Domain {
  readonly name: string;
  readonly organization: string;
  readonly description: string | null;
  readonly actions: Readonly<Record<string, DomainAction>>;
  readonly createdAt: string;
  readonly updatedAt: string;
}

/** One action of a domain. */
export interface DomainAction {
  readonly description: string | null;
  /** A JSON Schema of the job's input (an object). */
  readonly input: Record<string, unknown>;
  /** A JSON Schema of the worker's output (`{}`: any value). */
  readonly output: Record<string, unknown>;
}
