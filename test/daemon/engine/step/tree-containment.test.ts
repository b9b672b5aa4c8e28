// Issue #81, as the step decides it: a tree of executions held to a budget of what it ever
// starts (tree-created), an organization to a pace of starts (org-starts-per-second), and a tree
// being cancelled starts nothing more. A tally kept across a restart and a bulk cancel through
// the engine are in ../tree-containment.test.ts.
import t from 'tap';
import type { WorkOrder } from '../../../../src/daemon/engine/step/index.js';
import type { WorkResult } from '../../../../src/daemon/outbound/result.js';
import { STATE, STATUS } from '../../../../src/daemon/state/state.js';
import { isWfxError } from '../../../../src/shared/errors.js';
import { bulkOf, MemoryStep, typesOf } from '../../../helpers/step.js';
import { FlowStep, running } from '../../../helpers/step-flows.js';
import { forkFlow, forkUntilFlow } from '../../../../bench/attack-flows.js';

/** What forkUntilFlow's script `return { below: vars.depth + 1 }` returns, as the work runner would hand it back. */
function below(order: WorkOrder): WorkResult | undefined {
  if (order.request.kind !== 'script') return undefined;
  return { ok: true, value: { below: Number(order.request.run.vars.depth) + 1 } };
}

/** How many executions the steps so far started. */
const starts = (m: FlowStep): number => m.events.filter((e) => e.type === 'PROCESS_STARTED').length;

/** The codes the failed executions of the events so far failed with (a sample of 50). */
function failureCodes(m: FlowStep): Set<string> {
  const failed = m.events.filter((e) => e.type === 'PROCESS_FAILED').map((e) => e.processInstanceId);
  return new Set(failed.slice(0, 50).map((id) => m.instance(id).error?.code ?? '?'));
}

t.test('tree-created: the fork of issue #81 makes no more than the budget, then its tree ends', async (t) => {
  const m = new FlowStep({ limits: { treeCreated: 40 } });
  const pid = crypto.randomUUID();
  await m.publish(forkFlow(pid));
  const root = m.started(pid);
  t.equal(running(m).length, 0, 'the tree has ended');
  t.equal(starts(m), 1 + 40, 'the root and exactly the budget under it');
  t.same([...failureCodes(m)], ['TREE_BUDGET_EXCEEDED'], 'what would pass it failed with its code');
  t.same(m.state.treeCreated, {}, "the tree's tally is forgotten once nothing of it runs");
  const failed = m.instance(m.events.find((e) => e.type === 'PROCESS_FAILED')!.processInstanceId);
  t.match(failed.error?.message, /tree-created limit/, 'the message names the limit');
  t.equal(failed.root, root.processInstanceId, 'and the failure is in the root’s tree');
});

t.test('tree-created: a recursion that stops in time runs whole; one deeper fails at the budget', async (t) => {
  const m = new FlowStep({ limits: { treeCreated: 14 }, work: below });
  const pid = crypto.randomUUID();
  await m.publish(forkUntilFlow(pid));
  m.start(pid, { depth: 0, until: 3 });
  t.equal(running(m).length, 0, 'the tree has ended');
  t.equal(starts(m), 1 + 2 + 4 + 8, 'three levels: fourteen under the root');
  t.notOk(
    m.events.some((e) => e.type === 'PROCESS_FAILED'),
    'none failed',
  );

  const deeper = crypto.randomUUID();
  await m.publish(forkUntilFlow(deeper));
  const before = starts(m);
  m.start(deeper, { depth: 0, until: 4 });
  t.equal(running(m).length, 0, 'the tree has ended');
  t.equal(starts(m) - before, 1 + 14, 'a fourth level would be thirty: the budget of fourteen is all it gets');
  t.same([...failureCodes(m)], ['TREE_BUDGET_EXCEEDED']);
});

t.test(
  'org-starts-per-second: starts past the pace are refused, or fail their node; each organization its own',
  async (t) => {
    const m = new FlowStep({ limits: { organizationStartsPerSecond: 3 } });
    const plain = await m.publish(`processId: AUTO
name: Plain
nodes:
  start: { type: startEvent, next: end }
  end: { type: endEvent }
`);
    const caller = await m.publish(`processId: AUTO
name: Caller
nodes:
  start: { type: startEvent, next: call }
  call: { type: callProcess, processId: ${plain}, next: end }
  end: { type: endEvent }
`);
    for (let i = 0; i < 3; i++) t.equal(m.started(plain).stateCd, STATE.COMPLETED, `start ${i + 1} of 3`);
    let refused: unknown;
    try {
      m.start(plain);
    } catch (err) {
      refused = err;
    }
    t.ok(isWfxError(refused) && refused.code === 'ORG_RATE_EXCEEDED', 'the fourth in the same second is refused');
    t.match(isWfxError(refused) && refused.details, { retryAfter: 1 }, 'with when to retry');
    const elsewhere = await m.publish(
      `processId: AUTO
name: Elsewhere
nodes:
  start: { type: startEvent, next: end }
  end: { type: endEvent }
`,
      'other',
    );
    t.equal(m.startedIn('other', elsewhere).stateCd, STATE.COMPLETED, 'another organization starts');

    m.ms += 400;
    // One start's room came back: the caller takes it, and its call finds none.
    const called = m.started(caller);
    t.equal(called.stateCd, STATE.FAILED);
    t.equal(called.error?.code, 'ORG_RATE_EXCEEDED', 'a callProcess past the pace fails its node');
    t.match(called.error?.message, /org-starts-per-second/);
    m.ms += 1000;
    t.equal(m.started(caller).stateCd, STATE.COMPLETED, 'a second later both go');
  },
);

t.test('step: an execution whose tree is being cancelled is cancelled where it would start another', async (t) => {
  const m = new MemoryStep();
  const target = await m.publish(`processId: AUTO
name: Target
nodes:
  start: { type: startEvent, next: end }
  end: { type: endEvent }
`);
  const pid = await m.publish(`processId: AUTO
name: Asks then calls
nodes:
  start: { type: startEvent, next: ask }
  ask: { type: inputNode, inputType: textbox, next: call }
  call: { type: callProcess, processId: ${target}, next: end }
  end: { type: endEvent }
`);
  const id = m.start(pid).answer.processInstanceId;
  bulkOf(m, [], { bulkId: 'b1', query: { rootId: id } });
  const { records } = m.run({
    kind: 'answer',
    instanceId: id,
    nodeId: 'ask',
    action: 'COMPLETE',
    data: { inputValue: 'go' },
  });
  t.notOk(typesOf(records).includes('instance.started'), 'nothing started');
  t.equal(m.instance(id).stateCd, STATE.CANCELLED, 'the execution is cancelled');
  t.equal(m.node(id, 'call').statusCd, STATUS.CANCELLED, 'at the node that would have started one');
  t.match(JSON.stringify(m.instance(id).logs), /cancelled by bulk operation b1/, 'its log says why');
});
