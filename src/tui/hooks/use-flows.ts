import type { WfxClient } from '../../client/client.js';
import { ENVIRONMENTS, type FlowSummary } from '../../shared/api/index.js';
import { usePolled, type Polled } from './use-polled.js';

/** A flow as GET /admin/flows lists it (the wire's type). */
export type { FlowSummary };

/** The environments every daemon has, in the order the TUI shows them (production first); others the API names follow. */
export const SHOWN_ENVIRONMENTS: readonly string[] = ENVIRONMENTS.toReversed();

/** The environments to show for `flows`: the standard two, then any other one the API names. */
export function environmentsOf(flows: readonly FlowSummary[]): string[] {
  const out: string[] = [...SHOWN_ENVIRONMENTS];
  for (const f of flows) for (const env of Object.keys(f.active)) if (!out.includes(env)) out.push(env);
  return out;
}

/** The highest version number of a flow ('' when it has none). */
export function latestVersion(flow: FlowSummary): string {
  return flow.versions.reduce((max, v) => (max === '' || Number(v.version) > Number(max) ? v.version : max), '');
}

/** GET /admin/flows, sorted by name. */
export async function loadFlows(client: WfxClient): Promise<FlowSummary[]> {
  const { items } = await client.flows.list();
  return [...items].sort((a, b) => a.name.localeCompare(b.name) || a.processId.localeCompare(b.processId));
}

/** The flows the credential may read, re-read when executions change and every `intervalMs` (publishes send no event). */
export function useFlows(client: WfxClient, changes: number, intervalMs = 5000): Polled<FlowSummary[]> {
  return usePolled(() => loadFlows(client), changes, intervalMs);
}
