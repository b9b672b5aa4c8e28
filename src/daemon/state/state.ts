import { extensibleCopy } from '../../shared/json-object.js';
import { ENVIRONMENTS, ROLE_PERMISSIONS, STATE, STATUS } from '../../shared/api/index.js';
import type { ApiKeyStatus, EndpointEnvironment, Environment, InstanceError, LogEntry, LoopState, Permission, Role, StateCd, StatusCd, Wait } from '../../shared/api/index.js';

// The wire's constants and types, defined in shared/api; re-exported for the daemon's modules.
export { ENVIRONMENTS, ROLE_PERMISSIONS, STATE, STATUS };
export type { ApiKeyStatus, EndpointEnvironment, Environment, InstanceError, LogEntry, LoopState, Permission, Role, StateCd, StatusCd, Wait };

/**
 * The daemon's live state: what the snapshot holds and the journal's records change. Plain
 * JSON (it is serialized as is). Finished executions do not live here (see store/history.ts).
 * Later capabilities (flows, executions, triggers) add their collections here and their records
 * to records.ts.
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
   * leaves `undefined` behind (a tombstone, see `archiveInstance`): skip those when listing.
   * Changed only through `putInstance` and `archiveInstance`, which keep its list of keys
   * (`instanceIds`): a key assigned any other way would be missing from snapshots.
   */
  instances: Record<string, Instance | undefined>;
  /**
   * Waiting catch events, by bucket (see subscriptionBucket: a message's bucket holds its
   * correlation key, so delivering one is a lookup, not a scan). Derived by the reducer from
   * node waits (and rebuilt from them at recovery: Engine.recover with indexEventWait), so never
   * written to a snapshot (DERIVED). See SubscriptionBucket for what a bucket holds.
   */
  subscriptions: Record<string, SubscriptionBucket>;
  /** Messages kept (ttlSeconds) until a subscription consumes them, by id, oldest first. */
  messages: Record<string, BufferedMessage>;
  /** `organization|messageId` -> expiry of the dedup window. */
  messageIds: Record<string, string>;
  /** `{env.NAME}` values by organization, then environment. */
  environments: Record<string, Partial<Record<Environment, Record<string, string>>>>;
  /** Webhook registrations by webhookId. */
  webhooks: Record<string, WebhookRegistration>;
  /** SHA-256 of an endpoint token -> its registration and environment (derived by the reducer). */
  webhookTokens: Record<string, { readonly webhookId: string; readonly environment: EndpointEnvironment }>;
  /** Deliveries received (journaled) and not processed yet: recovery processes them. */
  pendingDeliveries: Record<string, PendingDelivery>;
  /** The last deliveries of each registration, newest last (WEBHOOK_LOG_SIZE). */
  webhookDeliveries: Record<string, DeliveryRecord[]>;
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
  scheduleFires: Record<string, { readonly at: string; readonly lastFire: string | null; readonly inactive?: boolean }>;
  /** Message-IDs of emails already processed, per connection, oldest first (EMAIL_SEEN_IDS kept): once per Message-ID. */
  emailSeen: Record<string, string[]>;
}

/** Message-IDs remembered per email connection. */
export const EMAIL_SEEN_IDS = 5000;

/** An IMAP mailbox the email trigger watches. The password is kept for the daemon's use, never returned. */
export interface EmailConnection {
  readonly connectionId: string;
  readonly name: string;
  readonly organization: string;
  readonly host: string;
  readonly port: number;
  readonly security: 'TLS' | 'STARTTLS' | 'NONE';
  readonly user: string;
  readonly password: string;
  readonly mailbox: string;
  readonly createdAt: string;
  readonly updatedAt: string;
}

/** Deliveries kept in a registration's log. */
export const WEBHOOK_LOG_SIZE = 100;
/** A delivery's ids are remembered this long by default: longer than any provider retries (GitHub, Stripe: 3 days). */
export const DEFAULT_REPLAY_WINDOW_MS = 72 * 60 * 60 * 1000;
/**
 * Ids remembered per registration at most, whatever the window: a flood of deliveries cannot
 * grow memory without bound; past it the oldest are forgotten first (the receiver warns).
 */
export const WEBHOOK_SEEN_IDS_MAX = 200_000;

/**
 * The ids (event ids, body hashes) a registration's deliveries carried, each with the instant
 * until which it is remembered. `until` is the lookup (O(1)); `order` lists the same entries in
 * the order remembered, oldest first, from `head` on, so expiry and the cap drop from the front
 * without scanning. An entry of `order` whose time differs from `until[id]` is stale (the id
 * was remembered again later) and drops nothing.
 */
