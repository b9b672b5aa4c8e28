// Answers through the engine: its lookup of the execution (organization, archive), answers and
// cancels racing in one tick, timeouts across a restart, archiving, the file store. What a step
// decides of an answer's data is in step/input.test.ts.
import t from 'tap';
import { STATE, STATUS } from '../../../src/daemon/state/state.js';
import { History } from '../../../src/daemon/store/history.js';
import { engineHarness, trail } from '../../helpers/engine.js';
import { inputFlow } from '../../helpers/flow-yaml.js';

const ORG = { organization: 'default' } as const;

t.test('task submission errors: unknown execution, another organization, node not waiting, archived', async (t) => {
  const h = await engineHarness(t);
  const pid = await h.publish(inputFlow('inputType: textbox'));
  const inst = await h.start(pid, { order: { id: 1 } });
  const base = { processInstanceId: inst.processInstanceId, action: 'COMPLETE' as const, data: { inputValue: 'a' } };
  await t.rejects(
    h.engine.submitTask({ ...ORG, ...base, nodeId: 'ask', processInstanceId: '0192f0c0-0000-7000-8000-000000000000' }),
    { code: 'INSTANCE_NOT_FOUND' },
  );
  await t.rejects(
    h.engine.submitTask({ organization: 'other', ...base, nodeId: 'ask' }),
    { code: 'INSTANCE_NOT_FOUND' },
    'another organization sees nothing',
  );
  await t.rejects(h.engine.submitTask({ ...ORG, ...base, nodeId: 'start' }), { code: 'NODE_NOT_WAITING' });
  await t.rejects(h.engine.submitTask({ ...ORG, ...base, nodeId: 'nope' }), { code: 'NODE_NOT_WAITING' });
  await h.engine.submitTask({ ...ORG, ...base, nodeId: 'ask' });
  await h.archived(inst.processInstanceId);
  await t.rejects(
    h.engine.submitTask({ ...ORG, ...base, nodeId: 'ask' }),
    { code: 'INSTANCE_NOT_RUNNING' },
    'a finished (archived) execution is not running',
  );
});

t.test(
  'two answers to one input node in the same tick: the first resumes it, the second finds it not waiting',
  async (t) => {
    const h = await engineHarness(t);
    const pid = await h.publish(
      inputFlow('inputType: textbox', '  wait2: { type: inputNode, inputType: textbox, next: done }').replace(
        'next: done\n  wait2',
        'next: wait2\n  wait2',
      ),
    );
    const inst = await h.start(pid, { order: { id: 7 } });
    const answer = (inputValue: string) =>
      h.engine.submitTask({
        ...ORG,
        processInstanceId: inst.processInstanceId,
        nodeId: 'ask',
        action: 'COMPLETE',
        data: { inputValue },
      });
    const [first, second] = await Promise.allSettled([answer('one'), answer('two')]);
    t.equal(first.status, 'fulfilled');
    t.match(second, { status: 'rejected', reason: { code: 'NODE_NOT_WAITING' } });
    const live = await h.get(inst.processInstanceId);
    t.equal(live.variables.inputValue, 'one', 'the first answer is the one taken');
    t.equal(Object.values(live.nodes).filter((n) => n.nodeId === 'wait2').length, 1, 'the next node was reached once');
  },
);

