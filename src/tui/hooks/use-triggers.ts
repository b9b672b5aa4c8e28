import type { WfxClient } from '../../client/client.js';
import type { TriggerHealth } from '../../shared/api/index.js';
import { usePolled, type Polled } from './use-polled.js';

/** One trigger's health as GET /admin/triggers gives it (the wire's type). */
export type { TriggerHealth };

/** GET /admin/triggers (the daemon sorts them by flow, environment, type). */
export async function loadTriggers(client: WfxClient): Promise<TriggerHealth[]> {
  return [...(await client.triggers.list()).items];
}

/** Trigger health, re-read when executions change (a fire starts one) and every `intervalMs` (a refused webhook delivery sends no event). */
export function useTriggers(client: WfxClient, changes: number, intervalMs = 5000): Polled<TriggerHealth[]> {
  return usePolled(() => loadTriggers(client), changes, intervalMs);
}