export interface SeenIds {
  /** id -> ISO instant until which a delivery carrying it is a duplicate. */
  readonly until: Record<string, string>;
  /** [id, until] in the order remembered; entries before `head` are gone. */
  order: Array<[string, string]>;
  head: number;
}

/** A signing secret; a rotated-out one keeps working until `expiresAt`. */
export interface WebhookSecret {
  readonly secret: string;
  readonly expiresAt: string | null;
}

export interface WebhookEndpoint {
  readonly environment: EndpointEnvironment;
  readonly token: string;
  readonly secrets: readonly WebhookSecret[];
}

export interface WebhookRegistration {
  readonly webhookId: string;
  readonly name: string;
  readonly organization: string;
  readonly provider: import('../../shared/webhooks/providers.js').Provider;
  readonly environmentMode: 'SHARED' | 'PER_ENVIRONMENT';
  readonly authType: 'HMAC' | 'NONE';
  readonly custom: import('../../shared/webhooks/providers.js').CustomScheme | null;
  endpoints: WebhookEndpoint[];
  readonly createdAt: string;
  updatedAt: string;
}

/** A delivery as received, journaled before it is acknowledged. */
export interface PendingDelivery {
  readonly deliveryId: string;
  readonly webhookId: string;
  readonly environment: EndpointEnvironment;
  readonly receivedAt: string;
  readonly headers: Record<string, string>;
  /** The raw body, base64. */
  readonly body: string;
}

/** What happened to one delivery: what a developer reads when a delivery "did nothing". */
export interface DeliveryRecord {
  readonly deliveryId: string;
  readonly receivedAt: string;
  readonly environment: EndpointEnvironment;
  readonly eventType: string | null;
  readonly eventId: string | null;
  /**
   * For providers that sign the body alone with no timestamp (GitHub): a hash of the body,
   * remembered like an event id, so a captured delivery replayed with a new (unsigned) delivery
   * id is still a duplicate.
   */
  readonly bodyHash?: string;
  readonly signatureOk: boolean;
  /** Why nothing started (bad signature, duplicate, no trigger matched), if so. */
  readonly reason: string | null;
  readonly startedInstanceIds: readonly string[];
}

/** A flow and its versions. Versions are immutable once published. */
export interface Flow {
  readonly processId: string;
  /** The organization that first published this processId owns it. */
  readonly organization: string;
  name: string;
  public: boolean;
  versions: Record<string, FlowVersion>;
  /** The version each environment runs. */
  active: Partial<Record<Environment, string>>;
}

export interface FlowVersion {
  readonly version: string;
  /** The flow definition as published (validated). */
  readonly definition: import('../../shared/flow/types.js').FlowDefinition;
  /** SHA-256 of the canonical JSON of the definition: republishing it gives this version back. */
  readonly hash: string;
  readonly publishedAt: string;
}

/** One execution of a flow version. */
export interface Instance {
  readonly processInstanceId: string;
  readonly processId: string;
  readonly processName: string;
  readonly processVersion: string;
  readonly organization: string;
  readonly environment: Environment;
  readonly correlationKey: string | null;
  readonly parentInstanceId: string | null;
  /** The parent's node instance (subProcess, loopNode) that waits for this child; absent on a top-level execution. */
  readonly parentNodeInstanceId?: string;
  /**
   * For a child running a body of its flow (an embedded subProcess, a loop iteration): the
   * path of container node ids to that body (see nodesAt). Absent: the flow's own nodes.
   */
  readonly scope?: readonly string[];
  /** A loop iteration's 0-based index. */
  readonly iteration?: number;
  /** How many callProcess starts led to this execution (bounded: a flow calling itself fails). */
  readonly callDepth?: number;
  stateCd: StateCd;
  readonly startTime: string;
  endTime: string | null;
  variables: Record<string, unknown>;
  output: Record<string, unknown> | null;
  error: InstanceError | null;
  /** Node instances by id (`n1`, `n2`, ...), in creation order. */
  nodes: Record<string, NodeInstance>;
  /** Number of node instances created so far: the next id is `n${nodeCount + 1}`. */
  nodeCount: number;
  /** Tokens waiting at converging gateways: gateway node id -> incoming edge key -> count. */
  joins: Record<string, Record<string, number>>;
  /** Execution log, in order (compact: see LogLine; read it with logEntry); an entry's SSE id is its index + 1. */
  logs: LogLine[];
}

