import t from 'tap';
import { applyRecord, executionsTouched, type WfxRecord } from '../../../src/daemon/state/records.js';
import { startedInstance } from '../../../src/daemon/state/records/execution.js';
import { applyStart } from '../../helpers/state.js';
import { executionCopy } from '../../../src/daemon/state/object-shapes.js';
import { ExecutionTable } from '../../../src/daemon/state/execution-table.js';
import { initialState, type Execution, type WfxState } from '../../../src/daemon/state/state.js';
import { SnapshotCopy } from '../../../src/daemon/store/snapshot-copy.js';

/** A copy of `inst` put in its place, as a committed step's draft puts one. */
function putCopy(state: WfxState, inst: Execution): Execution {
  const copy = executionCopy(inst);
  ExecutionTable.of(state).put(copy);
  return copy;
}

const at = '2026-11-21T10:00:00.000Z';

function started(id: string): WfxRecord {
  return {
    type: 'instance.started',
    instance: startedInstance(
      {
        processId: 'p',
        processName: 'P',
        processVersion: '1',
        organization: 'default',
        environment: 'PRODUCTION',
        correlationKey: null,
        parentInstanceId: null,
        variables: { id },
      },
      id,
      at,
    ),
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

t.test(
  'the list of ids kept beside the dictionary is its keys, through starts, young copies, archives and rebuilds',
  async (t) => {
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
        const copy = putCopy(state, state.instances[id]!);
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
        t.same(ExecutionTable.of(state).keys(), keys, `op ${op}: the list is the keys, in order`);
        t.same([...ExecutionTable.of(state).ids()], keys);
        t.same(
          ExecutionTable.of(state)
            .live()
            .map((i) => tags.get(i)),
          [...model.values()],
          `op ${op}: the live executions, each the latest object put there, in the order they started`,
        );
        for (const [id, tag] of model)
          if (tags.get(state.instances[id]!) !== tag) t.fail(`op ${op}: ${id} is not the latest object`);
      }
    }
    t.ok(rebuilds >= 2, `the dictionary was rebuilt (${rebuilds} times)`);
    t.ok(
      mostTombstones < 1.2,
      `tombstones stay bounded (at most ${mostTombstones.toFixed(2)} times the live ones or 10,000)`,
    );
  },
);

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
  const keep0 = putCopy(state, state.instances.keep0!);
  const late500 = putCopy(state, state.instances.late500!);
  applyRecord(state, started('new0'));
  let archived = 0;
  while (state.instances === first && archived < 499)
    applyRecord(state, { type: 'instance.archived', instanceId: `late${archived++}` });
  t.not(state.instances, first, `replaced after ${archived} more archives`);
  t.ok(archived > 1, 'a few keys per archive, not all at once');
  t.equal(state.instances.keep0, keep0, 'a change to an execution it had copied');
  t.equal(state.instances.late500, late500, 'a change to one it had not reached');
  t.ok(state.instances.new0, 'an execution started while it ran');
  t.notOk('e0' in state.instances, 'the tombstones before it are gone');
  const live = ['keep0', 'keep1', ...Array.from({ length: 600 - archived }, (_, i) => `late${archived + i}`), 'new0'];
  t.same(
    ExecutionTable.of(state)
      .live()
      .map((i) => i.processInstanceId),
    live,
    'the live ones, in order',
  );
  t.same(ExecutionTable.of(state).keys(), Object.keys(state.instances), 'its list is its keys');
  t.notOk(JSON.stringify(state.instances).includes('"late0"'), 'JSON leaves the tombstones out');
});

