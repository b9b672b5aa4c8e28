/**
 * The spans of executions, read from the records of a durable step: one span per node instance
 * that ended (completed, failed, cancelled, timed out), one per execution that finished, in the
 * trace its record carries (Execution.trace). A span is written when what it stands for ends, from
 * the times the records hold, so a node that waited across a restart still gets one whole span.
 */
import type { WfxRecord } from '../state/records.js';
import { STATE, type Execution, type WfxState } from '../state/state.js';
import {
  newExecutionTrace,
  newSpanId,
  newTraceId,
  nodeSpanId,
  NOT_SAMPLED,
  parseTraceparent,
  readExecutionTrace,
  type ExecutionTrace,
} from './trace-context.js';
import { SPAN_KIND, type Tracer } from './tracer.js';
import { execution } from '../state/executions.js';

const STATE_NAMES: Record<number, string> = { 1: 'COMPLETED', 2: 'FAILED', 3: 'CANCELLED' };
const LEFT_NAMES: Record<number, string> = { 3: 'FAILED', 4: 'CANCELLED', 5: 'TIMED_OUT' };

/** Writes the spans the records of one durable step end (read against `state`, the records applied). */
export function traceRecords(tracer: Tracer, state: WfxState, records: readonly WfxRecord[]): void {
  for (const r of records) {
    switch (r.type) {
      case 'node.ran':
        nodeSpan(tracer, execution(state, r.instanceId), r.nodeInstanceId, r.at, r.at, null, undefined);
        break;
      case 'nodes.ran':
        for (const n of r.nodes)
          nodeSpan(tracer, execution(state, r.instanceId), n.nodeInstanceId, r.at, r.at, null, undefined);
        break;
      case 'node.completed':
        nodeSpan(tracer, execution(state, r.instanceId), r.nodeInstanceId, null, r.at, null, undefined);
        break;
      case 'node.left':
        nodeSpan(tracer, execution(state, r.instanceId), r.nodeInstanceId, null, r.at, r.reason, r.statusCd);
        break;
      case 'instance.finished':
        executionSpan(tracer, execution(state, r.instanceId), r.at);
        break;
      default:
        break;
    }
  }
}

/** The trace of a live execution, when it has one (started while tracing was on). */
export function traceOf(inst: Execution | undefined): ExecutionTrace | null {
  return inst === undefined ? null : readExecutionTrace(inst.trace);
}

function nodeSpan(
  tracer: Tracer,
  inst: Execution | undefined,
  nodeInstanceId: string,
  startAt: string | null,
  endAt: string,
  reason: string | null,
  leftStatus: number | undefined,
): void {
  const trace = traceOf(inst);
  const ni = inst?.nodes[nodeInstanceId];
  if (trace === null || !inst || !ni) return;
  const span = tracer.start(
    `node ${ni.nodeType} ${ni.nodeId}`,
    SPAN_KIND.INTERNAL,
    trace,
    msOf(startAt ?? ni.startTime),
    nodeSpanId(trace, nodeInstanceId),
  );
  span
    .set('wfx.flow.id', inst.processId)
    .set('wfx.flow.version', inst.processVersion)
    .set('wfx.execution.id', inst.processInstanceId)
    .set('wfx.node.id', ni.nodeId)
    .set('wfx.node.type', ni.nodeType)
    .set('wfx.node.instance', nodeInstanceId)
    .set('wfx.node.attempt', ni.attempts ?? 1);
  if (leftStatus !== undefined) span.set('wfx.node.status', LEFT_NAMES[leftStatus]);
  if (reason !== null) {
    const code = /^([A-Z][A-Z0-9_]*): /.exec(reason)?.[1];
    span.set('wfx.failure.code', code);
    if (leftStatus === 3) span.fail(code ?? 'FAILED');
  }
  span.end(msOf(endAt));
}

function executionSpan(tracer: Tracer, inst: Execution | undefined, at: string): void {
  const trace = traceOf(inst);
  if (trace === null || !inst) return;
  const parent = trace.parentSpanId === null ? null : { traceId: trace.traceId, spanId: trace.parentSpanId };
  const span = tracer.start(
    `execution ${inst.processId}`,
    SPAN_KIND.INTERNAL,
    parent,
    msOf(inst.startTime),
    trace.spanId,
    trace.traceId,
  );
  span
    .set('wfx.flow.id', inst.processId)
    .set('wfx.flow.version', inst.processVersion)
    .set('wfx.execution.id', inst.processInstanceId)
    .set('wfx.organization', inst.organization)
    .set('wfx.execution.state', STATE_NAMES[inst.stateCd]);
  if (inst.stateCd === STATE.FAILED && inst.error) {
    span.set('wfx.failure.code', inst.error.code).set('wfx.failure.node', inst.error.nodeId ?? undefined);
    span.fail(inst.error.code);
  }
  span.end(msOf(at));
}

/** The last time msOf read: a step's records share one, and its spans read it twice each. */
let lastAt = { text: '', ms: 0 };

/** Date.parse of an ISO time, remembered for the next call. */
function msOf(text: string): number {
  if (text !== lastAt.text) lastAt = { text, ms: Date.parse(text) };
  return lastAt.ms;
}

/**
 * The trace a new execution's record carries (tracing on): a child's continues its parent's node
 * (subProcess, loopNode, callProcess), and is not sampled when its parent is not; a start with a
 * `traceparent` that span (`continues`, the record form resolveStart made); any other start a
 * new trace, sampled at the tracer's ratio.
 */
export function traceForStart(
  tracer: Tracer,
  state: WfxState,
  parentInstanceId: string | null,
  parentNodeInstanceId: string | undefined,
  continues: string | undefined,
): string {
  const inst = parentInstanceId === null ? undefined : execution(state, parentInstanceId);
  if (inst?.trace === NOT_SAMPLED) return NOT_SAMPLED;
  const parent = traceOf(inst);
  if (parent !== null) {
    const spanId = parentNodeInstanceId === undefined ? parent.spanId : nodeSpanId(parent, parentNodeInstanceId);
    return newExecutionTrace({ traceId: parent.traceId, spanId });
  }
  if (continues !== undefined) return continues;
  const traceId = newTraceId();
  return tracer.samples(traceId) ? `${traceId}-${newSpanId()}` : NOT_SAMPLED;
}

/**
 * The record form of the trace a start's W3C `traceparent` continues (tracing on): a new span
 * of that trace, or NOT_SAMPLED when its caller samples it out; undefined when it is unreadable.
 */
export function continuedTrace(traceparent: string): string | undefined {
  if (traceparent === NOT_SAMPLED) return NOT_SAMPLED;
  const parent = parseTraceparent(traceparent);
  if (parent === null) return undefined;
  return parent.sampled === false ? NOT_SAMPLED : newExecutionTrace(parent);
}