export interface NodeInstance {
  readonly id: string;
  readonly nodeId: string;
  readonly nodeName: string;
  readonly nodeType: string;
  statusCd: StatusCd;
  readonly startTime: string;
  endTime: string | null;
  /** What a waiting node waits for (statusCd 1); null otherwise. */
  wait: Wait | null;
  /** Child executions this node started (subProcess, loopNode), oldest first. */
  children?: string[];
  /** Non-interrupting boundary events of this node that fired already (each fires once). */
  fired?: string[];
}

/**
 * The bucket of a subscription: message subscriptions by organization, ref and correlation
 * key; signal subscriptions by organization and ref (a signal matches any key). An event
 * resumes the subscriptions of both buckets for its key.
 */
export function subscriptionBucket(organization: string, messageRef: string, kind: 'message' | 'signal', correlationKey: string | null): string {
  return kind === 'signal' ? `${organization}|${messageRef}|s` : `${organization}|${messageRef}|m|${correlationKey === null ? '\u0000' : correlationKey}`;
}

/**
 * The subscriptions an event of `eventType` with `correlationKey` resumes in `organization`:
 * message subscriptions with the same key, and signal subscriptions whatever their key. Pure read.
 */
export function subscriptionsFor(state: WfxState, organization: string, eventType: string, correlationKey: string | null): Subscription[] {
  const messages = state.subscriptions[subscriptionBucket(organization, eventType, 'message', correlationKey)];
  const signals = state.subscriptions[subscriptionBucket(organization, eventType, 'signal', null)];
  if (signals === undefined) return bucketMembers(messages);
  return messages === undefined ? bucketMembers(signals) : [...bucketMembers(messages), ...bucketMembers(signals)];
}

/** The subscriptions of a bucket, in the order they were made. */
export function bucketMembers(bucket: SubscriptionBucket | undefined): Subscription[] {
  if (bucket === undefined) return [];
  return bucket instanceof Map ? [...bucket.values()] : [bucket];
}

/**
 * A node waiting on an event, as the subscription index holds it. The event type, ref and
 * correlation key are its bucket's, the rest of the wait is the node's (`wait`).
 */
export interface Subscription {
  readonly instanceId: string;
  readonly nodeInstanceId: string;
  readonly nodeId: string;
}

/**
 * A bucket of the subscription index: its one subscription (the usual case: a message under a
 * correlation key of its own), or, once a second node waits in it, all of them by
 * `instanceId|nodeInstanceId`. One subscription as the bucket itself takes ~50 bytes where a
 * dictionary of one, its key string and a seven-field subscription took ~260 (the bucket's own
 * key and entry come on top either way): an execution waiting for a message held 2,030 bytes of
 * heap against 1,677 for one waiting for input, now 1,815 (docs/performance.md).
 */
export type SubscriptionBucket = Subscription | Map<string, Subscription>;

export interface BufferedMessage {
  readonly id: string;
  readonly organization: string;
  readonly eventType: string;
  readonly correlationKey: string | null;
  readonly data: Record<string, unknown>;
  readonly messageId: string | null;
  readonly receivedAt: string;
  readonly expiresAt: string;
}

/**
 * An execution log line as kept. Most lines are one string, `"<node instance> <level> <ms>
 * <message>"` (`"n3 INFO 0 waiting for input"`): the node named by its node instance (empty: the
 * execution itself; a node instance id never holds a space) and the time as milliseconds after
 * the execution's start, so no line repeats the node's id, name and type or a timestamp string.
 * One string takes half the memory of a four-element array and parses faster from the snapshot:
 * a waiting execution's log was 40 % of its memory (docs/performance.md). A line with a copy of
 * the variables is `[nodeInstanceId, level, message, ms, variables]`; a line that names a node
 * without an instance (a warning while resolving) is kept whole. Arrays whose time is an ISO
 * string, and arrays without variables, are older forms still read. Read with logEntry().
 */
export type LogLine = LogEntry | string | readonly [string, LogEntry['level'], string, number | string, Record<string, unknown>?];

/** The packed form of a log line without variables (see LogLine). */
export function packedLogLine(nodeInstanceId: string, level: LogEntry['level'], ms: number, message: string): string {
  return `${nodeInstanceId} ${level} ${ms} ${message}`;
}

