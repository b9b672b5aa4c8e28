import type { ApiClient } from '../../cli/client.js';
import type { TriggerHealth } from '../../daemon/triggers/health.js';
import { usePolled, type Polled } from './use-polled.js';

/** One trigger's health as GET /admin/triggers gives it (the daemon's own type: one shape). */
export type { TriggerHealth };

/** GET /admin/triggers (the daemon sorts them by flow, environment, type). */
export async function loadTriggers(client: ApiClient): Promise<TriggerHealth[]> {
  return (await client.get<{ items: TriggerHealth[] }>('/admin/triggers')).items;
}

/** Trigger health, re-read when executions change (a fire starts one) and every `intervalMs` (a refused webhook delivery sends no event). */
export function useTriggers(client: ApiClient, changes: number, intervalMs = 5000): Polled<TriggerHealth[]> {
  return usePolled(() => loadTriggers(client), changes, intervalMs);
}
