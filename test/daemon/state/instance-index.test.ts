import t from 'tap';
import { applyRecord, executionsTouched, startedInstance, type WfxRecord } from '../../../src/daemon/state/records.js';
import { initialState, instanceIds, instanceKeys, liveInstances, youngCopy, type WfxState } from '../../../src/daemon/state/state.js';
import { SnapshotCopy } from '../../../src/daemon/store/snapshot-copy.js';

const at = '2026-11-21T10:00:00.000Z';

function started(id: string): WfxRecord {
  return {
    type: 'instance.started',
    instance: startedInstance({ processId: 'p', processName: 'P', processVersion: '1', organization: 'default', environment: 'PRODUCTION', correlationKey: null, parentInstanceId: null, variables: { id } }, id, at),
  };
}

/** A small deterministic generator (tests repeat exactly). */
function random(seed: number): () => number {
  let x = seed;
  return () => {
    x = (x * 1_103_515_245 + 12_345) % 2_147_483_648;
    return x / 2_147_483_648;
  };
}

t.test('the list of ids kept beside the dictionary is its keys, through starts, young copies, archives and rebuilds', async (t) => {
  const state = initialState();
  const model = new Map<string, string>(); // live id -> a tag of the object that should be there
  const tags = new WeakMap<object, string>();
  const next = random(7);
  let made = 0;
  let rebuilds = 0;
  let mostTombstones = 0;
  let dictionary = state.instances;
  for (let op = 0; op < 60_000; op++) {
    const r = next();
    const live = [...model.keys()];
    if (r < 0.45 || live.length === 0) {
      const id = `e${made++}`;
      applyRecord(state, started(id));
      tags.set(state.instances[id]!, `${id}:0`);
      model.set(id, `${id}:0`);
    } else if (r < 0.6) {
      const id = live[Math.floor(next() * live.length)]!;
      const copy = youngCopy(state, state.instances[id]!);
      const tag = `${id}:${op}`;
      tags.set(copy, tag);
      model.set(id, tag);
    } else {
      // Mostly the oldest, as a resume load drains them; sometimes any.
      const id = next() < 0.7 ? live[0]! : live[Math.floor(next() * live.length)]!;
      applyRecord(state, { type: 'instance.archived', instanceId: id });
      model.delete(id);
    }
    if (state.instances !== dictionary) {
      rebuilds++;
      dictionary = state.instances;
    }
    if (op % 3_000 === 2_999 || op === 59_999) {
      const keys = Object.keys(state.instances);
      // Tombstones: up to as many as the live ones (or 10,000), and those archived while a rebuild runs.
      mostTombstones = Math.max(mostTombstones, (keys.length - model.size) / Math.max(10_000, model.size));
      t.same(instanceKeys(state.instances), keys, `op ${op}: the list is the keys, in order`);
      t.same([...instanceIds(state)], keys);
      t.same(
        liveInstances(state).map((i) => tags.get(i)),
        [...model.values()],
        `op ${op}: the live executions, each the latest object put there, in the order they started`,
      );
      for (const [id, tag] of model) if (tags.get(state.instances[id]!) !== tag) t.fail(`op ${op}: ${id} is not the latest object`);
    }
  }
  t.ok(rebuilds >= 2, `the dictionary was rebuilt (${rebuilds} times)`);
  t.ok(mostTombstones < 1.2, `tombstones stay bounded (at most ${mostTombstones.toFixed(2)} times the live ones or 10,000)`);
});