/** Milliseconds since the epoch of an ISO instant; the last two asked are remembered (a step asks for the same few again and again). */
export function isoMs(iso: string): number {
  if (iso === lastIso[0]) return lastMs[0]!;
  if (iso === lastIso[1]) return lastMs[1]!;
  const ms = Date.parse(iso);
  lastIso[1] = lastIso[0]!;
  lastMs[1] = lastMs[0]!;
  lastIso[0] = iso;
  lastMs[0] = ms;
  return ms;
}
const lastIso: string[] = ['', ''];
const lastMs: number[] = [0, 0];

/** A log line with the seed's fields. */
export function logEntry(inst: Pick<Instance, 'nodes' | 'processName' | 'startTime'>, line: LogLine): LogEntry {
  if (typeof line === 'string') {
    const a = line.indexOf(' ');
    const b = line.indexOf(' ', a + 1);
    const c = line.indexOf(' ', b + 1);
    return entryOf(inst, line.slice(0, a), line.slice(a + 1, b) as LogEntry['level'], line.slice(c + 1), Number(line.slice(b + 1, c)), undefined);
  }
  if (!Array.isArray(line)) return line as LogEntry;
  const [at, level, message, time, variables] = line as readonly [string, LogEntry['level'], string, number | string, Record<string, unknown>?];
  return entryOf(inst, at, level, message, time, variables);
}

/** The seed's fields of a log line's parts: the node looked up by its instance, the time made an ISO instant. */
function entryOf(
  inst: Pick<Instance, 'nodes' | 'processName' | 'startTime'>,
  at: string,
  level: LogEntry['level'],
  message: string,
  time: number | string,
  variables: Record<string, unknown> | undefined,
): LogEntry {
  const node = at === '' ? undefined : inst.nodes[at];
  const timestamp = typeof time === 'string' ? time : new Date(isoMs(inst.startTime) + time).toISOString();
  // Literals without a spread: one that starts with a spread takes ~1 µs per field after it
  // (see extensibleCopy), and a log can be thousands of lines.
  const nodeId = node ? node.nodeId : '';
  const nodeName = node ? node.nodeName : inst.processName;
  const nodeType = node ? node.nodeType : 'process';
  return variables === undefined ? { nodeId, nodeName, nodeType, message, level, timestamp } : { nodeId, nodeName, nodeType, message, level, timestamp, variables };
}

/** Every log line of an execution with the seed's fields. */
export function logEntries(inst: Pick<Instance, 'nodes' | 'processName' | 'startTime' | 'logs'>): LogEntry[] {
  return inst.logs.map((line) => logEntry(inst, line));
}

export interface Organization {
  readonly name: string;
  readonly createdAt: string;
}

/** An API key as stored: the secret only as a SHA-256 hash (hex). */
export interface ApiKey {
  readonly keyId: string;
  readonly name: string;
  /** Owning organization; null for a system key (not bound to one organization). */
  readonly organization: string | null;
  readonly role: Role;
  readonly secretHash: string;
  status: ApiKeyStatus;
  readonly rateLimitPerMinute: number | null;
  readonly rateLimitPerHour: number | null;
  readonly expiresAt: string | null;
  readonly createdAt: string;
  updatedAt: string;
}

/**
 * Top-level keys of the state derived from the rest (StoreOptions.derived): left out of
 * snapshots and rebuilt after a start. The subscription index comes from the waiting nodes
 * (Engine.recover with indexEventWait); with 70,000 executions waiting for a message it is
 * 18.5 MB of JSON, which a checkpoint made at once when its copy began (~100 ms of the event loop).
 */
export const DERIVED = ['subscriptions'] as const;

/**
 * Puts a copy of execution `inst` in its place in `state` and returns it: the same data in new
 * objects (the execution, its containers and node instances; what they hold is shared). The
 * state's value does not change, only which objects hold it, so no record is needed.
 *
 * Why: an execution that waited a while lives in V8's old generation. Resuming it writes new
 * objects (log lines, nodes, variables, times) into it, and every such old-to-new pointer is a
 * root for the scavenger until the next full GC, even once the execution is finished and gone:
 * what it points to survives and is promoted. Resumed in a copy, the old objects are left
 * unchanged (dead, pointing at nothing new), and the copy dies young with all it gained.
 */
