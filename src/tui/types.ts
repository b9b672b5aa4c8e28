/* What the TUI reads from the API: the wire's types (shared/api). */
import type { InstanceSummary, InstanceView, LogEntry, NodeView } from '../shared/api/index.js';

export type { NodeView };

/** An execution as GET /process/{id}/instances lists it. */
export type ExecutionSummary = InstanceSummary;

/** An execution as GET /process/instance/{id} gives it. */
export type Execution = InstanceView;

/** A log entry as the TUI keeps it: the entry and its SSE id. */
export interface LogLine extends Pick<LogEntry, 'nodeId' | 'nodeName' | 'level' | 'message' | 'timestamp'> {
  readonly id: number;
}

/** A model's answer while it streams in (from the log stream's `progress` events; never journaled). */
export interface StreamingAnswer {
  readonly nodeInstanceId: string;
  readonly nodeId: string;
  /** The answer so far (its tail). */
  readonly text: string;
}

/** Whether the daemon answers: the TUI says so when it does not, and reconnects. */
export type Connection =
  { readonly state: 'connecting' | 'live' } | { readonly state: 'reconnecting'; readonly error: string };
