// The limits where they need the engine: across a restart, and in the journal. What a step
// decides of each limit is in step/limits.test.ts.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { STATE, type Execution } from '../../../src/daemon/state/state.js';
import { engineHarness } from '../../helpers/engine.js';
import { liveInstances } from '../../helpers/state.js';

/** The execution's error code (it failed), or what it is instead. */
const failedWith = (inst: Execution): string =>
  inst.stateCd === STATE.FAILED ? (inst.error?.code ?? 'no error') : `state ${inst.stateCd}`;

t.test('recovery: an execution over limits lowered since the last start is failed, the others go on', async (t) => {
  let h = await engineHarness(t);
  const pid = await h.publish(`
processId: AUTO
name: Holds a lot
nodes:
  start: { type: startEvent, next: ask }
  ask: { type: inputNode, inputType: textbox, next: done }
  done: { type: endEvent }
`);
  const heavy = await h.start(pid, { blob: 'b'.repeat(64 * 1024) });
  const light = await h.start(pid, { n: 1 });
  await h.close();
  h = await engineHarness(t, h.dir, h.clock, { limits: { variablesBytes: 16 * 1024 } });
  t.equal(failedWith(await h.get(heavy.processInstanceId)), 'VARIABLES_TOO_LARGE', 'over the new limit: failed');
  t.equal((await h.get(light.processInstanceId)).stateCd, STATE.RUNNING, 'within it: still waits');
});

t.test("a loop's progress writes its items once: the journal grows with the collection, not its square", async (t) => {
  const h = await engineHarness(t);
  const pid = await h.publish(`
processId: AUTO
name: Long loop
nodes:
  start: { type: startEvent, next: each }
  each:
    type: loopNode
    collection: "{items}"
    collect: out
    nodes:
      s: { type: startEvent, next: ask }
      ask: { type: inputNode, inputType: textbox, next: keep }
      keep: { type: setVariable, variables: { out: "{inputValue}" }, next: e }
      e: { type: endEvent }
    next: done
  done: { type: endEvent }
`);
  const items = Array.from({ length: 300 }, (_, i) => `item ${i} `.padEnd(200, '.'));
  const itemsBytes = JSON.stringify(items).length;
  const inst = await h.start(pid, { items });
  // What the journal holds, without the zeros its segments are written over (decision 014).
  const journal = () =>
    readdirSync(join(h.dir, 'journal'))
      .map((f) => readFileSync(join(h.dir, 'journal', f), 'utf8').replace(/\0+$/, ''))
      .join('');
  const journalBytes = () => journal().length;
  const before = journalBytes();
  for (let i = 0; i < items.length; i++) {
    const child = liveInstances(h.store.state).find(
      (c) => c.parentInstanceId === inst.processInstanceId && c.stateCd === STATE.RUNNING,
    );
    await h.engine.submitTask({
      organization: 'default',
      processInstanceId: child!.processInstanceId,
      nodeId: 'ask',
      action: 'COMPLETE',
      data: { inputValue: `v${i}` },
    });
  }
  const done = await h.get(inst.processInstanceId);
  t.equal(done.stateCd, STATE.COMPLETED);
  t.same(
    done.variables.out,
    items.map((_, i) => `v${i}`),
    'every value collected in order',
  );
  // What the loop's own progress wrote: its counts and each collected value, never its items
  // or the variables its iterations left as they were (each iteration's start still carries a
  // copy of the variables: that is linear in them, once per iteration).
  // A journal frame is `<crc32> <seq> <write-key> <records as JSON>`, one a line.
  const progress = journal()
    .split('\n')
    .flatMap((line) => {
      const json = /^\S+ \S+ \S+ (.*)$/.exec(line)?.[1];
      return json === undefined ? [] : (JSON.parse(json) as Array<{ type: string }>);
    })
    .filter((r) => r.type === 'loop.progressed')
    .map((r) => JSON.stringify(r));
  const progressBytes = progress.reduce((sum, r) => sum + r.length, 0);
  t.ok(progressBytes < items.length * 1024, `progress: ${progressBytes} bytes for ${items.length} iterations`);
  t.ok(journalBytes() - before < items.length * (2 * itemsBytes), 'the journal grew by about one copy per iteration');
  t.ok(progress.length >= items.length - 1, 'progress written as loop.progressed records');
});
