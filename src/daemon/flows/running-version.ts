import type { Flow, FlowVersion } from '../state/state.js';

/**
 * The version of `flow` that runs: PRODUCTION's active version, else DEVELOPMENT's, else the
 * newest. Its name and triggers are the flow's wherever flows are listed (GET /admin/flows,
 * GET /process/list), so a flow is named as `wfx run NAME` finds it. Pure.
 */
export function runningVersion(flow: Flow): FlowVersion {
  const active = flow.versions[flow.active.PRODUCTION ?? flow.active.DEVELOPMENT ?? ''];
  if (active) return active;
  const newest = Object.keys(flow.versions).sort((a, b) => Number(a) - Number(b)).at(-1)!;
  return flow.versions[newest]!;
}

/** The name and the trigger types (each once, in the order declared) of `flow`'s running version. Pure. */
export function flowListing(flow: Flow): { readonly name: string; readonly triggers: string[] } {
  const v = runningVersion(flow);
  return { name: v.definition.name, triggers: [...new Set((v.definition.triggers ?? []).map((t) => t.type))] };
}