export function youngCopy(state: WfxState, inst: Instance): Instance {
  const nodes: Record<string, NodeInstance> = {};
  for (const id in inst.nodes) {
    const node = { ...inst.nodes[id]! };
    if (node.children) node.children = node.children.slice(); // a child's start adds to it
    if (node.fired) node.fired = node.fired.slice(); // boundary.fired adds to it
    nodes[id] = node;
  }
  const copy = { ...inst };
  copy.nodes = nodes;
  copy.logs = inst.logs.slice();
  copy.variables = extensibleCopy(inst.variables); // the step adds to them
  copy.joins = extensibleCopy(inst.joins);
  putInstance(state, copy);
  return copy;
}

/**
 * What is kept beside each `instances` dictionary: its keys in their order (live executions and
 * tombstones, as Object.keys lists them), how many of each, and the rebuild without tombstones
 * under way. A checkpoint's copy and the rebuild walk `ids` instead of enumerating the
 * dictionary: with 100,000 keys Object.keys held the event loop 37 ms here and for-in 47-62 ms
 * (docs/performance.md). An array, not a Set: keys are only ever added (a tombstone keeps its
 * key), and an array costs a third of the memory and no hashing.
 */
interface InstanceIndex {
  readonly ids: string[];
  live: number;
  tombstones: number;
  rebuild: Rebuild | null;
}

/** The dictionary without its tombstones, built a few keys at a time (see archiveInstance). */
interface Rebuild {
  readonly into: Record<string, Instance | undefined>;
  /** Its keys in order; its counts are taken when it replaces the dictionary. */
  readonly ids: string[];
  /** Where it is in the keys of the dictionary being rebuilt (which it reads up to their end, those added meanwhile included). */
  next: number;
}

const indexes = new WeakMap<object, InstanceIndex>();

/**
 * Keys visited by the rebuild per archived execution. With a quarter of a microsecond or so per
 * key it adds a few microseconds to an archive, where the whole rebuild at once held the event
 * loop 57-100 ms with 100,000 keys (docs/performance.md).
 */
const REBUILD_KEYS_PER_ARCHIVE = 32;

/** The index of `instances`: listed once when it was made elsewhere (a snapshot parsed, a literal). */
function indexOf(instances: Record<string, Instance | undefined>): InstanceIndex {
  let index = indexes.get(instances);
  if (index === undefined) {
    const ids = Object.keys(instances);
    let live = 0;
    for (const id of ids) if (instances[id] !== undefined) live++;
    index = { ids, live, tombstones: ids.length - live, rebuild: null };
    indexes.set(instances, index);
  }
  return index;
}

/**
 * The keys of `instances` in their order, tombstones included: what Object.keys would give,
 * without enumerating the dictionary (SnapshotCopy takes them so). Every change to the
 * dictionary goes through putInstance and archiveInstance, which keep this list.
 */
export function instanceKeys(instances: Record<string, unknown>): string[] {
  return indexOf(instances as Record<string, Instance | undefined>).ids.slice();
}

/** Ids of `state`'s executions in their order, tombstones included (read `state.instances[id]`); never changed in place by the caller. */
export function instanceIds(state: WfxState): readonly string[] {
  return indexOf(state.instances).ids;
}

/** Puts execution `inst` in `state` under its id: a new one, or in place of the one there. */
export function putInstance(state: WfxState, inst: Instance): void {
  const instances = state.instances;
  const id = inst.processInstanceId;
  const index = indexOf(instances);
  const was = instances[id];
  // A tombstone's key (an archived id back: never, but kept exact), or a new one.
  const known = was !== undefined || Object.hasOwn(instances, id);
  if (was === undefined) {
    if (known) index.tombstones--;
    else index.ids.push(id);
    index.live++;
  }
  instances[id] = inst;
  const rebuild = index.rebuild;
  // Where the rebuild has copied it already, or passed it as a tombstone, it takes the change
  // too; a key it has not reached yet it copies as it finds it.
  if (rebuild !== null && known) {
    const copied = Object.hasOwn(rebuild.into, id);
    if (copied || was === undefined) {
      rebuild.into[id] = inst;
      if (!copied) rebuild.ids.push(id);
    }
  }
}

/**
 * Removes an archived execution from the live state: its key is left with `undefined` rather
 * than deleted. Deleting keys from the large dictionary as a resume load drains it kept young
 * executions alive for the scavenger in about half the runs (1.2 MB promoted per scavenge
 * instead of 0.43, pauses 4.5-4.8 ms instead of 2.6; docs/performance.md). When the tombstones
 * outnumber the live executions (and 10,000), the dictionary is rebuilt without them: the same
 * value in a new object, so the snapshot, JSON and every lookup are as before. The rebuild
 * visits a few keys per archived execution, never all at once, and the new object replaces the
 * dictionary once it has them all.
 */
