import type { InstanceSummary } from '../daemon/engine/archive.js';

/* What the TUI reads from the API (the shapes of docs/api.md). */

/** An execution as GET /process/{id}/instances lists it (the daemon's own type: one shape). */
export type ExecutionSummary = InstanceSummary;

export interface NodeView {
  readonly nodeInstanceId: string;
  readonly nodeId: string;
  readonly nodeName: string;
  readonly nodeType: string;
  readonly statusCd: number;
  readonly startTime: string;
  readonly endTime: string | null;
  readonly wait?: { readonly kind: string; readonly formTitle?: string | null; readonly inputType?: string; readonly messageRef?: string; readonly dueAt?: string | null };
}

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
