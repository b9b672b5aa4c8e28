import type { WfxClient } from '../../client/client.js';
import type { DomainHealth } from '../../shared/api/index.js';
import { usePolled, type Polled } from './use-polled.js';

/** One domain's jobs and workers as GET /jobs/workers gives it (the wire's type). */
export type { DomainHealth };

/** GET /jobs/workers (the daemon sorts them by organization and name). */
export async function loadWorkers(client: WfxClient): Promise<DomainHealth[]> {
  return [...(await client.jobs.workers()).items];
}

/** Domains and their workers, re-read when executions change and every `intervalMs` (a worker's poll sends no event). */
export function useWorkers(client: WfxClient, changes: number, intervalMs = 5000): Polled<DomainHealth[]> {
  return usePolled(() => loadWorkers(client), changes, intervalMs);
}
