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

/**
 * Answers `ask` of every execution of `ids` at once (inputValue `a-<its index>`, through
 * `answer`, which gives the status) and SIGKILLs process `pid` once `killAfter` answers were
 * acknowledged, the rest in flight: those acknowledged, and whether it was killed.
 */
export async function answerThenKill(
  ids: readonly string[],
  answer: (body: object) => Promise<number>,
  killAfter: number,
  pid: number,
): Promise<{ answered: string[]; killed: boolean }> {
  const answered: string[] = [];
  let killed = false;
  await Promise.all(
    ids.map(async (id, i) => {
      try {
        const status = await answer({
          processInstanceId: id,
          nodeId: 'ask',
          action: 'COMPLETE',
          data: { inputValue: `a-${i}` },
        });
        if (status !== 200) return;
        answered.push(id);
        if (answered.length >= killAfter && !killed) {
          killed = true;
          process.kill(pid, 'SIGKILL');
        }
      } catch {
        // cut off by the kill: never acknowledged, so nothing is owed
      }
    }),
  );
  return { answered, killed };
}
