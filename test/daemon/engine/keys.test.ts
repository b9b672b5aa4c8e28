import t from 'tap';
import { boundaryKey, nodeKey, timerTarget } from '../../../src/daemon/engine/keys.js';

t.test('a node key and a boundary key read back as the parts they were made of', async (t) => {
  const id = '019a4f2e-7c1d-7a00-8000-0123456789ab';
  t.same(
    timerTarget(nodeKey(id, 'n12')),
    { instanceId: id, nodeInstanceId: 'n12', boundaryId: undefined },
    "a node's own timer",
  );
  t.same(
    timerTarget(boundaryKey(id, 'n3', 'late_reminder-2')),
    { instanceId: id, nodeInstanceId: 'n3', boundaryId: 'late_reminder-2' },
    'a boundary timer',
  );
  for (const [instanceId, nodeInstanceId, boundaryId] of [
    ['a', 'n1', 'b'],
    ['x-y', 'n100000', '_'],
    [id, 'n2', 'A9'],
  ] as const) {
    const target = timerTarget(boundaryKey(instanceId, nodeInstanceId, boundaryId));
    t.same(target, { instanceId, nodeInstanceId, boundaryId }, `${instanceId} ${nodeInstanceId} ${boundaryId}`);
    t.same(timerTarget(nodeKey(target.instanceId, target.nodeInstanceId)), {
      instanceId,
      nodeInstanceId,
      boundaryId: undefined,
    });
  }
});

t.test('keys of different node instances or boundaries differ; the same parts give the same key', async (t) => {
  t.equal(nodeKey('e1', 'n1'), nodeKey('e1', 'n1'), 'equal keys for Map lookups');
  t.not(nodeKey('e1', 'n1'), nodeKey('e1', 'n11'));
  t.not(nodeKey('e1', 'n1'), nodeKey('e11', 'n1'));
  t.not(boundaryKey('e1', 'n1', 'b') as string, nodeKey('e1', 'n1') as string, "a boundary's timer is not its node's");
  t.not(boundaryKey('e1', 'n1', 'b'), boundaryKey('e1', 'n1', 'c'));
});
