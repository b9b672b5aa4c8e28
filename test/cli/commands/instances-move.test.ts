import t from 'tap';
import { movedText, problemsText } from '../../../src/cli/commands/instances-move.js';

t.test('a move in a line: the children that moved with it counted', async (t) => {
  const base = { processInstanceId: 'p1', fromVersion: '1', toVersion: '2' };
  t.equal(movedText({ ...base, status: 'moved', children: [] }), 'p1 moved from version 1 to version 2');
  t.equal(
    movedText({ ...base, status: 'moved', children: ['c1', 'c2'] }),
    'p1 moved from version 1 to version 2, with 2 child executions running its body',
  );
  t.equal(
    movedText({ ...base, status: 'movable', children: ['c1'] }),
    'p1 can move from version 1 to version 2, with 1 child execution running its body (dry run: nothing changed)',
  );
  t.equal(
    movedText({ ...base, fromVersion: '2', status: 'unchanged', children: [] }),
    'p1 runs version 2 already: nothing to move',
  );
});

t.test("the problems as a table; a child's node with its body and execution", async (t) => {
  t.equal(problemsText('p1', []), '');
  t.equal(
    problemsText('p1', [
      { processInstanceId: 'p1', nodeId: 'wait', code: 'EVENT_CHANGED', reason: 'another event' },
      { processInstanceId: 'c1', nodeId: 'ask', scope: ['each'], code: 'NODE_MISSING', reason: 'gone' },
    ]),
    'NODE              PROBLEM        WHY\n' +
      'wait              EVENT_CHANGED  another event\n' +
      'each/ask (in c1)  NODE_MISSING   gone\n',
  );
});
