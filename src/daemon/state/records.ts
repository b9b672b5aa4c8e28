/**
 * Long file: the record types and the one reducer that applies them. A record's type and its
 * case are read together, and the reducer's invariants (deterministic; a record changes only
 * what it names) are checked in one place, since recovery replays every record through it.
 */
import type {
  AiProvider,
  ApiKey,
  Domain,
  JobLock,
  ApiKeyStatus,
  BufferedMessage,
  PendingThrow,
  Environment,
  FlowVersion,
  Instance,
  InstanceError,
  LogEntry,
  NodeInstance,
  StatusCd,
  StoredFile,
  Wait,
  WfxState,
} from './state.js';
import { createHash } from 'node:crypto';
import type { AiUsage } from '../ai/types.js';
import { nodesAt } from '../../shared/flow/types.js';
import { extensibleCopy } from '../../shared/json-object.js';
import { applyAgentUpdate, linkToolChild, type AgentUpdate } from './agent.js';
import { writeMemory, type MemoryEntry } from './memory.js';
import { rememberIds } from './seen-ids.js';
import { appendDeliveries } from './webhook-log.js';
import { applyJobLock, indexJobWait, jobWaitingLine, unindexJob, type JobLockReason } from './jobs.js';
import {
  EMAIL_SEEN_IDS,
  DERIVED,
  initialState,
  STATE,
  STATUS,
  DEFAULT_REPLAY_WINDOW_MS,
  type DeliveryRecord,
  type EmailConnection,
  type PendingDelivery,
  type WebhookRegistration,
  type Writable,
} from './state.js';
import { InstanceTable } from './instance-table.js';
import { LiveCounts } from './live-counts.js';
import { applyReseal, type SecretRef } from './secret-fields.js';
import { isoMs, packedLogLine } from './log-line.js';
import { progressedWait, type LoopProgress } from './loop-progress.js';
import { countLiveNode, logKeepsVariables, pushLog, setVariables } from './sizes.js';
import { jsonSize } from '../../shared/json-size.js';
import { subscriptionBucket, type Subscription } from './subscriptions.js';

/** A new execution as its `instance.started` record carries it: everything but what it accumulates. */
export type InstanceStart = Omit<Instance, 'nodes' | 'nodeCount' | 'joins' | 'logs' | 'logSize' | 'liveNodes'>;

/**
 * Every change to the live state is one of these records, journaled before it is acknowledged
 * and replayed on recovery. A record says what happened, with every value it needs (times and
 * ids included), so applying it is deterministic. Log entries and the subscription index are
 * derived here from node transitions, so they need no records of their own.
 */
