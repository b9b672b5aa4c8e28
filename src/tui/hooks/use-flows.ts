import type { ApiClient } from '../../cli/client.js';
import { usePolled, type Polled } from './use-polled.js';

/** A flow as GET /admin/flows lists it. */
export interface FlowSummary {
  readonly processId: string;
  readonly name: string;
  readonly organization: string;
  readonly public: boolean;
  /** Environment -> its active version (`{PRODUCTION: "2", DEVELOPMENT: "3"}`); an environment without one is absent. */
  readonly active: Readonly<Record<string, string>>;
  readonly versions: ReadonlyArray<{ readonly version: string; readonly publishedAt: string }>;
}

/** The environments every daemon has, in the order the TUI shows them; others the API names follow. */
export const ENVIRONMENTS = ['PRODUCTION', 'DEVELOPMENT'] as const;

/** The environments to show for `flows`: the standard two, then any other one the API names. */
export function environmentsOf(flows: readonly FlowSummary[]): string[] {
  const out: string[] = [...ENVIRONMENTS];
  for (const f of flows) for (const env of Object.keys(f.active)) if (!out.includes(env)) out.push(env);
  return out;
}

/** The highest version number of a flow ('' when it has none). */
export function latestVersion(flow: FlowSummary): string {
  return flow.versions.reduce((max, v) => (max === '' || Number(v.version) > Number(max) ? v.version : max), '');
}

/** GET /admin/flows, sorted by name. */
export async function loadFlows(client: ApiClient): Promise<FlowSummary[]> {
  const { items } = await client.get<{ items: FlowSummary[] }>('/admin/flows');
  return [...items].sort((a, b) => a.name.localeCompare(b.name) || a.processId.localeCompare(b.processId));
}

/** The flows the credential may read, re-read when executions change and every `intervalMs` (publishes send no event). */
export function useFlows(client: ApiClient, changes: number, intervalMs = 5000): Polled<FlowSummary[]> {
  return usePolled(() => loadFlows(client), changes, intervalMs);
}