t.test('a rebuild visits a few keys per archived execution and takes the changes made meanwhile', async (t) => {
  const state = initialState();
  for (let i = 0; i < 2; i++) applyRecord(state, started(`keep${i}`));
  for (let i = 0; i < 10_000; i++) applyRecord(state, started(`e${i}`));
  for (let i = 0; i < 600; i++) applyRecord(state, started(`late${i}`));
  const first = state.instances;
  for (let i = 0; i < 10_000; i++) applyRecord(state, { type: 'instance.archived', instanceId: `e${i}` });
  // 10,000 tombstones against 602 live: the rebuild has started, and has not reached the end.
  t.equal(state.instances, first, 'not replaced in one go');

  // While it runs: a copy of a live one it has not reached (late500), one it may have copied
  // (keep0), a new execution, and archives. It visits 10,602 keys or more, 32 per archive.
  const keep0 = youngCopy(state, state.instances.keep0!);
  const late500 = youngCopy(state, state.instances.late500!);
  applyRecord(state, started('new0'));
  let archived = 0;
  while (state.instances === first && archived < 499) applyRecord(state, { type: 'instance.archived', instanceId: `late${archived++}` });
  t.not(state.instances, first, `replaced after ${archived} more archives`);
  t.ok(archived > 1, 'a few keys per archive, not all at once');
  t.equal(state.instances.keep0, keep0, 'a change to an execution it had copied');
  t.equal(state.instances.late500, late500, 'a change to one it had not reached');
  t.ok(state.instances.new0, 'an execution started while it ran');
  t.notOk('e0' in state.instances, 'the tombstones before it are gone');
  const live = ['keep0', 'keep1', ...Array.from({ length: 600 - archived }, (_, i) => `late${archived + i}`), 'new0'];
  t.same(liveInstances(state).map((i) => i.processInstanceId), live, 'the live ones, in order');
  t.same(instanceKeys(state.instances), Object.keys(state.instances), 'its list is its keys');
  t.notOk(JSON.stringify(state.instances).includes('"late0"'), 'JSON leaves the tombstones out');
});

t.test('a snapshot copy lists the executions from the kept ids, during a rebuild too', async (t) => {
  const state: WfxState = initialState();
  for (let i = 0; i < 12_000; i++) applyRecord(state, started(`e${i}`));
  for (let i = 0; i < 10_000; i++) applyRecord(state, { type: 'instance.archived', instanceId: `e${i}` });
  const before = state.instances;
  const expected = JSON.parse(JSON.stringify({ instances: state.instances })) as unknown;
  let listed = 0;
  const copy = new SnapshotCopy({ format: 1 }, state, 'instances', null, ['subscriptions'], (c) => {
    listed++;
    return instanceKeys(c);
  });
  t.equal(listed, 1, 'the keys came from the list');
  const pieces: Buffer[] = [];
  // Records applied between slices, each touched first as the store does: the rebuild ends meanwhile.
  let i = 10_000;
  while (!copy.step(100, 1_000)) {
    for (const p of copy.drain()) pieces.push(p as Buffer);
    for (let k = 0; k < 200 && i < 12_000; k++, i++) {
      const r: WfxRecord = { type: 'instance.archived', instanceId: `e${i}` };
      executionsTouched.touched(r, copy.touch);
      applyRecord(state, r);
    }
  }
  for (const p of copy.drain()) pieces.push(p as Buffer);
  t.not(state.instances, before, 'the rebuild replaced the dictionary during the copy');
  const file = JSON.parse(Buffer.concat(pieces).toString()) as { state: { instances: unknown } };
  t.same({ instances: file.state.instances }, expected, 'the snapshot holds the executions as they were at its instant');
});

t.test('an archived id started again (ids are new in practice) keeps the list exact, during a rebuild too', async (t) => {
  const state = initialState();
  for (const id of ['a', 'b', 'c']) applyRecord(state, started(id));
  applyRecord(state, { type: 'instance.archived', instanceId: 'b' });
  applyRecord(state, started('b'));
  t.same(instanceIds(state), ['a', 'b', 'c'], 'the key keeps its place');
  t.same(instanceIds(state), Object.keys(state.instances));
  t.same([...liveInstances(state)].map((i) => i.processInstanceId), ['a', 'b', 'c']);

  // A rebuild under way: one id it has passed as a tombstone, one it has not reached yet.
  const big = initialState();
  for (let i = 0; i < 20_000; i++) applyRecord(big, started(`e${i}`));
  for (let i = 0; i <= 10_000; i++) applyRecord(big, { type: 'instance.archived', instanceId: `e${i}` });
  const before = big.instances;
  applyRecord(big, started('e0'));
  applyRecord(big, started('e9000'));
  for (let i = 10_001; i < 20_000 && big.instances === before; i++) applyRecord(big, { type: 'instance.archived', instanceId: `e${i}` });
  t.not(big.instances, before, 'the rebuild ran to its end');
  t.same(instanceIds(big), Object.keys(big.instances), 'the list is the new dictionary\'s keys');
  const live = Object.keys(big.instances).filter((id) => big.instances[id] !== undefined);
  t.ok(live.includes('e0') && live.includes('e9000'), 'both revived executions are live in it');
  t.same([...liveInstances(big)].map((i) => i.processInstanceId), live);
});
