/**
 * The longest `timeout` a node may state where the daemon keeps the work in memory while it runs
 * (a script in a sandbox worker, an HTTP or model call in flight). Waits kept in the journal
 * (an input's or a job's timeout, timers) have no ceiling here: the engine's timer heap re-arms
 * for far deadlines. The validator refuses a longer timeout at publish; the daemon clamps one
 * published before the ceiling, so no setTimeout ever gets a delay it would overflow (32 bits).
 */

const MINUTE = 60_000;

/**
 * A scriptTask's ceiling: a run holds one of the few sandbox workers the organizations share
 * (n8n's Code node stops a task after 300 s by default). Longer work belongs in a domainTask.
 */
export const MAX_SCRIPT_TIMEOUT_MS = 5 * MINUTE;

/** An attempt of a serviceTask, aiTask, callAgent or voiceTask: a request, not a job. */
export const MAX_CALL_TIMEOUT_MS = 60 * MINUTE;

/** The node types whose `timeout` has a ceiling, and the ceiling in milliseconds. */
const CEILINGS: Readonly<Record<string, number>> = {
  scriptTask: MAX_SCRIPT_TIMEOUT_MS,
  serviceTask: MAX_CALL_TIMEOUT_MS,
  aiTask: MAX_CALL_TIMEOUT_MS,
  callAgent: MAX_CALL_TIMEOUT_MS,
  voiceTask: MAX_CALL_TIMEOUT_MS,
};

/** The ceiling of a `nodeType` node's `timeout` in milliseconds, or undefined when it has none. Pure. */
export function timeoutCeiling(nodeType: unknown): number | undefined {
  return typeof nodeType === 'string' && Object.hasOwn(CEILINGS, nodeType) ? CEILINGS[nodeType] : undefined;
}
