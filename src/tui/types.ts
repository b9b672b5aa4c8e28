/* What the TUI reads from the API (the shapes of docs/api.md). */
import type { NodeView } from '../cli/api.js';
import type { InstanceSummary } from '../daemon/engine/archive.js';

export type { NodeView };

/** An execution as GET /process/{id}/instances lists it (the daemon's own type: one shape). */
export type ExecutionSummary = InstanceSummary;


export interface Execution extends ExecutionSummary {
  readonly data: Record<string, unknown> & { error?: { code: string; message: string; nodeId: string | null } };
  readonly output: Record<string, unknown> | null;
  readonly nodes: readonly NodeView[];
}

export interface LogLine {
  readonly id: number;
  readonly nodeId: string;
  readonly nodeName: string;
  readonly level: 'INFO' | 'WARN' | 'ERROR';
  readonly message: string;
  readonly timestamp: string;
}

/** Whether the daemon answers: the TUI says so when it does not, and reconnects. */
export type Connection = { readonly state: 'connecting' | 'live' } | { readonly state: 'reconnecting'; readonly error: string };
