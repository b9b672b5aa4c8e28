import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { activateVersion, publishFlow } from '../../../src/daemon/flows/publish.js';
import { publishFlowDir } from '../../../src/daemon/flows/load-dir.js';
import { applyRecord, type WfxRecord } from '../../../src/daemon/state/records.js';
import { initialState, type WfxState } from '../../../src/daemon/state/state.js';
import { Store } from '../../../src/daemon/store/store.js';
import type { FlowDefinition } from '../../../src/shared/flow/types.js';

const PID = '0b7c6a3e-2f0e-4a57-9a43-3d4f1c9e8b11';
const flow = (name: string): FlowDefinition => ({
  processId: PID,
  name,
  nodes: { start: { type: 'startEvent', next: 'done' }, done: { type: 'endEvent' } },
});

async function store(t: Test, dir = t.testdir()) {
  const s = await Store.open<WfxState, WfxRecord>({ dir, initialState, apply: applyRecord });
  t.teardown(() => s.close({ checkpoint: false }));
  return s;
}

t.test('versions: a changed definition is the next version, an identical one gives its version back', async (t) => {
  const s = await store(t);
  const v1 = await publishFlow(s, { definition: flow('A'), organization: 'default', environment: 'PRODUCTION' });
  t.match(v1, { version: '1', created: true });
  const again = await publishFlow(s, { definition: { ...flow('A') }, organization: 'default', environment: 'PRODUCTION' });
  t.match(again, { version: '1', created: false });
  const reordered = JSON.parse(JSON.stringify({ nodes: flow('A').nodes, name: 'A', processId: PID }));
  t.equal((await publishFlow(s, { definition: reordered, organization: 'default', environment: 'PRODUCTION' })).version, '1', 'key order does not matter');
  const v2 = await publishFlow(s, { definition: flow('B'), organization: 'default', environment: 'PRODUCTION' });
  t.match(v2, { version: '2', created: true });
  t.same(s.state.flows[PID]!.active, { PRODUCTION: '2' });
  t.equal(s.state.flows[PID]!.name, 'B');
});

t.test('environments have their own active version; rollback re-activates an older one', async (t) => {
  const s = await store(t);
  await publishFlow(s, { definition: flow('A'), organization: 'default', environment: 'PRODUCTION' });
  await publishFlow(s, { definition: flow('B'), organization: 'default', environment: 'DEVELOPMENT' });
  t.same(s.state.flows[PID]!.active, { PRODUCTION: '1', DEVELOPMENT: '2' });
  await activateVersion(s, { processId: PID, organization: 'default', environment: 'DEVELOPMENT', version: '1' });
  t.same(s.state.flows[PID]!.active.DEVELOPMENT, '1');
  await t.rejects(activateVersion(s, { processId: PID, organization: 'default', environment: 'PRODUCTION', version: '9' }), { code: 'VERSION_NOT_FOUND' });
  await t.rejects(activateVersion(s, { processId: PID, organization: 'acme', environment: 'PRODUCTION', version: '1' }), { code: 'PROCESS_NOT_FOUND' });
});

t.test('a processId belongs to the organization that first published it', async (t) => {
  const s = await store(t);
  await publishFlow(s, { definition: flow('A'), organization: 'acme', environment: 'PRODUCTION' });
  t.ok(s.state.organizations.acme, 'publishing into an organization creates it');
  await t.rejects(publishFlow(s, { definition: flow('A'), organization: 'other', environment: 'PRODUCTION' }), { code: 'PROCESS_ID_CONFLICT' });
});

t.test('a flow directory: valid files are published, invalid ones reported and skipped', async (t) => {
  // One fixture directory: a second t.testdir() call would re-create (empty) the first.
  const root = t.testdir({
    flows: {
      'good.yaml': `processId: ${PID}\nname: Good\nnodes:\n  start: { type: startEvent, next: done }\n  done: { type: endEvent }\n`,
      'bad.yml': 'processId: x\nname: Bad\nnodes: {}\n',
      'notes.txt': 'ignored',
    },
    store: {},
  });
  const s = await store(t, join(root, 'store'));
  const dir = join(root, 'flows');
  await writeFile(join(dir, 'also.json'), JSON.stringify({ ...flow('J'), processId: '1b7c6a3e-2f0e-4a57-9a43-3d4f1c9e8b11' }));
  const outcomes = await publishFlowDir(s, dir, { organization: 'default', environment: 'DEVELOPMENT' });
  t.same(outcomes.map((o) => [o.file.split('/').pop(), o.ok]), [['also.json', true], ['bad.yml', false], ['good.yaml', true]]);
  t.same(s.state.flows[PID]!.active, { DEVELOPMENT: '1' });
});
