import { mkdtempSync, rmSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { Engine } from '../../../src/daemon/engine/engine.js';
import { publishFlow } from '../../../src/daemon/flows/publish.js';
import { executionsTouched, WFX_STORE, type WfxRecord } from '../../../src/daemon/state/records.js';
import { liveInstances } from '../../helpers/state.js';
import { DERIVED, STATE, STATUS, type WfxState } from '../../../src/daemon/state/state.js';
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

/** The state as a snapshot holds it: JSON, without what is derived (the engine's recovery rebuilds it). */
const asJson = (state: WfxState): unknown => {
  const json = JSON.parse(JSON.stringify(state)) as Record<string, unknown>;
  for (const key of DERIVED) delete json[key];
  return json;
};

t.test(
  'a checkpoint taken while executions start, wait, resume, finish and move to history is the state when it began',
  async (t) => {
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
    const children = liveInstances(store.state).filter((i) => i.processId.startsWith('0a1b'));
    t.equal(children.length, 30, 'children waiting: 20 under a parent, 10 on their own');

    const before = asJson(store.state);
    const seq = store.lastSeq;
    const checkpoint = store.checkpoint();
    // While the copy runs: answers finish children (and so their parents, which then move to
    // history), new parents start children of their own (a child's start changes its parent).
    const answer = (id: string) =>
      engine.submitTask({
        organization: null,
        processInstanceId: id,
        nodeId: 'ask',
        action: 'COMPLETE',
        data: { inputValue: 'ok' },
      });
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
  },
);

const WAITS = `processId: 2a1b2c3d-4e5f-4a6b-8c7d-8e9f0a1b2c3d
name: Waits for input or a message
nodes:
  start: { type: startEvent, next: route }
  route: { type: ifElse, condition: "\${kind == 'task'}", then: ask, else: hear }
  ask: { type: inputNode, inputType: textbox, next: after }
  hear: { type: intermediateCatchEvent, eventType: message, messageRef: paid, next: after }
  after: { type: setVariable, variables: { done: true, note: "\${note}" }, next: end }
  end: { type: endEvent }
`;

t.test(
  'checkpoints one after the other copy unchanged executions as bytes, and each is the state when it began',
  async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'wfx-checkpoint-'));
    t.teardown(() => rmSync(dir, { recursive: true, force: true }));
    const checkpoints: Array<{ bytes: number; reusedBytes: number }> = [];
    const logger = {
      info: (o: object) => void ('reusedBytes' in o && checkpoints.push(o as never)),
      warn() {},
      error() {},
    };
    const options = { dir, ...WFX_STORE, snapshotCollection: { ...executionsTouched, sliceEntries: 3 }, logger };
    const store = await Store.open<WfxState, WfxRecord>(options);
    const history = await History.open(join(dir, 'history'));
    const engine = new Engine({ store, history });
    for (const source of [CHILD, PARENT, WAITS]) {
      const v = validateFlowSource(source);
      if (!v.ok) throw new Error(JSON.stringify(v.problems));
      await publishFlow(store, { definition: v.flow, organization: 'default', environment: 'PRODUCTION' });
    }
    const start = (processId: string, data: Record<string, unknown> = {}, correlationKey?: string) =>
      engine.start({
        processId,
        organization: 'default',
        data,
        ...(correlationKey !== undefined && { correlationKey }),
      });
    const answer = (id: string, nodeId = 'ask') =>
      engine.submitTask({
        organization: null,
        processInstanceId: id,
        nodeId,
        action: 'COMPLETE',
        data: { inputValue: 'ok ü' },
      });
    const waiting = (prefix: string) =>
      liveInstances(store.state).filter((i) => i.processId.startsWith(prefix) && i.stateCd === STATE.RUNNING);
    const waitsAt = (nodeId: string) =>
      waiting('2a1b').filter((i) =>
        Object.values(i.nodes).some((n) => n.nodeId === nodeId && n.statusCd === STATUS.WAITING),
      );
    let key = 0;
    const more = () => [
      ...Array.from({ length: 8 }, () => start('1a1b2c3d-4e5f-4a6b-8c7d-8e9f0a1b2c3d')),
      ...Array.from({ length: 8 }, (_, i) =>
        start(
          '2a1b2c3d-4e5f-4a6b-8c7d-8e9f0a1b2c3d',
          { kind: i % 2 === 0 ? 'task' : 'event', note: `n°${key} 💡` },
          `c-${key++}`,
        ),
      ),
    ];
    await Promise.all(more());

    for (let round = 0; round < 4; round++) {
      await store.flush();
      const before = asJson(store.state);
      const seq = store.lastSeq;
      const checkpoint = store.checkpoint();
      // While the copy runs: answers (children finish, and so their parents), messages, new starts.
      const tasks = waitsAt('ask');
      const events = waitsAt('hear');
      t.ok(
        tasks.length >= 2 && events.length >= 2 && waiting('0a1b').length >= 4,
        `round ${round}: executions waiting for input and messages`,
      );
      await Promise.all([
        checkpoint,
        ...waiting('0a1b')
          .slice(0, 4)
          .map((c) => answer(c.processInstanceId)),
        ...tasks.slice(0, 2).map((i) => answer(i.processInstanceId)),
        ...events.slice(0, 2).map((i) =>
          engine.publishEvent({
            organization: 'default',
            eventType: 'paid',
            correlationKey: i.correlationKey!,
            data: { paid: true },
          }),
        ),
        ...more(),
      ]);
      const snapshot = JSON.parse(await readFile(join(dir, 'snapshot.json'), 'utf8')) as {
        seq: number;
        state: unknown;
      };
      t.equal(snapshot.seq, seq, `round ${round}: the snapshot of entry ${seq}`);
      t.same(snapshot.state, before, `round ${round}: every execution as it was when the checkpoint began`);
    }
    t.equal(checkpoints.length, 4);
    t.equal(checkpoints[0]!.reusedBytes, 0, 'the first serializes every execution');
    for (const c of checkpoints.slice(1))
      t.ok(c.reusedBytes > 0, `later ones copy unchanged executions: ${c.reusedBytes} of ${c.bytes} bytes`);
    t.ok(
      checkpoints[3]!.reusedBytes > checkpoints[1]!.reusedBytes,
      'more of them as executions that keep waiting pile up',
    );

    await engine.close();
    const live = asJson(store.state);
    await store.close({ checkpoint: false });
    await history.close();
    const again = await Store.open<WfxState, WfxRecord>({ ...options, logger: undefined });
    t.same(asJson(again.state), live, 'the last snapshot and the journal after it give the live state back');
    await again.close({ checkpoint: false });

    // After a start: the first checkpoint copies the executions unchanged since the snapshot loaded
    // (found from its layout, once indexed), while answers and messages land as it copies.
    const restarted = await Store.open<WfxState, WfxRecord>(options);
    const history2 = await History.open(join(dir, 'history'));
    const engine2 = new Engine({ store: restarted, history: history2 });
    await engine2.recover();
    const inFlow = (prefix: string, nodeId: string) =>
      liveInstances(restarted.state).filter(
        (i) =>
          i.processId.startsWith(prefix) &&
          i.stateCd === STATE.RUNNING &&
          Object.values(i.nodes).some((n) => n.nodeId === nodeId && n.statusCd === STATUS.WAITING),
      );
    // Indexed first: a checkpoint asked for while the snapshot loaded is still being indexed is
    // the state when that ends (a slow machine's case), not when it was asked for.
    await restarted.indexed();
    await restarted.commit({
      type: 'messageId.seen',
      key: 'something to checkpoint',
      until: '2099-01-01T00:00:00.000Z',
    });
    const expected = asJson(restarted.state);
    const seq = restarted.lastSeq;
    const checkpoint = restarted.checkpoint();
    await Promise.all([
      checkpoint,
      ...inFlow('0a1b', 'ask')
        .slice(0, 4)
        .map((c) =>
          engine2.submitTask({
            organization: null,
            processInstanceId: c.processInstanceId,
            nodeId: 'ask',
            action: 'COMPLETE',
            data: { inputValue: 'after a start' },
          }),
        ),
      ...inFlow('2a1b', 'hear')
        .slice(0, 2)
        .map((i) =>
          engine2.publishEvent({
            organization: 'default',
            eventType: 'paid',
            correlationKey: i.correlationKey!,
            data: { paid: true },
          }),
        ),
    ]);
    const snapshot = JSON.parse(await readFile(join(dir, 'snapshot.json'), 'utf8')) as { seq: number; state: unknown };
    t.equal(snapshot.seq, seq, `the snapshot of entry ${seq}`);
    t.same(snapshot.state, expected, 'every execution as it was when the checkpoint began');
    const first = checkpoints.at(-1)!;
    t.equal(checkpoints.length, 5);
    t.ok(
      first.reusedBytes > first.bytes / 2,
      `the first checkpoint after a start copies most of the executions: ${first.reusedBytes} of ${first.bytes} bytes`,
    );
    await engine2.close();
    await restarted.close({ checkpoint: false });
    await history2.close();
  },
);
