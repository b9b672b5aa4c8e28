import { mkdtempSync, rmSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { Engine } from '../../../src/daemon/engine/engine.js';
import { publishFlow } from '../../../src/daemon/flows/publish.js';
import { executionsTouched, WFX_STORE, type WfxRecord } from '../../../src/daemon/state/records.js';
import type { WfxState } from '../../../src/daemon/state/state.js';
import { History } from '../../../src/daemon/store/history.js';
import { Store } from '../../../src/daemon/store/store.js';
import { validateFlowSource } from '../../../src/shared/flow/validate.js';

const CHILD = `processId: 0a1b2c3d-4e5f-4a6b-8c7d-8e9f0a1b2c3d
name: Child
nodes:
  start: { type: startEvent, next: ask }
  ask: { type: inputNode, inputType: textbox, next: note }
  note: { type: setVariable, variables: { answered: "\${inputValue}" }, next: end }
  end: { type: endEvent }
`;
const PARENT = `processId: 1a1b2c3d-4e5f-4a6b-8c7d-8e9f0a1b2c3d
name: Parent
nodes:
  start: { type: startEvent, next: sub }
  sub: { type: subProcess, processId: 0a1b2c3d-4e5f-4a6b-8c7d-8e9f0a1b2c3d, next: end }
  end: { type: endEvent }
`;

const asJson = (state: WfxState): unknown => JSON.parse(JSON.stringify(state));

t.test('a checkpoint taken while executions start, wait, resume, finish and move to history is the state when it began', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'wfx-checkpoint-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  // Two executions per slice: the copy spans many turns of the event loop.
  const options = { dir, ...WFX_STORE, snapshotCollection: { ...executionsTouched, sliceEntries: 2 } };
  const store = await Store.open<WfxState, WfxRecord>(options);
  const history = await History.open(join(dir, 'history'));
  const engine = new Engine({ store, history });
  for (const source of [CHILD, PARENT]) {
    const v = validateFlowSource(source);
    if (!v.ok) throw new Error(JSON.stringify(v.problems));
    await publishFlow(store, { definition: v.flow, organization: 'default', environment: 'PRODUCTION' });
  }
  const start = (processId: string) => engine.start({ processId, organization: 'default', data: {} });
  await Promise.all(Array.from({ length: 20 }, () => start('1a1b2c3d-4e5f-4a6b-8c7d-8e9f0a1b2c3d')));
  await Promise.all(Array.from({ length: 10 }, () => start('0a1b2c3d-4e5f-4a6b-8c7d-8e9f0a1b2c3d')));
  await store.flush();
  const children = Object.values(store.state.instances).filter((i) => i.processId.startsWith('0a1b'));
  t.equal(children.length, 30, 'children waiting: 20 under a parent, 10 on their own');

  const before = asJson(store.state);
  const seq = store.lastSeq;
  const checkpoint = store.checkpoint();
  // While the copy runs: answers finish children (and so their parents, which then move to
  // history), new parents start children of their own (a child's start changes its parent).
  const answer = (id: string) => engine.submitTask({ organization: null, processInstanceId: id, nodeId: 'ask', action: 'COMPLETE', data: { inputValue: 'ok' } });
  await Promise.all([
    checkpoint,
    ...children.slice(0, 25).map((c) => answer(c.processInstanceId)),
    ...Array.from({ length: 10 }, () => start('1a1b2c3d-4e5f-4a6b-8c7d-8e9f0a1b2c3d')),
  ]);
  await engine.close(); // lets the archiving under way finish
  t.ok(store.lastSeq >= seq + 35, `journal entries after the checkpoint's: ${store.lastSeq - seq}`);

  const snapshot = JSON.parse(await readFile(join(dir, 'snapshot.json'), 'utf8')) as { seq: number; state: unknown };
  t.equal(snapshot.seq, seq);
  t.same(snapshot.state, before, 'every execution as it was when the checkpoint began');

  const live = asJson(store.state);
  await store.close({ checkpoint: false });
  await history.close();
  const again = await Store.open<WfxState, WfxRecord>(options);
  t.same(asJson(again.state), live, 'the snapshot and the journal after it give the live state back');
  await again.close({ checkpoint: false });
});
