import t from 'tap';
import { applyRecord, type WfxRecord } from '../../../../src/daemon/state/records.js';
import { startedInstance } from '../../../../src/daemon/state/records/execution.js';
import { initialState } from '../../../../src/daemon/state/state.js';

const base = {
  processId: 'p1',
  processName: 'Flow',
  processVersion: '2',
  organization: 'default',
  environment: 'PRODUCTION' as const,
  correlationKey: 'k',
  variables: { a: 1 },
};

t.test(
  "a child's own fields survive the record, its JSON and the reducer; a top-level execution has none of them",
  async (t) => {
    const child = startedInstance(
      {
        ...base,
        parentInstanceId: 'parent',
        parentNodeInstanceId: 'n3',
        scope: ['loop', 'body'],
        iteration: 4,
        callDepth: 2,
        root: 'r0',
      },
      'c1',
      '2026-11-21T10:00:00.000Z',
    );
    const top = startedInstance({ ...base, parentInstanceId: null }, 't1', '2026-11-21T10:00:00.000Z');
    t.match(child, {
      processInstanceId: 'c1',
      stateCd: 0,
      startTime: '2026-11-21T10:00:00.000Z',
      endTime: null,
      output: null,
      error: null,
      parentInstanceId: 'parent',
      parentNodeInstanceId: 'n3',
      scope: ['loop', 'body'],
      iteration: 4,
      callDepth: 2,
      root: 'r0',
      variables: { a: 1 },
    });
    for (const key of ['parentNodeInstanceId', 'scope', 'iteration', 'callDepth', 'root'])
      t.notOk(key in top, `no ${key} key on a top-level execution`);

    for (const [how, toRecord] of [
      ['as emitted', (i: typeof child): WfxRecord => ({ type: 'instance.started', instance: i })],
      [
        'as replayed from the journal',
        (i: typeof child): WfxRecord =>
          JSON.parse(JSON.stringify({ type: 'instance.started', instance: i })) as WfxRecord,
      ],
    ] as const) {
      const state = initialState();
      applyRecord(state, toRecord(child));
      applyRecord(state, toRecord(top));
      t.match(
        state.instances.c1,
        {
          parentInstanceId: 'parent',
          parentNodeInstanceId: 'n3',
          scope: ['loop', 'body'],
          iteration: 4,
          callDepth: 2,
          root: 'r0',
          varSize: 7,
          nodes: {},
          nodeCount: 0,
          logs: [{}],
        },
        how,
      );
      t.same(
        Object.keys(state.instances.t1!).sort(),
        [
          'correlationKey',
          'endTime',
          'environment',
          'error',
          'joins',
          'liveNodes',
          'logSize',
          'logs',
          'nodeCount',
          'nodes',
          'organization',
          'output',
          'parentInstanceId',
          'processId',
          'processInstanceId',
          'processName',
          'processVersion',
          'startTime',
          'stateCd',
          'varSize',
          'variables',
        ],
        `${how}: every field of a top-level execution, nothing more`,
      );
      t.not(state.instances.t1!.variables, top.variables, `${how}: the state's variables are its own copy`);
    }
  },
);
