import t from 'tap';
import { lifecycleOf } from '../../../src/daemon/engine/lifecycle.js';
import { applyRecord, type WfxRecord } from '../../../src/daemon/state/records.js';
import { startedInstance } from '../../../src/daemon/state/records/execution.js';
import { initialState, STATUS } from '../../../src/daemon/state/state.js';

const at = '2026-11-21T10:00:00.000Z';
const later = '2026-11-21T10:00:01.000Z';

t.test('each record maps to the lifecycle events it stands for, read from the state once it is applied', async (t) => {
  const state = initialState();
  const events = (r: WfxRecord) => {
    applyRecord(state, r);
    return lifecycleOf(state, r).map((e) => [e.type, e.nodeInstanceId ?? null, e.statusCd ?? e.stateCd]);
  };
  const started: WfxRecord = {
    type: 'instance.started',
    instance: startedInstance(
      {
        processId: 'p',
        processName: 'P',
        processVersion: '1',
        organization: 'acme',
        environment: 'PRODUCTION',
        correlationKey: null,
        parentInstanceId: null,
        variables: {},
      },
      'e1',
      at,
    ),
  };
  t.same(events(started), [['PROCESS_STARTED', null, 0]]);
  t.same(
    lifecycleOf(state, started)[0],
    {
      type: 'PROCESS_STARTED',
      processInstanceId: 'e1',
      processId: 'p',
      organization: 'acme',
      timestamp: at,
      stateCd: 0,
    },
    'the fields of a process event',
  );
  t.same(
    events({ type: 'node.ran', instanceId: 'e1', nodeInstanceId: 'n1', nodeId: 'start', at }),
    [
      ['NODE_STARTED', 'n1', STATUS.ACTIVE],
      ['NODE_COMPLETED', 'n1', STATUS.COMPLETED],
    ],
    'a node run in one step: started and completed',
  );
  t.same(events({ type: 'node.entered', instanceId: 'e1', nodeInstanceId: 'n2', nodeId: 'ask', at }), [
    ['NODE_STARTED', 'n2', STATUS.ACTIVE],
  ]);
  const entered = lifecycleOf(state, {
    type: 'node.entered',
    instanceId: 'e1',
    nodeInstanceId: 'n2',
    nodeId: 'ask',
    at,
  })[0]!;
  t.same(
    entered,
    {
      type: 'NODE_STARTED',
      processInstanceId: 'e1',
      processId: 'p',
      organization: 'acme',
      nodeId: 'ask',
      nodeInstanceId: 'n2',
      nodeType: entered.nodeType,
      timestamp: at,
      statusCd: STATUS.ACTIVE,
    },
    'the fields of a node event',
  );
  t.same(
    events({
      type: 'node.left',
      instanceId: 'e1',
      nodeInstanceId: 'n2',
      statusCd: STATUS.CANCELLED,
      at: later,
      reason: 'r',
    }),
    [['NODE_CANCELLED', 'n2', STATUS.CANCELLED]],
  );
  t.same(events({ type: 'instance.finished', instanceId: 'e1', stateCd: 3, at: later }), [
    ['PROCESS_CANCELLED', null, 3],
  ]);
  t.same(
    lifecycleOf(state, { type: 'node.entered', instanceId: 'gone', nodeInstanceId: 'n1', nodeId: 'x', at }),
    [],
    'none for an execution not live',
  );
  t.same(lifecycleOf(state, { type: 'message.removed', id: 'm1' }), [], 'none for a record that changes no execution');
});