export type WfxRecord =
  | { readonly type: 'organization.created'; readonly name: string; readonly at: string }
  | { readonly type: 'apiKey.created'; readonly key: ApiKey }
  | {
      readonly type: 'apiKey.statusChanged';
      readonly keyId: string;
      readonly status: ApiKeyStatus;
      readonly at: string;
    }
  | {
      readonly type: 'apiKey.updated';
      readonly keyId: string;
      readonly changes: Partial<Pick<ApiKey, 'name' | 'rateLimitPerMinute' | 'rateLimitPerHour' | 'expiresAt'>>;
      readonly at: string;
    }
  | {
      readonly type: 'flow.published';
      readonly processId: string;
      readonly organization: string;
      readonly version: FlowVersion;
    }
  | {
      readonly type: 'flow.activated';
      readonly processId: string;
      readonly environment: Environment;
      readonly version: string;
    }
  | {
      readonly type: 'env.set';
      readonly organization: string;
      readonly environment: Environment;
      readonly name: string;
      readonly value: string | null;
    }
  | { readonly type: 'instance.started'; readonly instance: InstanceStart }
  /** A token reached a node: a node instance is created, Active. Name and type come from the flow version. */
  | {
      readonly type: 'node.entered';
      readonly instanceId: string;
      readonly nodeInstanceId: string;
      readonly nodeId: string;
      readonly at: string;
    }
  /**
   * A node entered and completed within one step (most nodes): node.entered and node.completed
   * in one record.
   */
  | {
      readonly type: 'node.ran';
      readonly instanceId: string;
      readonly nodeInstanceId: string;
      readonly nodeId: string;
      readonly at: string;
      readonly variables?: Record<string, unknown>;
      readonly output?: Record<string, unknown>;
    }
  /**
   * Several nodes of one execution, each as `node.ran`, in order and at one time: how the
   * journal holds a run of them (coalesceNodeRuns), so a step through many nodes is one
   * record, not one per node.
   */
  | {
      readonly type: 'nodes.ran';
      readonly instanceId: string;
      readonly at: string;
      readonly nodes: ReadonlyArray<NodeRun>;
    }
  /** A node waits (again: a loop writes its progress this way), with variables it set meanwhile. */
  | {
      readonly type: 'node.waiting';
      readonly instanceId: string;
      readonly nodeInstanceId: string;
      readonly wait: Wait;
      readonly at: string;
      readonly variables?: Record<string, unknown>;
    }
  /** A waiting loopNode's progress (loop-progress.ts): its counts, the values collected since, variables handed on. */
  | ({
      readonly type: 'loop.progressed';
      readonly instanceId: string;
      readonly nodeInstanceId: string;
      readonly at: string;
    } & LoopProgress)
  /** A non-interrupting boundary event of the node fired (it fires once). */
  | {
      readonly type: 'boundary.fired';
      readonly instanceId: string;
      readonly nodeInstanceId: string;
      readonly boundaryId: string;
      readonly at: string;
    }
  | {
      readonly type: 'node.completed';
      readonly instanceId: string;
      readonly nodeInstanceId: string;
      readonly at: string;
      /** Variables the node set (merged into the instance's variables). */
      readonly variables?: Record<string, unknown>;
      /** Values the node recorded as the execution's output (outputNode). */
      readonly output?: Record<string, unknown>;
      /** Model tokens the node's call used (aiTask): added to the execution's usage. */
      readonly usage?: AiUsage;
    }
  /**
   * A callAgent's turn: the messages and tool calls appended to its state, a model answer
   * counted, tool calls ended (state/agent.ts). Emitted before the record that moves the node
   * on (node.waiting, node.working, node.completed or node.left) in the same step.
   */
  | ({
      readonly type: 'agent.updated';
      readonly instanceId: string;
      readonly nodeInstanceId: string;
      readonly at: string;
    } & AgentUpdate)
  /** A waiting node goes back to work outside the step (a callAgent's next model turn): Active again. */
  | {
      readonly type: 'node.working';
      readonly instanceId: string;
      readonly nodeInstanceId: string;
      readonly at: string;
    }
  | {
      readonly type: 'node.left';
      readonly instanceId: string;
      readonly nodeInstanceId: string;
      readonly statusCd: typeof STATUS.FAILED | typeof STATUS.CANCELLED | typeof STATUS.TIMED_OUT;
      readonly at: string;
      readonly reason: string;
      readonly variables?: Record<string, unknown>;
    }
  | {
      readonly type: 'join.updated';
      readonly instanceId: string;
      readonly nodeId: string;
      readonly arrivals: Record<string, number>;
    }
  | {
      readonly type: 'instance.logged';
      readonly instanceId: string;
      readonly entry: LogEntry;
    }
  | {
      readonly type: 'instance.finished';
      readonly instanceId: string;
      readonly stateCd: 1 | 2 | 3;
      readonly at: string;
      readonly error?: InstanceError;
    }
  | { readonly type: 'instance.archived'; readonly instanceId: string }
  | { readonly type: 'message.buffered'; readonly message: BufferedMessage }
  | { readonly type: 'message.removed'; readonly id: string }
  | { readonly type: 'messageId.seen'; readonly key: string; readonly until: string }
  | { readonly type: 'messageId.expired'; readonly key: string }
  /** An event an execution threw, kept until every other daemon sharing the database has it. */
  | { readonly type: 'event.thrown'; readonly event: PendingThrow }
  | { readonly type: 'event.passed'; readonly id: string }
  /** A registration created or changed (endpoints, secrets): the whole registration. */
  | { readonly type: 'webhook.saved'; readonly webhook: WebhookRegistration }
  | { readonly type: 'webhook.deleted'; readonly webhookId: string }
  | { readonly type: 'webhook.received'; readonly delivery: PendingDelivery }
  /**
   * A delivery's outcome. A signed one's event id and body hash are remembered until `until`
   * (its replay window; absent in records of earlier versions: the default window from receipt).
   */
  | {
      readonly type: 'webhook.processed';
      readonly webhookId: string;
      readonly record: DeliveryRecord;
      readonly until?: string;
    }
  /**
   * Deliveries refused as they arrived (webhook-refusals.ts), written together: `records`
   * for the log (never a body), `count` how many were refused in all (more than `records` when
   * the log would have dropped some at once).
   */
  | {
      readonly type: 'webhook.refused';
      readonly webhookId: string;
      readonly records: readonly DeliveryRecord[];
      readonly count: number;
    }
  /** A schedule trigger fired for the instant `at` (with the starts it made), or was armed from `at` (no fire before it). */
  | { readonly type: 'schedule.fired'; readonly key: string; readonly at: string }
  | { readonly type: 'schedule.armed'; readonly key: string; readonly at: string }
  /** A schedule stopped (its version is no longer active): re-activated later, it fires from then on. */
  | { readonly type: 'schedule.disarmed'; readonly key: string; readonly at: string }
  /** An email was processed (the executions it started are in the same entry): never again for that Message-ID. */
  | { readonly type: 'email.processed'; readonly connectionId: string; readonly messageId: string }
  | { readonly type: 'emailConnection.saved'; readonly connection: EmailConnection }
  | { readonly type: 'emailConnection.deleted'; readonly connectionId: string }
  /** A model provider was added or changed; `isDefault` clears the organization's other defaults. */
  | { readonly type: 'aiProvider.saved'; readonly provider: AiProvider }
  | { readonly type: 'aiProvider.deleted'; readonly providerId: string }
  /** New secrets are sealed with key `keyId` from now on (the first sealed, or a rotation). */
  | { readonly type: 'secretsKey.changed'; readonly keyId: string }
  /** A stored secret sealed again (a rotation, one kept in plain text before): `to` replaces `from`; null forgets it (its key lost). */
  | { readonly type: 'secret.resealed'; readonly ref: SecretRef; readonly from: string; readonly to: string | null }
  /** A checkpoint after reseals is durable: no journal entry or snapshot holds the secrets' old forms. */
  | { readonly type: 'secrets.checkpointed' }
  /** A file's blob is durable and this names it (an upload, or a node's file in the step of its completion). */
  | { readonly type: 'file.stored'; readonly file: StoredFile }
  /**
   * A file is kept until `expiresAt` (something still refers to it); `inHistory`, when given,
   * replaces its history buckets (those retention has pruned are dropped).
   */
  | {
      readonly type: 'file.kept';
      readonly fileId: string;
      readonly expiresAt: string;
      readonly inHistory?: readonly string[];
    }
  /** Finished executions archived into history bucket `bucket` name these files: kept while it is. */
  | { readonly type: 'files.held'; readonly bucket: string; readonly fileIds: readonly string[] }
  /** A file was deleted (by retention or an admin); its blob goes once no file names it. */
  | { readonly type: 'file.deleted'; readonly fileId: string }
  /**
   * A domainTask's job was locked to a worker (`activated`, `extended` by a heartbeat) or given
   * back (`released`, lock null): its node's wait gets the lock. A failed attempt is a new
   * `node.waiting` instead (the next attempt's wait).
   */
  | {
      readonly type: 'job.locked';
      readonly instanceId: string;
      readonly nodeInstanceId: string;
      readonly at: string;
      readonly lock: JobLock | null;
      readonly reason: JobLockReason;
    }
  /** A domain was registered (or registered again: replaced whole). */
  | { readonly type: 'domain.saved'; readonly domain: Domain }
  | { readonly type: 'domain.deleted'; readonly organization: string; readonly name: string }
  /**
   * A memory entry was set (`entry`) or removed (null): by a memoryAction or an aiTask's chat
   * memory in the same step as its node's completion, by the admin API, or by GC once expired.
   */
  | {
      readonly type: 'memory.written';
      readonly organization: string;
      readonly namespace: string;
      readonly key: string;
      readonly entry: MemoryEntry | null;
    };

