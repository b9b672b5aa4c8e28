/**
 * One MCP tools/call: the flow started as POST /process/exec starts it (the same checks and
 * limits), recorded in the audit trail once started, then waited for as `?wait=` waits. The
 * answer is the execution's end: its output (else its variables) as the tool's result, a
 * failure or a cancellation as an error result the model reads. While it runs, a client that
 * sent a progress token hears each new log line and, every HEARTBEAT_MS, that it still runs
 * (what it waits for, a person's task included), so that its own request timeout can restart.
 * A client's notifications/cancelled cancels the execution; the end of a session (closed,
 * expired, the daemon stopping) only stops the wait: the execution goes on.
 */
import type { CallToolResult, ServerNotification } from '@modelcontextprotocol/sdk/types.js';
import { stateName, type Environment } from '../../../shared/api/index.js';
import { WfxError } from '../../../shared/errors.js';
import type { Engine } from '../../engine/engine.js';
import { failureView } from '../../engine/failures.js';
import { logEntry } from '../../state/log-line.js';
import { STATE, STATUS, type Execution } from '../../state/state.js';
import type { AuditTrail } from '../../store/audit-trail.js';
import { auditEntry } from '../audit-recorder.js';
import type { Caller } from '../caller.js';
import { requestTraceparent } from '../request-spans.js';
import type { StreamHub } from '../streams.js';
import type { FastifyRequest } from 'fastify';
import type { FlowTool } from './tools.js';

/** A running call says it still runs this often (with a progress token). */
export const HEARTBEAT_MS = 10_000;
/** The audit record's action for a tool call. */
export const MCP_CALL_ACTION = 'POST /mcp tools/call';

export interface CallDeps {
  readonly engine: Engine;
  readonly hub: StreamHub;
  readonly audit?: AuditTrail;
  readonly now: () => Date;
}

/** What one call has of its request: the HTTP request that carried it, and its MCP context. */
export interface CallContext {
  readonly request: FastifyRequest;
  readonly caller: Caller;
  readonly environment: Environment;
  /** Seconds to wait for the execution to end before answering that it still runs. */
  readonly waitSeconds: number;
  /** Aborted when the client cancels the call or its session ends. */
  readonly signal: AbortSignal;
  /** True when the abort came from the session's end, not from the client's cancel. */
  readonly sessionEnded: () => boolean;
  readonly progressToken: string | number | undefined;
  readonly notify: (n: ServerNotification) => Promise<void>;
}

/** Runs `tool` with `args` (see the top of this file). */
export async function callFlowTool(
  deps: CallDeps,
  ctx: CallContext,
  tool: FlowTool,
  args: Record<string, unknown>,
): Promise<CallToolResult> {
  const { engine, hub } = deps;
  const caller = ctx.caller;
  let inst: Execution;
  try {
    inst = await engine.start({
      organization: caller.organization,
      processId: tool.processId,
      environment: ctx.environment,
      correlationKey: null,
      data: args,
      traceparent: requestTraceparent(ctx.request),
    });
  } catch (err) {
    if (err instanceof WfxError) return errorResult(`${err.code}: ${err.message}`);
    throw err;
  }
  const id = inst.processInstanceId;
  const stopWatching = ctx.progressToken === undefined ? () => {} : reportProgress(deps, ctx, id);
  const onAbort = (): void => {
    if (ctx.sessionEnded()) return;
    // The client gave up on the call: its execution is cancelled (it may have ended meanwhile).
    engine.cancel({ organization: caller.organization, processInstanceId: id }).catch(() => {});
  };
  ctx.signal.addEventListener('abort', onAbort, { once: true });
  const stop = new AbortController();
  try {
    const ended = (): boolean => {
      const live = engine.executions.get(id);
      return live === undefined ? engine.executions.coldSummary(id) === undefined : live.stateCd !== STATE.RUNNING;
    };
    // Listening before the audit record is written: a short flow ends meanwhile, and its end is
    // then read while it is still in memory, not back from history.
    const waiting = hub.untilEnded(id, ctx.waitSeconds * 1000, ended, AbortSignal.any([ctx.signal, stop.signal]));
    if (deps.audit) {
      const entry = auditEntry(ctx.request, caller, MCP_CALL_ACTION, 200, { processInstanceId: id }, deps.now());
      await deps.audit.record({
        ...entry,
        targets: { ...entry.targets, processId: tool.processId },
        summary: { tool: tool.name, processId: tool.processId },
      });
    }
    await waiting;
  } finally {
    stop.abort();
    stopWatching();
    ctx.signal.removeEventListener('abort', onAbort);
  }
  // A flow that ended in its first step ended before the start answered: its execution is the
  // one the start gave (it has left memory since, and would be read back from history).
  const now = inst.stateCd !== STATE.RUNNING ? inst : await engine.getInstance(caller, id);
  if (now === null) return errorResult(`the execution ${id} is no longer found`, id);
  return resultOf(now);
}