t.test('an answer and a cancel in the same tick: the cancel ends the execution as the answer left it', async (t) => {
  const h = await engineHarness(t);
  const pid = await h.publish(
    inputFlow('inputType: textbox', '  wait2: { type: inputNode, inputType: textbox, next: done }').replace(
      'next: done\n  wait2',
      'next: wait2\n  wait2',
    ),
  );
  const inst = await h.start(pid, { order: { id: 8 } });
  const [answered, cancelled] = await Promise.allSettled([
    h.engine.submitTask({
      ...ORG,
      processInstanceId: inst.processInstanceId,
      nodeId: 'ask',
      action: 'COMPLETE',
      data: { inputValue: 'x' },
    }),
    h.engine.cancel({ ...ORG, processInstanceId: inst.processInstanceId }),
  ]);
  t.equal(answered.status, 'fulfilled');
  t.equal(cancelled.status, 'fulfilled');
  const done = await h.get(inst.processInstanceId);
  t.equal(done.stateCd, STATE.CANCELLED);
  const byNode = Object.fromEntries(Object.values(done.nodes).map((n) => [n.nodeId, n.statusCd]));
  t.equal(byNode.ask, STATUS.COMPLETED, 'the answered node stays completed');
  t.equal(byNode.wait2, STATUS.CANCELLED, 'the node the answer reached is cancelled, not left waiting');
});

t.test('a timeout takes timeoutFlow (node TimedOut), or fails the execution with TIMEOUT', async (t) => {
  const h = await engineHarness(t);
  const withFlow = await h.publish(
    inputFlow('inputType: textbox\ntimeout: 30m\ntimeoutFlow: expired', '  expired: { type: endEvent }'),
  );
  const without = await h.publish(inputFlow('inputType: textbox\ntimeout: PT1H'));
  const a = await h.start(withFlow, { order: { id: 1 } });
  const b = await h.start(without, { order: { id: 1 } });
  t.equal(h.engine.timerCount, 2, 'a timer per waiting input with a timeout');
  h.advance(31 * 60_000);
  await h.waitFor((e) => e.type === 'PROCESS_COMPLETED' && e.processInstanceId === a.processInstanceId);
  const aDone = await h.get(a.processInstanceId);
  t.same(trail(aDone), ['start:2', `ask:${STATUS.TIMED_OUT}`, 'expired:2']);
  t.ok(h.events.some((e) => e.type === 'NODE_TIMEDOUT' && e.processInstanceId === a.processInstanceId));
  t.equal((await h.get(b.processInstanceId)).stateCd, STATE.RUNNING, 'the one-hour timeout has not passed');
  await h.close();
  h.clock.advance(60 * 60_000); // the daemon is down while the timeout passes
  const h2 = await h.restart();
  await h2.waitFor((e) => e.type === 'PROCESS_FAILED' && e.processInstanceId === b.processInstanceId);
  const bDone = await h2.get(b.processInstanceId);
  t.equal(bDone.stateCd, STATE.FAILED, 'overdue at restart: fires at once');
  t.match(bDone.error, { code: 'TIMEOUT', nodeId: 'ask' });
});

t.test('a 30-day input timeout waits its 30 days (its timer never overflows), then times out', async (t) => {
  const DAY = 24 * 3600_000;
  const h = await engineHarness(t);
  const pid = await h.publish(inputFlow('inputType: textbox\ntimeout: 30d'));
  const a = await h.start(pid, { order: { id: 1 } });
  t.equal(h.engine.timerCount, 1);
  h.advance(29 * DAY);
  // An overflowing setTimeout fires after 1 ms: it would have its turn before this 20 ms one.
  await new Promise((resolve) => setTimeout(resolve, 20));
  t.equal((await h.get(a.processInstanceId)).stateCd, STATE.RUNNING, 'a day before: still waiting');
  t.equal(h.engine.timerCount, 1);
  h.advance(DAY);
  await h.waitFor((e) => e.type === 'PROCESS_FAILED' && e.processInstanceId === a.processInstanceId);
  t.match((await h.get(a.processInstanceId)).error, { code: 'TIMEOUT', nodeId: 'ask' });
});