/** The key of the token index: a SHA-256, so looking a token up reveals nothing about it. */
export function tokenKey(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

function unindex(state: WfxState, webhookId: string): void {
  const w = state.webhooks[webhookId];
  if (w) for (const e of w.endpoints) delete state.webhookTokens[tokenKey(e.token)];
}

/** One handler per record type: the compiler reports a record type without one. */
type Handlers = {
  readonly [T in WfxRecord['type']]: (state: WfxState, record: Extract<WfxRecord, { type: T }>) => void;
};

const STATUS_WORD: Record<StatusCd, string> = {
  0: 'started',
  1: 'waiting',
  2: 'completed',
  3: 'failed',
  4: 'cancelled',
  5: 'timed out',
};

/**
 * Appends a log entry. The variables snapshot is a shallow copy: variables are only ever
 * replaced at the top level, never changed in place, so nested values can be shared.
 */
function log(
  inst: Instance,
  node: Pick<NodeInstance, 'id'> | null,
  level: LogEntry['level'],
  message: string,
  at: string,
  withVariables = false,
): void {
  const ms = isoMs(at) - isoMs(inst.startTime);
  // A copy of the variables only while the log is small enough (sizes.ts, LOG_VARIABLES_BYTES).
  const copy = withVariables && logKeepsVariables(inst);
  pushLog(
    inst,
    copy
      ? [node?.id ?? '', level, message, ms, { ...inst.variables }]
      : packedLogLine(node?.id ?? '', level, ms, message),
    copy,
  );
}

function waitingFor(wait: Wait): string {
  switch (wait.kind) {
    case 'input':
      return 'waiting for input';
    case 'event':
      return `waiting for ${wait.eventType} "${wait.messageRef}"`;
    case 'timer':
      return `waiting for timer until ${wait.dueAt}`;
    case 'child':
      return 'waiting for its child execution';
    case 'loop': {
      const s = wait.state;
      const total = s.items === null ? '' : ` of ${s.items.length}`;
      return `iterations: ${s.done}${total} done, ${s.running} running`;
    }
    case 'tools':
      return 'waiting for its tool calls';
    case 'job':
      return jobWaitingLine(wait);
  }
}

/**
 * The record of a new execution, its fields listed one by one: `{ ...params, processInstanceId,
 * ... }` (an object spread followed by keys the source lacks) is V8's slow path, far slower than
 * this literal (docs/decisions/011-no-object-spread-for-growing-objects.md).
 */
export function startedInstance(
  p: Omit<InstanceStart, 'processInstanceId' | 'stateCd' | 'startTime' | 'endTime' | 'output' | 'error'>,
  id: string,
  at: string,
): InstanceStart {
  return withChildFields(
    {
      processId: p.processId,
      processName: p.processName,
      processVersion: p.processVersion,
      organization: p.organization,
      environment: p.environment,
      correlationKey: p.correlationKey,
      parentInstanceId: p.parentInstanceId,
      variables: p.variables,
      processInstanceId: id,
      stateCd: STATE.RUNNING,
      startTime: at,
      endTime: null,
      output: null,
      error: null,
    },
    p,
  );
}

/** Copies the fields only a child execution has, where `from` has them (absent, not undefined, otherwise). */
function withChildFields<T extends InstanceStart>(
  to: T,
  from: Pick<InstanceStart, 'parentNodeInstanceId' | 'scope' | 'iteration' | 'toolCallId' | 'callDepth' | 'root'>,
): T {
  const w = to as Writable<T>;
  if (from.root !== undefined) w.root = from.root;
  if (from.parentNodeInstanceId !== undefined) w.parentNodeInstanceId = from.parentNodeInstanceId;
  if (from.scope !== undefined) w.scope = from.scope;
  if (from.iteration !== undefined) w.iteration = from.iteration;
  if (from.toolCallId !== undefined) w.toolCallId = from.toolCallId;
  if (from.callDepth !== undefined) w.callDepth = from.callDepth;
  return to;
}

const subKey = (instanceId: string, nodeInstanceId: string) => `${instanceId}|${nodeInstanceId}`;

/** Drops the subscription of a node that stops waiting on an event. */
function unsubscribe(state: WfxState, inst: Instance, node: NodeInstance): void {
  if (node.wait?.kind !== 'event') return;
  const bucket = subscriptionBucket(
    inst.organization,
    node.wait.messageRef,
    node.wait.eventType,
    node.wait.correlationKey,
  );
  const held = state.subscriptions[bucket];
  if (held === undefined) return;
  if (!(held instanceof Map)) {
    if (isNode(held, inst.processInstanceId, node.id)) delete state.subscriptions[bucket];
    return;
  }
  held.delete(subKey(inst.processInstanceId, node.id));
  // Back to the compact form once one is left.
  if (held.size === 1) state.subscriptions[bucket] = held.values().next().value!;
  else if (held.size === 0) delete state.subscriptions[bucket];
}

/**
 * Writes the subscription of a node waiting on an event: the bucket itself while it is the only
 * one there, a Map of them once another comes (SubscriptionBucket). Every subscription is built
 * by the one object literal below, so all share a hidden class (a `{}` given a key of its own
 * per bucket took a class each, which cost every scavenge:
 * docs/decisions/007-subscription-index-shape.md).
 */
function subscribe(state: WfxState, inst: Instance, node: NodeInstance, wait: Extract<Wait, { kind: 'event' }>): void {
  const bucket = subscriptionBucket(inst.organization, wait.messageRef, wait.eventType, wait.correlationKey);
  const sub: Subscription = { instanceId: inst.processInstanceId, nodeInstanceId: node.id, nodeId: node.nodeId };
  const held = state.subscriptions[bucket];
  if (held instanceof Map) held.set(subKey(sub.instanceId, sub.nodeInstanceId), sub);
  else if (held === undefined || isNode(held, sub.instanceId, sub.nodeInstanceId)) state.subscriptions[bucket] = sub;
  else {
    state.subscriptions[bucket] = new Map([
      [subKey(held.instanceId, held.nodeInstanceId), held],
      [subKey(sub.instanceId, sub.nodeInstanceId), sub],
    ]);
  }
}

/** Whether `sub` is the subscription of node `nodeInstanceId` of execution `instanceId`. */
const isNode = (sub: Subscription, instanceId: string, nodeInstanceId: string): boolean =>
  sub.instanceId === instanceId && sub.nodeInstanceId === nodeInstanceId;

/**
 * Adds node `node` of running execution `inst` to the subscription index if it waits on an
 * event. The index is derived: recovery rebuilds it from the waits of live nodes (so a snapshot
 * written by an older layout of it comes back right), in the engine's one walk over them.
 */
export function indexEventWait(state: WfxState, inst: Instance, node: NodeInstance): void {
  if (node.statusCd === STATUS.WAITING && node.wait?.kind === 'event') subscribe(state, inst, node, node.wait);
}

/** Creates the node instance a token entered (Active); name and type come from the flow version. */
function enter(
  state: WfxState,
  r: { instanceId: string; nodeInstanceId: string; nodeId: string; at: string },
): NodeInstance | null {
  const inst = state.instances[r.instanceId];
  if (!inst) return null;
  const definition = state.flows[inst.processId]?.versions[inst.processVersion]?.definition;
  const def = definition && (inst.scope ? nodesAt(definition, inst.scope)?.[r.nodeId] : definition.nodes[r.nodeId]);
  const node: NodeInstance = {
    id: r.nodeInstanceId,
    nodeId: r.nodeId,
    nodeName: def?.name ?? r.nodeId,
    nodeType: def?.type ?? 'unknown',
    statusCd: STATUS.ACTIVE,
    startTime: r.at,
    endTime: null,
    wait: null,
  };
  countLiveNode(inst, 1); // before it is in: a first count walks the nodes
  inst.nodes[r.nodeInstanceId] = node;
  inst.nodeCount++;
  log(inst, node, 'INFO', 'started', r.at);
  return node;
}

/** Completes a node instance: its variables and output merged into the execution's. */
function complete(
  inst: Instance,
  node: NodeInstance,
  r: { at: string; variables?: Record<string, unknown>; output?: Record<string, unknown> },
): void {
  if (node.statusCd === STATUS.ACTIVE || node.statusCd === STATUS.WAITING) countLiveNode(inst, -1);
  node.statusCd = STATUS.COMPLETED;
  node.endTime = r.at;
  node.wait = null;
  if (r.variables) setVariables(inst, r.variables);
  if (r.output) inst.output = extensibleCopy(inst.output ?? {}, r.output);
  log(inst, node, 'INFO', 'completed', r.at, r.variables !== undefined);
}

// A handler changes only the execution its record names in `instanceId` (a child's start: also
// its parent): checkpoints copy an execution just before a record that changes it (executionsTouched).
const handlers: Handlers = {
  'organization.created': (state, r) => {
    state.organizations[r.name] ??= { name: r.name, createdAt: r.at };
  },
  'apiKey.created': (state, r) => {
    state.apiKeys[r.key.keyId] = { ...r.key };
  },
  'apiKey.statusChanged': (state, r) => {
    const key = state.apiKeys[r.keyId];
    if (!key) return;
    key.status = r.status;
    key.updatedAt = r.at;
  },
  'apiKey.updated': (state, r) => {
    const key = state.apiKeys[r.keyId];
    if (!key) return;
    state.apiKeys[r.keyId] = { ...key, ...r.changes, updatedAt: r.at };
  },
  'flow.published': (state, r) => {
    const def = r.version.definition;
    const flow = (state.flows[r.processId] ??= {
      processId: r.processId,
      organization: r.organization,
      name: def.name,
      public: def.public === true,
      versions: {},
      active: {},
    });
    flow.versions[r.version.version] = r.version;
    flow.name = def.name;
    flow.public = def.public === true;
  },
  'flow.activated': (state, r) => {
    const flow = state.flows[r.processId];
    if (flow) flow.active[r.environment] = r.version;
  },
  'env.set': (state, r) => {
    const byEnv = (state.environments[r.organization] ??= {});
    const vars = (byEnv[r.environment] ??= {});
    if (r.value === null) delete vars[r.name];
    else vars[r.name] = r.value;
  },
  'instance.started': (state, r) => {
    // The record was serialized before it is applied (Store), so its objects can be kept. Its
    // fields are listed, not spread: see startedInstance.
    const s = r.instance;
    const inst: Instance = withChildFields(
      {
        processId: s.processId,
        processName: s.processName,
        processVersion: s.processVersion,
        organization: s.organization,
        environment: s.environment,
        correlationKey: s.correlationKey,
        parentInstanceId: s.parentInstanceId,
        processInstanceId: s.processInstanceId,
        stateCd: s.stateCd,
        startTime: s.startTime,
        endTime: s.endTime,
        output: s.output,
        error: s.error,
        // Nodes add to them: copied so that adding is not the slow path a spread's copy takes.
        variables: extensibleCopy(s.variables),
        nodes: {},
        nodeCount: 0,
        joins: {},
        logs: [],
        // In the literal, as every field: one added later would change the object's shape.
        varSize: s.varSize ?? jsonSize(s.variables),
        logSize: 0,
        liveNodes: 0,
      },
      s,
    );
    InstanceTable.of(state).put(inst);
    LiveCounts.held(state)?.started(inst);
    if (inst.parentInstanceId !== null && inst.parentNodeInstanceId !== undefined) {
      const parentInst = state.instances[inst.parentInstanceId];
      const parent = parentInst?.nodes[inst.parentNodeInstanceId];
      if (parent) (parent.children ??= []).push(inst.processInstanceId);
      if (parentInst && parent && inst.toolCallId !== undefined) {
        const line = linkToolChild(parent, inst.toolCallId, inst.processInstanceId);
        if (line) log(parentInst, parent, 'INFO', line, inst.startTime);
      }
    }
    log(inst, null, 'INFO', `execution started (version ${inst.processVersion})`, inst.startTime, true);
  },
  'node.entered': (state, r) => enter(state, r),
  'node.ran': (state, r) => {
    const inst = state.instances[r.instanceId];
    const node = enter(state, r);
    if (inst && node) complete(inst, node, r);
  },
  'nodes.ran': (state, r) => {
    for (const n of r.nodes)
      handlers['node.ran'](state, nodeRan(r.instanceId, n.nodeInstanceId, n.nodeId, r.at, n.variables, n.output));
  },
  'node.waiting': (state, r) => {
    const inst = state.instances[r.instanceId];
    const node = inst?.nodes[r.nodeInstanceId];
    if (!inst || !node) return;
    const before = node.wait;
    node.statusCd = STATUS.WAITING;
    node.wait = r.wait;
    if (r.variables) setVariables(inst, r.variables);
    if (r.wait.kind === 'event') subscribe(state, inst, node, r.wait);
    if (r.wait.kind === 'job' || before?.kind === 'job') indexJobWait(state, inst, node, before);
    log(inst, node, 'INFO', waitingFor(r.wait), r.at, r.variables !== undefined);
  },
  'loop.progressed': (state, r) => {
    const inst = state.instances[r.instanceId];
    const node = inst?.nodes[r.nodeInstanceId];
    const wait = node && progressedWait(node, r);
    if (!inst || !node || !wait) return;
    node.wait = wait;
    if (r.variables) setVariables(inst, r.variables);
    log(inst, node, 'INFO', waitingFor(wait), r.at, r.variables !== undefined);
  },
  'node.completed': (state, r) => {
    const inst = state.instances[r.instanceId];
    const node = inst?.nodes[r.nodeInstanceId];
    if (!inst || !node) return;
    unsubscribe(state, inst, node);
    unindexJob(state, inst, node);
    complete(inst, node, r);
    if (r.usage) {
      const u = inst.usage;
      inst.usage = {
        inputTokens: (u?.inputTokens ?? 0) + r.usage.inputTokens,
        outputTokens: (u?.outputTokens ?? 0) + r.usage.outputTokens,
        calls: (u?.calls ?? 0) + 1,
      };
    }
  },
  'node.left': (state, r) => {
    const inst = state.instances[r.instanceId];
    const node = inst?.nodes[r.nodeInstanceId];
    if (!inst || !node) return;
    unsubscribe(state, inst, node);
    unindexJob(state, inst, node);
    if (node.statusCd === STATUS.ACTIVE || node.statusCd === STATUS.WAITING) countLiveNode(inst, -1);
    node.statusCd = r.statusCd;
    node.endTime = r.at;
    node.wait = null;
    if (r.variables) setVariables(inst, r.variables);
    log(inst, node, r.statusCd === STATUS.FAILED ? 'ERROR' : 'WARN', `${STATUS_WORD[r.statusCd]}: ${r.reason}`, r.at);
  },
  'agent.updated': (state, r) => {
    const inst = state.instances[r.instanceId];
    const node = inst?.nodes[r.nodeInstanceId];
    if (!inst || !node) return;
    for (const line of applyAgentUpdate(inst, node, r)) log(inst, node, 'INFO', line, r.at);
  },
  'node.working': (state, r) => {
    const inst = state.instances[r.instanceId];
    const node = inst?.nodes[r.nodeInstanceId];
    if (!inst || !node) return;
    unsubscribe(state, inst, node);
    unindexJob(state, inst, node);
    node.statusCd = STATUS.ACTIVE;
    node.wait = null;
  },
  'boundary.fired': (state, r) => {
    const inst = state.instances[r.instanceId];
    const node = inst?.nodes[r.nodeInstanceId];
    if (!inst || !node) return;
    (node.fired ??= []).push(r.boundaryId);
    log(inst, node, 'INFO', `boundary event ${r.boundaryId} fired`, r.at);
  },
  'join.updated': (state, r) => {
    const inst = state.instances[r.instanceId];
    if (!inst) return;
    if (Object.keys(r.arrivals).length === 0) delete inst.joins[r.nodeId];
    else inst.joins[r.nodeId] = { ...r.arrivals };
  },
  'instance.logged': (state, r) => {
    const inst = state.instances[r.instanceId];
    if (inst) pushLog(inst, r.entry, false);
  },
  'instance.finished': (state, r) => {
    const inst = state.instances[r.instanceId];
    if (!inst) return;
    if (inst.stateCd === STATE.RUNNING) LiveCounts.held(state)?.finished(inst);
    inst.stateCd = r.stateCd;
    inst.endTime = r.at;
    inst.joins = {};
    if (r.error) inst.error = r.error;
    const word =
      r.stateCd === 1 ? 'completed' : r.stateCd === 2 ? `failed: ${r.error?.code}: ${r.error?.message}` : 'cancelled';
    // Kept whole: it names the failing node by its id. The final variables, however long the log.
    pushLog(
      inst,
      {
        nodeId: r.error?.nodeId ?? '',
        nodeName: inst.processName,
        nodeType: 'process',
        message: `execution ${word}`,
        level: r.stateCd === 2 ? 'ERROR' : 'INFO',
        timestamp: r.at,
        variables: { ...inst.variables },
      },
      true,
    );
  },
  'instance.archived': (state, r) => InstanceTable.of(state).archive(r.instanceId),
  'message.buffered': (state, r) => {
    state.messages[r.message.id] = r.message;
  },
  'message.removed': (state, r) => {
    delete state.messages[r.id];
  },
  'messageId.seen': (state, r) => {
    state.messageIds[r.key] = r.until;
  },
  'messageId.expired': (state, r) => {
    delete state.messageIds[r.key];
  },
  'event.thrown': (state, r) => {
    state.thrown[r.event.id] = r.event;
  },
  'event.passed': (state, r) => {
    delete state.thrown[r.id];
  },
  'webhook.saved': (state, r) => {
    unindex(state, r.webhook.webhookId);
    state.webhooks[r.webhook.webhookId] = r.webhook;
    for (const e of r.webhook.endpoints)
      state.webhookTokens[tokenKey(e.token)] = { webhookId: r.webhook.webhookId, environment: e.environment };
  },
  'webhook.deleted': (state, r) => {
    unindex(state, r.webhookId);
    delete state.webhooks[r.webhookId];
    delete state.webhookDeliveries[r.webhookId];
    delete state.webhookRefused[r.webhookId];
    delete state.webhookEventIds[r.webhookId];
  },
  'schedule.fired': (state, r) => {
    state.scheduleFires[r.key] = { at: r.at, lastFire: r.at };
  },
  'schedule.armed': (state, r) => {
    state.scheduleFires[r.key] = { at: r.at, lastFire: state.scheduleFires[r.key]?.lastFire ?? null };
  },
  'schedule.disarmed': (state, r) => {
    state.scheduleFires[r.key] = { at: r.at, lastFire: state.scheduleFires[r.key]?.lastFire ?? null, inactive: true };
  },
  'email.processed': (state, r) => {
    const ids = (state.emailSeen[r.connectionId] ??= []);
    if (!ids.includes(r.messageId)) ids.push(r.messageId);
    if (ids.length > EMAIL_SEEN_IDS) ids.splice(0, ids.length - EMAIL_SEEN_IDS);
  },
  'emailConnection.saved': (state, r) => {
    state.emailConnections[r.connection.connectionId] = r.connection;
  },
  'emailConnection.deleted': (state, r) => {
    delete state.emailConnections[r.connectionId];
    delete state.emailSeen[r.connectionId];
  },
  'aiProvider.saved': (state, r) => {
    if (r.provider.isDefault) {
      for (const [id, p] of Object.entries(state.aiProviders))
        if (p.organization === r.provider.organization && p.isDefault && id !== r.provider.providerId)
          state.aiProviders[id] = { ...p, isDefault: false };
    }
    state.aiProviders[r.provider.providerId] = r.provider;
  },
  'aiProvider.deleted': (state, r) => {
    delete state.aiProviders[r.providerId];
  },
  'secretsKey.changed': (state, r) => {
    state.secretsKey = r.keyId;
  },
  'secret.resealed': (state, r) => {
    applyReseal(state, r.ref, r.from, r.to);
    state.secretsResealed = true;
  },
  'secrets.checkpointed': (state) => {
    delete state.secretsResealed;
  },
  'file.stored': (state, r) => {
    state.files[r.file.fileId] = r.file;
  },
  'file.kept': (state, r) => {
    const file = state.files[r.fileId];
    if (!file) return;
    if (r.inHistory === undefined) state.files[r.fileId] = { ...file, expiresAt: r.expiresAt };
    else {
      const { inHistory: _dropped, ...rest } = file;
      state.files[r.fileId] = {
        ...rest,
        expiresAt: r.expiresAt,
        ...(r.inHistory.length > 0 && { inHistory: r.inHistory }),
      };
    }
  },
  'files.held': (state, r) => {
    for (const fileId of r.fileIds) {
      const file = Object.hasOwn(state.files, fileId) ? state.files[fileId] : undefined;
      if (!file || file.inHistory?.includes(r.bucket)) continue;
      state.files[fileId] = { ...file, inHistory: [...(file.inHistory ?? []), r.bucket] };
    }
  },
  'file.deleted': (state, r) => {
    delete state.files[r.fileId];
  },
  'memory.written': (state, r) => {
    writeMemory(state.memory, r, r.entry);
  },
  'job.locked': (state, r) => {
    const inst = state.instances[r.instanceId];
    const node = inst?.nodes[r.nodeInstanceId];
    if (!inst || !node) return;
    const line = applyJobLock(state, inst, node, r.lock, r.reason);
    if (line !== null) log(inst, node, 'INFO', line, r.at);
  },
  'domain.saved': (state, r) => {
    (state.domains[r.domain.organization] ??= {})[r.domain.name] = r.domain;
  },
  'domain.deleted': (state, r) => {
    const org = state.domains[r.organization];
    if (!org) return;
    delete org[r.name];
    if (Object.keys(org).length === 0) delete state.domains[r.organization];
  },
  'webhook.received': (state, r) => {
    state.pendingDeliveries[r.delivery.deliveryId] = r.delivery;
  },
  'webhook.processed': (state, r) => {
    delete state.pendingDeliveries[r.record.deliveryId];
    if (!state.webhooks[r.webhookId]) return; // deleted meanwhile
    appendDeliveries(state, r.webhookId, [r.record]);
    if (r.record.refused) state.webhookRefused[r.webhookId] = (state.webhookRefused[r.webhookId] ?? 0) + 1;
    if (r.record.signatureOk) {
      const at = r.record.receivedAt;
      const until = r.until ?? new Date(Date.parse(at) + DEFAULT_REPLAY_WINDOW_MS).toISOString();
      rememberIds(state.webhookEventIds, r.webhookId, [r.record.eventId, r.record.bodyHash], at, until);
    }
  },
  'webhook.refused': (state, r) => {
    if (!state.webhooks[r.webhookId]) return; // deleted meanwhile
    appendDeliveries(state, r.webhookId, r.records);
    state.webhookRefused[r.webhookId] = (state.webhookRefused[r.webhookId] ?? 0) + r.count;
  },
};

/** Applies one record to the state in place. Deterministic; the store's reducer. */
export function applyRecord(state: WfxState, record: WfxRecord): void {
  (handlers[record.type] as (s: WfxState, r: WfxRecord) => void)(state, record);
}

/** One node of a `nodes.ran` record: a `node.ran` without what the run shares. */
export interface NodeRun {
  readonly nodeInstanceId: string;
  readonly nodeId: string;
  readonly variables?: Record<string, unknown>;
  readonly output?: Record<string, unknown>;
}

/**
 * The store's coalescing (StoreOptions.coalesce): consecutive `node.ran` records of one
 * execution at one time are journaled as one `nodes.ran`. The reducer keeps none of their
 * objects (it copies variables and output), so they may be serialized after they are applied.
 */
export const coalesceNodeRuns = {
  candidate: (r: WfxRecord): boolean => r.type === 'node.ran',
  merge: (last: WfxRecord, next: WfxRecord): WfxRecord | null => {
    if (
      next.type !== 'node.ran' ||
      (last.type !== 'node.ran' && last.type !== 'nodes.ran') ||
      last.instanceId !== next.instanceId ||
      last.at !== next.at
    )
      return null;
    const run = nodeRunOf(next);
    if (last.type === 'nodes.ran') {
      (last.nodes as NodeRun[]).push(run); // the store's own record until serialized
      return last;
    }
    return { type: 'nodes.ran', instanceId: last.instanceId, at: last.at, nodes: [nodeRunOf(last), run] };
  },
};

type NodeRan = Extract<WfxRecord, { type: 'node.ran' }>;

/**
 * A `node.ran` record, its optional fields set only when given. Written out rather than with
 * conditional spreads (`...(x && { x })`): V8 copies a spread through a slow generic path, and
 * this runs for most nodes of every execution.
 */
export function nodeRan(
  instanceId: string,
  nodeInstanceId: string,
  nodeId: string,
  at: string,
  variables?: Record<string, unknown>,
  output?: Record<string, unknown>,
): NodeRan {
  const r: Writable<NodeRan> = { type: 'node.ran', instanceId, nodeInstanceId, nodeId, at };
  if (variables) r.variables = variables;
  if (output) r.output = output;
  return r;
}

/** A `node.ran` without what a run of them shares (rather than a rest destructuring, for the same reason). */
function nodeRunOf(r: NodeRan): NodeRun {
  const run: Writable<NodeRun> = { nodeInstanceId: r.nodeInstanceId, nodeId: r.nodeId };
  if (r.variables !== undefined) run.variables = r.variables;
  if (r.output !== undefined) run.output = r.output;
  return run;
}

/**
 * The executions a record changes (StoreOptions.snapshotCollection): a checkpoint copies each
 * one before that record is applied. Every record that changes an execution names it in
 * `instanceId`; a child's start also changes its parent's node (its `children`). Their keys
 * come from the state's InstanceTable rather than from enumerating the dictionary.
 */
export const executionsTouched = {
  key: 'instances',
  keys: (_instances: Record<string, unknown>, state: object): string[] => InstanceTable.of(state as WfxState).keys(),
  touched: (r: WfxRecord, visit: (instanceId: string) => void): void => {
    if ('instanceId' in r) visit(r.instanceId);
    else if (r.type === 'instance.started') {
      visit(r.instance.processInstanceId); // new, so not in the copy: unless an id ever came back
      if (r.instance.parentInstanceId !== null && r.instance.parentNodeInstanceId !== undefined)
        visit(r.instance.parentInstanceId);
    }
  },
} as const;

/**
 * How the daemon opens its store (Store.open's options but the directory): the state, its
 * reducer, the coalescing of node runs, and snapshots copied a slice at a time.
 */
export const WFX_STORE = {
  initialState,
  derived: DERIVED,
  apply: applyRecord,
  coalesce: coalesceNodeRuns,
  snapshotCollection: executionsTouched,
} as const;