t.test('a snapshot copy lists the executions from the kept ids, during a rebuild too', async (t) => {
  const state: WfxState = initialState();
  for (let i = 0; i < 12_000; i++) applyRecord(state, started(`e${i}`));
  for (let i = 0; i < 10_000; i++) applyRecord(state, { type: 'instance.archived', instanceId: `e${i}` });
  const before = state.instances;
  const expected = JSON.parse(JSON.stringify({ instances: state.instances })) as unknown;
  let listed = 0;
  const copy = new SnapshotCopy({ format: 1 }, state, 'instances', null, ['subscriptions'], (_c, s) => {
    listed++;
    return ExecutionTable.of(s as WfxState).keys();
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
  t.same(
    { instances: file.state.instances },
    expected,
    'the snapshot holds the executions as they were at its instant',
  );
});

t.test(
  'an archived id started again (ids are new in practice) keeps the list exact, during a rebuild too',
  async (t) => {
    const state = initialState();
    for (const id of ['a', 'b', 'c']) applyRecord(state, started(id));
    applyRecord(state, { type: 'instance.archived', instanceId: 'b' });
    applyRecord(state, started('b'));
    t.same(ExecutionTable.of(state).ids(), ['a', 'b', 'c'], 'the key keeps its place');
    t.same(ExecutionTable.of(state).ids(), Object.keys(state.instances));
    t.same(
      [...ExecutionTable.of(state).live()].map((i) => i.processInstanceId),
      ['a', 'b', 'c'],
    );

    // A rebuild under way: one id it has passed as a tombstone, one it has not reached yet.
    const big = initialState();
    for (let i = 0; i < 20_000; i++) applyRecord(big, started(`e${i}`));
    for (let i = 0; i <= 10_000; i++) applyRecord(big, { type: 'instance.archived', instanceId: `e${i}` });
    const before = big.instances;
    applyRecord(big, started('e0'));
    applyRecord(big, started('e9000'));
    for (let i = 10_001; i < 20_000 && big.instances === before; i++)
      applyRecord(big, { type: 'instance.archived', instanceId: `e${i}` });
    t.not(big.instances, before, 'the rebuild ran to its end');
    t.same(ExecutionTable.of(big).ids(), Object.keys(big.instances), "the list is the new dictionary's keys");
    const live = Object.keys(big.instances).filter((id) => big.instances[id] !== undefined);
    t.ok(live.includes('e0') && live.includes('e9000'), 'both revived executions are live in it');
    t.same(
      [...ExecutionTable.of(big).live()].map((i) => i.processInstanceId),
      live,
    );
  },
);

t.test(
  'an archived execution leaves a tombstone; the dictionary is rebuilt once they outnumber the live ones',
  async (t) => {
    const state = initialState();
    const at = '2026-11-21T10:00:00.000Z';
    const start = (id: string) => applyStart(state, id, at);
    for (let i = 0; i < 3; i++) start(`keep${i}`);
    for (let i = 0; i < 10_000; i++) start(`e${i}`);
    const first = state.instances;
    for (let i = 0; i < 9_999; i++) applyRecord(state, { type: 'instance.archived', instanceId: `e${i}` });
    t.equal(state.instances, first, 'not rebuilt yet: 9,999 tombstones');
    t.ok('e0' in state.instances && state.instances.e0 === undefined, 'an archived execution is a tombstone');
    t.same(
      ExecutionTable.of(state)
        .live()
        .map((i) => i.processInstanceId),
      ['keep0', 'keep1', 'keep2', 'e9999'],
      'listing skips tombstones, in order',
    );
    t.notOk(JSON.stringify(state).includes('"e0"'), 'JSON leaves them out');
    applyRecord(state, { type: 'instance.archived', instanceId: 'e0' }); // archived again (recovery may): no double count
    t.equal(state.instances, first);

    applyRecord(state, { type: 'instance.archived', instanceId: 'e9999' });
    // The rebuild starts at 10,000 tombstones, more than the live ones, and visits a few keys per
    // archived execution (above): the archives that follow finish it.
    for (let i = 0; state.instances === first && i < 1_000; i++) {
      start(`more${i}`);
      applyRecord(state, { type: 'instance.archived', instanceId: `more${i}` });
    }
    t.not(state.instances, first, 'rebuilt');
    t.same(
      Object.keys(state.instances).filter((k) => state.instances[k] !== undefined),
      ['keep0', 'keep1', 'keep2'],
      'the live ones, in order',
    );
    t.notOk('e0' in state.instances, 'without the tombstones it started with');

    start('later'); // counts go on in the new dictionary
    applyRecord(state, { type: 'instance.archived', instanceId: 'later' });
    t.ok('later' in state.instances, 'a tombstone again, far from the next rebuild');
  },
);

t.test(
  'the table owns its invariant: an archived id is a tombstone, listed as a key, never as live; only a put revives it',
  async (t) => {
    const state = initialState();
    for (const id of ['a', 'b', 'c']) applyRecord(state, started(id));
    const table = ExecutionTable.of(state);
    t.equal(ExecutionTable.of(state), table, 'one table per state and dictionary');
    const b = state.instances.b!;
    table.archive('b');
    t.ok(Object.hasOwn(state.instances, 'b') && state.instances.b === undefined, 'the key stays, with undefined');
    t.same(table.ids(), ['a', 'b', 'c'], 'ids lists the tombstone in its place');
    t.same(table.keys(), Object.keys(state.instances), 'keys are what Object.keys gives');
    t.same(
      table.live().map((i) => i.processInstanceId),
      ['a', 'c'],
      'live skips it',
    );
    t.equal(
      JSON.stringify(state.instances),
      JSON.stringify({ a: state.instances.a, c: state.instances.c }),
      'JSON leaves it out',
    );
    t.notOk(JSON.stringify(state).includes('instanceTable'), 'the table itself is not in the JSON of the state');

    table.archive('b');
    table.archive('nobody');
    t.same(
      table.live().map((i) => i.processInstanceId),
      ['a', 'c'],
      'archiving a tombstone or an unknown id changes nothing',
    );
    t.same(table.ids(), ['a', 'b', 'c'], 'and adds no key');

    // A record applied late for it (a node of the archived execution) does not bring it back.
    applyRecord(state, { type: 'node.entered', instanceId: 'b', nodeInstanceId: 'n1', nodeId: 'start', at });
    t.equal(state.instances.b, undefined, 'a late record for an archived id is ignored');
    t.same(
      table.live().map((i) => i.processInstanceId),
      ['a', 'c'],
    );

    // Only a put (an id started again: never in practice) revives the key, in its place.
    table.put(b);
    t.equal(state.instances.b, b);
    t.same(table.ids(), ['a', 'b', 'c'], 'in its place, not at the end');
    t.same(
      table.live().map((i) => i.processInstanceId),
      ['a', 'b', 'c'],
    );
  },
);

t.test('a dictionary made elsewhere is indexed once, on first use', async (t) => {
  const state = initialState();
  applyRecord(state, started('a'));
  const table = ExecutionTable.of(state);
  // A snapshot parsed (or a literal) replaces the dictionary: the table indexes the new one.
  state.instances = JSON.parse(JSON.stringify({ x: state.instances.a, y: state.instances.a })) as WfxState['instances'];
  const again = ExecutionTable.of(state);
  t.not(again, table, 'a new table for the new dictionary');
  t.same(again.ids(), ['x', 'y']);
  // A copy of the state (a spread) shares the dictionary but gets a table of its own.
  const copy: WfxState = { ...state };
  t.not(ExecutionTable.of(copy), again);
  t.equal(ExecutionTable.of(state), again, 'the original keeps its table');
});
