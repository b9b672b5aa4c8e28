/**
 * The flow of the e2e tests that restart or kill a daemon over waiting executions: each waits
 * for an answer at `ask`, then for the message `paid` under its correlation key.
 */

/** The flow's source, under `processId`. */
export function askThenPay(processId: string): string {
  return `processId: ${processId}
name: Ask then wait
nodes:
  start: { type: startEvent, next: ask }
  ask: { type: inputNode, inputType: textbox, next: pay }
  pay: { type: intermediateCatchEvent, eventType: message, messageRef: paid, next: done }
  done: { type: endEvent }
`;
}

/** What those tests read of GET /process/instance/:id. */
export interface ExecutionView {
  stateCd: number;
  data: Record<string, unknown>;
  nodes: { nodeId: string; statusCd: number }[];
}
