/**
 * What an Engine is made of (engine.ts): its store and history, the runners of work it uses,
 * the cluster's port when it shares a database, its limits, and what tests may replace.
 */
import type { ColdExecutions } from '../state/executions.js';
import type { AiRunner } from '../ai/types.js';
import type { EngineClusterPort } from './cluster-port.js';
import type { FileStore } from '../files/file-store.js';
import type { SecretBox } from '../secrets/secret-box.js';
import type { WfxRecord } from '../state/records.js';
import type { WfxState } from '../state/state.js';
import type { HistoryStore } from '../store/history-store.js';
import type { DurableStore } from '../store/store.js';
import type { VoiceRunner } from '../voice/types.js';
import type { ExecutionLimits } from './limits.js';
import type { HttpCall, HttpCallOptions } from './work/http.js';
import type { NetworkPolicy } from '../outbound/network-policy.js';
import type { WorkResult } from '../outbound/result.js';
import type { ScriptRunner } from './work/script.js';
import type { EngineObserver } from '../observe/engine-observer.js';

/** What an Engine is made of: its store and history, and what tests may replace. */
export interface EngineOptions {
  readonly store: DurableStore<WfxState, WfxRecord>;
  readonly history: HistoryStore;
  /** The clock (tests pass their own). */
  readonly now?: () => Date;
  /**
   * Tests: a step that writes to an execution of a tree its input did not name throws (see
   * engine/touch-check.ts), so that every step keeps to the executions it ensures. Default off
   * (on in a daemon whose environment has `WFX_TEST_CHECK_TOUCHED=1`).
   */
  readonly checkTouched?: boolean;
  /** Executions kept off the resident state, read back when named (state/executions.ts); tests. Default: `executionCache`'s. */
  readonly cold?: ColdExecutions;
  /**
   * Live executions kept resident at most (at-rest/execution-cache.ts), on a store that can read
   * them back (DurableStore.evictable: the JSON store). Absent: all stay resident.
   */
  readonly executionCache?: number;
  readonly onError?: (err: unknown, what: string) => void;
  /** How serviceTask calls are made (tests may count or slow them). Default: work/http.ts. */
  readonly http?: (call: HttpCall, options: HttpCallOptions) => Promise<WorkResult>;
  /** Where serviceTask calls may connect (passed to `http`). Default: the built-in rules (outbound/network-policy.ts). */
  readonly network?: NetworkPolicy;
  /**
   * A directory of mounted secret files (`--secrets-dir`): `ENVIRONMENT/NAME`, else `NAME`, backs
   * `{secret.NAME}` of organization default when the state holds no value, read at each use.
   */
  readonly secretsDir?: string;
  /** The scriptTask sandbox. Default: a pool of QuickJS workers, started on first use, closed with the engine. */
  readonly scripts?: ScriptRunner;
  /** How deep start data, work results and the variables a node sets may nest (default DEFAULT_MAX_JSON_DEPTH; see json-shape.ts). */
  readonly maxJsonDepth?: number;
  /**
   * How aiTask calls are made (the daemon's one runner; it owns and closes it). Absent: an
   * aiTask fails with AI_PROVIDER_NOT_FOUND.
   */
  readonly ai?: AiRunner;
  /**
   * The file store: a file input's reference is checked against it, a voiceTask writes its
   * audio there. Absent: file references are refused and a voiceTask fails.
   */
  readonly files?: FileStore;
  /** How voiceTasks are carried out. Default: the local engines and providers, over `files`. */
  readonly voice?: VoiceRunner;
  /**
   * On a daemon sharing a database with others: the engine's part in it, built by the cluster
   * room (engine/cluster-port.ts): kept messages consumed under claims won in the database, events
   * thrown kept until the other daemons have them, events refused (PARTITION_MOVING) under
   * message ids whose partition it no longer holds. Absent: a daemon alone (kept messages
   * consumed at once, an event thrown wakes what waits here only, every message id its own).
   */
  readonly cluster?: EngineClusterPort;
  /** What one execution, tree and organization may hold (limits.ts); each left out takes its default. */
  readonly limits?: Partial<ExecutionLimits>;
  /** Executions per second the bulk operations apply, all together (default bulk/runner.ts's DEFAULT_BULK_RATE). */
  readonly bulkRate?: number;
  /**
   * The daemon's secrets keys: model providers' API keys are opened with them for each call, and
   * the routes and triggers built on this engine seal and open theirs with them. Default: a key
   * in memory only (SecretBox.ephemeral), for engines a test builds.
   */
  readonly secrets?: SecretBox;
  /** Watches durable steps (metrics). Absent: nothing is timed or counted. */
  readonly observe?: EngineObserver;
  /**
   * Timers (due nodes, cold executions' wakes) fire only once this settles; the daemon's settles
   * when it listens, so that the timers that came due while it was down (thousands, after a
   * long stop) are run after its API answers, not before. Absent: from the start.
   */
  readonly timersAfter?: Promise<unknown>;
}
