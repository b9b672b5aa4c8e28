import t from 'tap';
import { waitingTasks } from '../../../src/daemon/engine/tasks.js';
import { STATE } from '../../../src/daemon/state/state.js';
import { engineHarness } from '../../helpers/engine.js';

// Claiming a task (POST /process/task CLAIM, UNCLAIM): only who claimed it answers it, claims
// it again or gives it back, unless a caller takes it over; a claim is kept over a restart.

const ORG = { organization: 'default' } as const;
const ASK = `processId: AUTO
name: Ask
nodes:
  start: { type: startEvent, next: ask }
  ask: { type: inputNode, inputType: textbox, next: done }
  done: { type: endEvent }
`;

t.test('a claimed task is answered by who claimed it, or taken over', async (t) => {
  let h = await engineHarness(t);
  const pid = await h.publish(ASK);
  const id = (await h.start(pid)).processInstanceId;
  const act = (by: string, action: 'COMPLETE' | 'CANCEL' | 'CLAIM' | 'UNCLAIM', takeOver = false) =>
    h.engine.submitTask({
      ...ORG,
      processInstanceId: id,
      nodeId: 'ask',
      action,
      data: { inputValue: `from ${by}` },
      by,
      ...(takeOver && { takeOver: true }),
    });
  const claimOf = async () =>
    (await waitingTasks(h.store.state, h.engine.executions, { ...ORG, limit: 10 })).items[0]?.claim ?? null;

  t.equal(await claimOf(), null, 'nobody claimed it yet');
  await act('key:ada', 'CLAIM');
  t.match(await claimOf(), { by: 'key:ada', name: 'key:ada', at: /^\d{4}-/ }, 'claimed by ada');
  await act('key:ada', 'CLAIM');
  t.match(await claimOf(), { by: 'key:ada' }, 'claiming it again changes nothing');
  await t.rejects(act('key:bob', 'COMPLETE'), { code: 'TASK_CLAIMED', details: { claimedBy: 'key:ada' } });
  await t.rejects(act('key:bob', 'CANCEL'), { code: 'TASK_CLAIMED' });
  await t.rejects(act('key:bob', 'CLAIM'), { code: 'TASK_CLAIMED' }, 'nor claims it');
  await t.rejects(act('key:bob', 'UNCLAIM'), { code: 'TASK_CLAIMED' }, 'nor gives it back');
  t.equal((await h.get(id)).stateCd, STATE.RUNNING, 'the refused answers changed nothing');

  h = await h.restart();
  t.match(await claimOf(), { by: 'key:ada' }, 'the claim is kept over a restart');
  await act('key:ada', 'UNCLAIM');
  t.equal(await claimOf(), null, 'given back');
  await act('key:bob', 'CLAIM');
  await act('key:cy', 'CLAIM', true);
  t.match(await claimOf(), { by: 'key:cy' }, 'taken over');
  await act('key:ada', 'COMPLETE', true);
  const done = await h.get(id);
  t.equal(done.stateCd, STATE.COMPLETED, 'answered by taking it over');
  const ask = Object.values(done.nodes).find((n) => n.nodeId === 'ask')!;
  t.equal(ask.answeredBy, 'key:ada');
  t.equal(ask.claimedBy, 'key:cy', 'the node keeps who had claimed it');
});
