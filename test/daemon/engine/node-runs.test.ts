import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import t from 'tap';
import { applyRecord, coalesceNodeRuns, type WfxRecord } from '../../../src/daemon/state/records.js';
import { initialState } from '../../../src/daemon/state/state.js';
import { decodeFrames } from '../../../src/daemon/store/frame.js';
import { engineHarness } from '../../helpers/engine.js';

const at = '2026-11-21T10:00:00.000Z';
const ran = (instanceId: string, n: number, extra: object = {}, when = at): WfxRecord => ({
  type: 'node.ran',
  instanceId,
  nodeInstanceId: `n${n}`,
  nodeId: `s${n}`,
  at: when,
  ...extra,
});

t.test('coalesceNodeRuns merges node.ran records of one execution at one time, and nothing else', async (t) => {
  const { candidate, merge } = coalesceNodeRuns;
  t.ok(candidate(ran('a', 1)));
  t.notOk(candidate({ type: 'instance.finished', instanceId: 'a', stateCd: 1, at } as WfxRecord));
  const two = merge(ran('a', 1), ran('a', 2, { variables: { x: 1 } }));
  t.same(two, {
    type: 'nodes.ran',
    instanceId: 'a',
    at,
    nodes: [
      { nodeInstanceId: 'n1', nodeId: 's1' },
      { nodeInstanceId: 'n2', nodeId: 's2', variables: { x: 1 } },
    ],
  });
  const three = merge(two!, ran('a', 3));
  t.equal(three, two, 'a run grows in place');
  t.equal((three as Extract<WfxRecord, { type: 'nodes.ran' }>).nodes.length, 3);
  t.equal(merge(ran('a', 1), ran('b', 2)), null, 'another execution ends the run');
  t.equal(merge(ran('a', 1), ran('a', 2, {}, '2026-11-21T10:00:01.000Z')), null, 'another time ends the run');
  t.equal(merge(ran('a', 1), { type: 'instance.finished', instanceId: 'a', stateCd: 1, at } as WfxRecord), null);
});

t.test('a run of nodes is written as one nodes.ran record, and replays to the same execution', async (t) => {
  const h = await engineHarness(t);
  const pid = await h.publish(`processId: 9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d
name: Straight line
nodes:
  start: { type: startEvent, next: a }
  a: { type: setVariable, variables: { x: 1 }, next: b }
  b: { type: setVariable, variables: { y: "{x}" }, next: done }
  done: { type: endEvent }
`);
  const inst = await h.engine.start({ processId: pid, organization: 'default', data: {} });
  t.equal(inst.stateCd, 1);
  // Started and finished in one step: its records went to history alone (ExecutionArchive.oneStep).
  const history = join(h.dir, 'history');
  const frames = (await Promise.all((await readdir(history)).map((f) => readFile(join(history, f))))).flatMap(
    (b) => decodeFrames<{ records: WfxRecord[] }>(b).frames,
  );
  const doc = frames.find((f) => f.key.startsWith(`${inst.processInstanceId}|`));
  t.equal(
    doc?.key,
    `${inst.processInstanceId}|${pid}|1||default|1|PRODUCTION|||||`,
    'its history document, tagged with flow, state, parent (none), organization, version, environment, failure (none), correlation key (none), failed node (none), root (none: it is one) and search attributes (none)',
  );
  const step = doc!.value.records;
  t.same(
    step.map((r) => r.type),
    ['instance.started', 'nodes.ran', 'instance.finished'],
    'start, one record for the four nodes, finish',
  );
  const scratch = { ...initialState(), flows: h.store.state.flows };
  for (const r of step) applyRecord(scratch, r);
  const replayed = scratch.instances[inst.processInstanceId]!;
  t.same(replayed.variables, { x: 1, y: 1 });
  t.same(
    Object.values(replayed.nodes).map((n) => [n.nodeId, n.statusCd]),
    [
      ['start', 2],
      ['a', 2],
      ['b', 2],
      ['done', 2],
    ],
  );
  t.same(replayed.logs, inst.logs, 'the same log lines as the live execution had');
  t.same(replayed.nodes, inst.nodes, 'the same node instances');
});
