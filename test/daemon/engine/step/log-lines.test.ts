// The log lines a step writes of a gateway's decision. A serviceTask's lines, which come from
// the work runner's HTTP calls, are in ../log-lines.test.ts.
import t from 'tap';
import { logEntries } from '../../../../src/daemon/state/log-line.js';
import { STATE } from '../../../../src/daemon/state/state.js';
import { FlowStep } from '../../../helpers/step-flows.js';

/** The messages of node `nodeId`'s log lines. */
const linesOf = (inst: Parameters<typeof logEntries>[0], nodeId: string): string[] =>
  logEntries(inst)
    .filter((l) => l.nodeId === nodeId)
    .map((l) => l.message);

t.test("a gateway's completed line names the branch it took: its condition, default or else", async (t) => {
  const m = new FlowStep();
  const pid = await m.publish(`
processId: AUTO
name: Gateways
nodes:
  start: { type: startEvent, next: size }
  size:
    type: exclusiveGateway
    name: Size?
    branches:
      - { condition: "\${size == 'big'}", next: check }
    default: check
  check: { type: ifElse, condition: "\${n > 5}", then: many, else: many }
  many:
    type: inclusiveGateway
    branches:
      - { condition: "\${n > 1}", next: a }
      - { condition: "\${n > 2}", next: b }
    default: a
  a: { type: endEvent }
  b: { type: endEvent }
`);
  const big = m.started(pid, { size: 'big', n: 9 });
  t.equal(big.stateCd, STATE.COMPLETED);
  t.same(linesOf(big, 'size').at(-1), `completed: took "\${size == 'big'}" to check`);
  t.same(linesOf(big, 'check').at(-1), 'completed: took "${n > 5}" to many');
  t.same(linesOf(big, 'many').at(-1), 'completed: took "${n > 1}" to a, "${n > 2}" to b');
  const small = m.started(pid, { size: 'small', n: 0 });
  t.same(linesOf(small, 'size').at(-1), 'completed: took default to check');
  t.same(linesOf(small, 'check').at(-1), 'completed: took else to many');
  t.same(linesOf(small, 'many').at(-1), 'completed: took default to a');
});