t.test(
  'archiving runs one batch at a time: executions that finish while one is written go together in the next',
  async (t) => {
    const h = await engineHarness(t);
    const pid = await h.publish(inputFlow('inputType: textbox'));
    const [first, ...rest] = await Promise.all([1, 2, 3].map((id) => h.start(pid, { order: { id } })));
    const archivedEntries: string[][] = [];
    h.store.onCommit((records) => {
      const ids = records
        .filter((r) => r.type === 'instance.archived')
        .map((r) => (r as { instanceId: string }).instanceId);
      if (ids.length > 0) archivedEntries.push(ids);
    });
    // The first history write waits for the gate; the writes after it must start once it is done.
    const putJson = History.prototype.putJson;
    let open!: () => void;
    const gate = new Promise<void>((resolve) => (open = resolve));
    let calls = 0;
    let firstDone = false;
    let startedBeforeFirstDone = 0;
    const firstPut = new Promise<void>((resolve) => {
      History.prototype.putJson = async function (this: History, ...args: Parameters<History['putJson']>) {
        if (++calls === 1) {
          resolve();
          await gate;
          await putJson.apply(this, args);
          firstDone = true;
          return;
        }
        if (!firstDone) startedBeforeFirstDone++;
        return putJson.apply(this, args);
      };
    });
    t.teardown(() => {
      History.prototype.putJson = putJson;
    });
    const answer = (id: string) =>
      h.engine.submitTask({
        ...ORG,
        processInstanceId: id,
        nodeId: 'ask',
        action: 'COMPLETE',
        data: { inputValue: 'ok' },
      });
    await answer(first!.processInstanceId);
    await firstPut;
    for (const inst of rest) await answer(inst.processInstanceId);
    // Turns of the event loop go by: the two finished executions wait for the batch under way.
    for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve));
    t.equal(calls, 1, 'no second batch while the first is written');
    open();
    for (const inst of [first!, ...rest]) await h.archived(inst.processInstanceId);
    t.equal(startedBeforeFirstDone, 0, 'the next batch wrote only once the first was written');
    t.same(
      archivedEntries,
      [[first!.processInstanceId], rest.map((i) => i.processInstanceId)],
      'the two that finished meanwhile left the live state in one journal entry',
    );
    for (const inst of [first!, ...rest]) t.equal((await h.get(inst.processInstanceId)).stateCd, STATE.COMPLETED);
  },
);

t.test('a file input takes a file of the file store and hands the flow its metadata', async (t) => {
  const h = await engineHarness(t);
  const pid = await h.publish(inputFlow('inputType: file'));
  const file = await h.files.put({
    organization: 'default',
    name: 'report.pdf',
    mimeType: 'application/pdf',
    content: Buffer.from('%PDF-1.7 hello'),
  });
  const other = await h.files.put({
    organization: 'acme',
    name: 'theirs.txt',
    mimeType: 'text/plain',
    content: Buffer.from('not yours'),
  });
  const meta = { fileId: file.fileId, name: 'report.pdf', mimeType: 'application/pdf', bytes: 14, sha256: file.sha256 };
  for (const value of [file.fileId, { fileId: file.fileId }]) {
    const inst = await h.start(pid, { order: { id: 1 } });
    await h.engine.submitTask({
      ...ORG,
      processInstanceId: inst.processInstanceId,
      nodeId: 'ask',
      action: 'COMPLETE',
      data: { inputValue: value },
    });
    const done = await h.get(inst.processInstanceId);
    t.equal(done.stateCd, STATE.COMPLETED);
    t.same(done.variables.inputValue, meta, 'the flow reads the file as stored');
  }
  const inst = await h.start(pid, { order: { id: 1 } });
  await t.rejects(
    h.engine.submitTask({
      ...ORG,
      processInstanceId: inst.processInstanceId,
      nodeId: 'ask',
      action: 'COMPLETE',
      data: { inputValue: other.fileId },
    }),
    { code: 'VALIDATION_ERROR', status: 422, message: /no file file_[0-9a-f]{32} in this organization/ },
    "another organization's file is not there",
  );
  t.equal((await h.get(inst.processInstanceId)).stateCd, STATE.RUNNING, 'still waiting');
});