/** The tool's answer for execution `inst` as it is now. */
export function resultOf(inst: Execution): CallToolResult {
  const id = inst.processInstanceId;
  const meta = { 'wfx.dev/execution': { processInstanceId: id, state: stateName(inst.stateCd) } };
  if (inst.stateCd === STATE.COMPLETED) {
    const value = inst.output ?? inst.variables;
    return { content: [{ type: 'text', text: JSON.stringify(value) }], structuredContent: value, _meta: meta };
  }
  if (inst.stateCd === STATE.FAILED) {
    const e = failureView(inst);
    return {
      ...errorResult(`the flow failed: ${e ? `${e.code}: ${e.message}` : 'no reason was kept'}`, id),
      _meta: meta,
    };
  }
  if (inst.stateCd === STATE.CANCELLED)
    return { ...errorResult(`the flow's execution ${id} was cancelled`, id), _meta: meta };
  const people = waitingForPeople(inst);
  const text =
    people.length > 0
      ? `The execution ${id} is still running: it waits for a person at ${people.join(', ')}. It goes on once they answer.`
      : `The execution ${id} is still running.`;
  return { content: [{ type: 'text', text }], _meta: meta };
}

function errorResult(text: string, id?: string): CallToolResult {
  return {
    content: [{ type: 'text', text: id === undefined || text.includes(id) ? text : `${text} (execution ${id})` }],
    isError: true,
  };
}

/** The tasks `inst` waits for a person at, named as its flow names them. */
function waitingForPeople(inst: Execution): string[] {
  const out: string[] = [];
  for (const k in inst.nodes) {
    const n = inst.nodes[k]!;
    if (n.statusCd === STATUS.WAITING && n.wait?.kind === 'input') out.push(`"${n.nodeName}" (node ${n.nodeId})`);
  }
  return out;
}

/**
 * Sends progress for execution `id`: what it does now at once, then each change as its log
 * lines are durable, and a heartbeat. Returns the stop.
 */
function reportProgress(deps: CallDeps, ctx: CallContext, id: string): () => void {
  let sent = 0;
  let last = '';
  const send = (message: string): void => {
    if (ctx.signal.aborted) return;
    sent++;
    last = message;
    ctx
      .notify({
        method: 'notifications/progress',
        params: { progressToken: ctx.progressToken!, progress: sent, message },
      })
      .catch(() => {});
  };
  const now = (): string => {
    const live = deps.engine.executions.get(id);
    return live === undefined ? last : describe(live);
  };
  const unwatch = deps.hub.watchExecution(
    id,
    (advanced) => {
      const message = describe(advanced.instance);
      if (message !== last) send(message);
    },
    () => {},
  );
  // Lines made durable before the watch began (the first step's) are said now.
  send(now());
  const heartbeat = setInterval(() => send(now()), HEARTBEAT_MS);
  heartbeat.unref();
  return () => {
    unwatch();
    clearInterval(heartbeat);
  };
}

/** What execution `inst` does now, in a line: the person it waits for, else its last log line. */
function describe(inst: Execution): string {
  const people = waitingForPeople(inst);
  if (people.length > 0) return `waiting for a person at ${people.join(', ')}`;
  const line = inst.logs.at(-1);
  if (line === undefined) return 'running';
  const entry = logEntry(inst, line);
  return `${entry.nodeName}: ${entry.message}`;
}
