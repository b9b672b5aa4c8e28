import type { WfxClient } from '../../client/client.js';
import type { FailureGroup, FailureGroups, InstanceSummary } from '../../shared/api/index.js';
import { usePolled, type Polled } from './use-polled.js';

/** One group of failures as GET /process/failures gives it (the wire's type). */
export type { FailureGroup, FailureGroups };

/** The most groups the failures screen reads. */
const GROUPS = 100;
/** The most executions of one group it lists (the newest). */
const GROUP_EXECUTIONS = 200;

/** GET /process/failures: the largest groups first (what an operator looks at first). */
export function loadFailures(client: WfxClient): Promise<FailureGroups> {
  return client.instances.failures({ sort: 'count', limit: GROUPS });
}

/** The failures, re-read when executions change and every `intervalMs`. */
export function useFailures(client: WfxClient, changes: number, intervalMs = 5000): Polled<FailureGroups> {
  return usePolled(() => loadFailures(client), changes, intervalMs);
}

/** The executions of `group`, newest first: GET /process/instances with its flow, code and node. */
export async function loadGroupExecutions(client: WfxClient, group: FailureGroup): Promise<InstanceSummary[]> {
  const page = await client.instances.search({
    processId: group.processId,
    state: 'FAILED',
    errorCode: group.errorCode,
    ...(group.nodeId !== null && { failedNode: group.nodeId }),
    limit: GROUP_EXECUTIONS,
  });
  return [...page.items];
}

/** The executions of `group`, read when it is shown (mount it once per group) and when executions change. */
export function useGroupExecutions(client: WfxClient, group: FailureGroup, changes: number): Polled<InstanceSummary[]> {
  return usePolled(() => loadGroupExecutions(client, group), changes, null);
}