export function archiveInstance(state: WfxState, id: string): void {
  const instances = state.instances;
  if (instances[id] === undefined) return;
  instances[id] = undefined;
  const index = indexOf(instances);
  index.live--;
  index.tombstones++;
  if (index.rebuild === null) {
    if (index.tombstones < 10_000 || index.tombstones < index.live) return;
    index.rebuild = { into: {}, ids: [], next: 0 };
  } else if (Object.hasOwn(index.rebuild.into, id)) {
    index.rebuild.into[id] = undefined; // copied already: a tombstone there too
  }
  rebuildStep(state, index);
}

/** Copies the next live executions into the rebuild; once it has them all, it replaces the dictionary. */
function rebuildStep(state: WfxState, index: InstanceIndex): void {
  const rebuild = index.rebuild!;
  const instances = state.instances;
  const ids = index.ids;
  const end = Math.min(ids.length, rebuild.next + REBUILD_KEYS_PER_ARCHIVE);
  for (; rebuild.next < end; rebuild.next++) {
    const id = ids[rebuild.next]!;
    const inst = instances[id];
    // Not copied before (a revived tombstone is, when it comes back): each key once, in order.
    if (inst !== undefined && !Object.hasOwn(rebuild.into, id)) {
      rebuild.into[id] = inst;
      rebuild.ids.push(id);
    }
  }
  if (rebuild.next < ids.length) return;
  index.rebuild = null;
  state.instances = rebuild.into;
  // It holds each live execution, and a tombstone for each archived since it copied it.
  indexes.set(rebuild.into, { ids: rebuild.ids, live: index.live, tombstones: rebuild.ids.length - index.live, rebuild: null });
}

/** `T` with its readonly fields writable: for code that builds or shares a state object's fields in place. */
export type Writable<T> = { -readonly [K in keyof T]: T[K] };

/**
 * Makes an execution just parsed from the snapshot or the journal share its strings, where
 * JSON.parse gave each its own copy (V8 shares only strings of up to 10 characters): its id
 * with its key in `instances` (`id`), each node's times with the time before them (the nodes of
 * a step share one ISO string, as they do in a running daemon), and its flow's id, name and
 * version and each log line that is one string with the same of `prev`, the execution recovered
 * just before it (executions of a flow log alike). Equal strings only, so nothing a reader sees
 * changes. It takes 100,000 executions waiting for input from 1,766 to 1,159 bytes of heap each
 * (docs/performance.md): less for every scavenge and mark to walk while the daemon runs.
 */
export function shareParsedStrings(inst: Instance, id: string, prev: Instance | null): void {
  const own = inst as Writable<Instance>;
  if (own.processInstanceId === id) own.processInstanceId = id;
  if (prev !== null) {
    if (own.processId === prev.processId) own.processId = prev.processId;
    if (own.processName === prev.processName) own.processName = prev.processName;
    if (own.processVersion === prev.processVersion) own.processVersion = prev.processVersion;
    const logs = own.logs;
    const before = prev.logs;
    const n = Math.min(logs.length, before.length);
    for (let i = 0; i < n; i++) {
      const line = logs[i];
      if (typeof line === 'string' && line === before[i]) logs[i] = before[i]!;
    }
  }
  let time = own.startTime;
  for (const key in own.nodes) {
    const node = own.nodes[key] as Writable<NodeInstance>;
    if (node.startTime === time) node.startTime = time;
    else time = node.startTime;
    if (node.endTime === null) continue;
    if (node.endTime === time) node.endTime = time;
    else time = node.endTime;
  }
}

/** The live executions of `state`, tombstones skipped. */
export function liveInstances(state: WfxState): Instance[] {
  const out: Instance[] = [];
  for (const id of instanceIds(state)) {
    const inst = state.instances[id];
    if (inst !== undefined) out.push(inst);
  }
  return out;
}

/** The state of an empty data directory. */
export function initialState(): WfxState {
  return {
    organizations: {},
    apiKeys: {},
    flows: {},
    instances: {},
    subscriptions: {},
    messages: {},
    messageIds: {},
    environments: {},
    webhooks: {},
    webhookTokens: {},
    pendingDeliveries: {},
    webhookDeliveries: {},
    webhookEventIds: {},
    emailConnections: {},
    scheduleFires: {},
    emailSeen: {},
  };
}
