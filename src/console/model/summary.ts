/* An execution read whole (GET /process/instance/{id}) as the list shows it. */
import { waitingFor, type InstanceSummary, type InstanceView } from '../../shared/api/process.js';

/** The list's row of execution `v`: its children counted, its waiting nodes, its failure code. Pure. */
export function summaryOf(v: InstanceView): InstanceSummary {
  return {
    processInstanceId: v.processInstanceId,
    processId: v.processId,
    processName: v.processName,
    processVersion: v.processVersion,
    stateCd: v.stateCd,
    state: v.state,
    startTime: v.startTime,
    endTime: v.endTime,
    correlationKey: v.correlationKey,
    parentInstanceId: v.parentInstanceId,
    childCount: v.nodes.reduce((n, ni) => n + (ni.childInstanceIds?.length ?? 0), 0),
    waitingNodeIds: v.nodes.filter((ni) => ni.statusCd === 1).map((ni) => ni.nodeId),
    ...waitsOf(v),
    environment: v.environment,
    errorCode: v.state === 'FAILED' ? (v.data.error?.code ?? null) : null,
  };
}

/** Where running execution `v` waits and for what, as the list's summary says (absent: nowhere). Pure. */
export function waitsOf(v: InstanceView): Pick<InstanceSummary, 'waits'> {
  if (v.state !== 'RUNNING') return {};
  const waits = v.nodes.flatMap((ni) =>
    ni.statusCd === 1 && ni.wait ? [{ nodeId: ni.nodeId, nodeName: ni.nodeName, for: waitingFor(ni.wait.kind) }] : [],
  );
  return waits.length > 0 ? { waits } : {};
}
