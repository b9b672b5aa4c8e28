/**
 * What the engine emits once a step is durable, as a typed event map: `engine.on(name, ...)`
 * with a name not here, or a listener of another shape, does not compile.
 */
import type { EventEmitter } from 'node:events';
import type { Execution, LogEntry } from '../state/state.js';
import type { LifecycleEvent } from './lifecycle.js';

/** A log entry as streamed: `id` is its 1-based position in the execution's log. */
export interface StreamedLog {
  readonly processInstanceId: string;
  readonly id: number;
  readonly entry: LogEntry;
}

/** An execution's log has `upTo` durable entries (read them from `instance.logs` with logEntry). */
export interface LogsAdvanced {
  readonly processInstanceId: string;
  readonly upTo: number;
  readonly instance: Execution;
}

/** A piece of a model's answer as it streams in: not journaled, so it has no log id. */
export interface WorkProgress {
  readonly processInstanceId: string;
  readonly nodeId: string;
  readonly nodeInstanceId: string;
  /** The text that arrived since the last progress of this node. */
  readonly delta: string;
}

/** A job of `action` may have become available: a new one, a retry, one released (its worker gave it back). */
export interface JobsWaiting {
  readonly organization: string;
  readonly domain: string;
  readonly action: string;
}

/**
 * The engine's events and their arguments. `log` and `lifecycle` are built only while someone
 * listens (building events nobody listens to would cost every step).
 */
export interface EngineEvents {
  /** An execution's log now has `upTo` durable entries: one per execution per step. */
  logs: [LogsAdvanced];
  /** Each durable log entry (only while someone listens). */
  log: [StreamedLog];
  /** Each lifecycle event (only while someone listens). */
  lifecycle: [LifecycleEvent];
  /** An execution finished (its id), after its last log entries. */
  finished: [string];
  /** A finished execution (its id) has moved to history and left the live state. */
  archived: [string];
  /** Text of a model's answer while it streams (only while someone listens; never journaled). */
  progress: [WorkProgress];
  /** Jobs wait for a worker (only while someone listens): long polls of the jobs API wake. */
  jobs: [JobsWaiting];
  /** Executions left for another daemon with their partitions (Engine.handOver): those `leaving` names. */
  handedOver: [(instanceId: string) => boolean];
}

/** An event an intermediateThrowEvent delivered, in its execution's organization (given to the other daemons: thrown-outbox.ts). */
export interface ThrownEvent {
  readonly organization: string;
  readonly eventType: string;
  readonly correlationKey: string | null;
  readonly data: Record<string, unknown>;
}

/** The emitting side of the engine, as the effects that publish need it. */
export type EngineEmitter = EventEmitter<EngineEvents>;
