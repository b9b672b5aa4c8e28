/**
 * The daemon's tracer, or null while tracing is off (the default). Process-wide, as one daemon
 * runs per process: the one cheap check (`TRACER !== null`) every instrumentation point makes
 * before it builds anything, so tracing off costs a load and a compare.
 */
import type { Tracer } from './tracer.js';

/** The tracer spans are made with; null: tracing is off and no span is made. */
export let TRACER: Tracer | null = null;

/** Turns tracing on (a tracer) or off (null): the daemon's start and stop. */
export function setTracer(tracer: Tracer | null): void {
  TRACER = tracer;
}
