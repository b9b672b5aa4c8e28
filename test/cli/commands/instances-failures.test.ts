import t from 'tap';
import { failuresText, parseSince } from '../../../src/cli/commands/instances-failures.js';
import type { FailureGroups } from '../../../src/shared/api/index.js';

const NOW = new Date('2026-11-21T12:00:00.000Z');
const ID = '0192f0c0-0000-7000-8000-0000000000a1';

t.test('--since: a duration back from now, or an instant', async (t) => {
  t.equal(parseSince('1h', NOW), NOW.getTime() - 3_600_000);
  t.equal(parseSince('PT30M', NOW), NOW.getTime() - 1_800_000);
  t.equal(parseSince('2026-11-20T08:00:00Z', NOW), Date.parse('2026-11-20T08:00:00Z'));
  t.equal(parseSince('2026-11-20', NOW), Date.parse('2026-11-20'));
  for (const bad of ['yesterday', '-1h', '', '20261120'])
    t.throws(() => parseSince(bad, NOW), { code: 'commander.invalidArgument' }, JSON.stringify(bad));
});

t.test('the groups as a table, the message cut to the terminal, then how to list and retry them', async (t) => {
  const answer: FailureGroups = {
    groups: [
      {
        processId: 'p1',
        processName: 'Orders',
        errorCode: 'HTTP_500',
        nodeId: 'call',
        nodeName: 'Call the partner',
        count: 12,
        newest: {
          processInstanceId: ID,
          processVersion: '3',
          message: `POST http://127.0.0.1/orders answered 500 (after 3 attempts): ${'x'.repeat(200)}\nsecond line`,
          at: '2026-11-21T11:55:00.000Z',
        },
      },
      {
        processId: 'p2',
        errorCode: 'EXECUTION_LIMIT_EXCEEDED',
        nodeId: null,
        count: 1,
        newest: { processInstanceId: `${ID.slice(0, -1)}0`, processVersion: '1', message: null, at: null },
      },
    ],
    total: 14,
    groupCount: 3,
  };
  const text = failuresText(answer, NOW, 160);
  const lines = text.split('\n');
  t.match(lines[0], /^COUNT\s+CODE\s+NODE\s+FLOW\s+NEWEST\s+MESSAGE$/);
  t.match(
    lines[1],
    new RegExp(`^12\\s+HTTP_500\\s+call \\(Call the partner\\)\\s+Orders v3\\s+${ID} 5m ago\\s+POST http://`),
  );
  t.ok(
    lines.slice(0, 3).every((l) => l.length <= 160),
    'every row within the terminal width',
  );
  t.match(lines[1], /…$/, 'the message cut, marked');
  t.notMatch(text, /second line\n/, 'a message on one line');
  t.match(lines[2], /^1\s+EXECUTION_LIMIT_EXCEEDED\s+-\s+p2 v1\s+\S+ \?/, 'no node, no name, no document: said so');
  t.match(text, /^14 failed executions in 3 groups \(the first 2 shown\)$/m);
  t.match(
    text,
    /^list the first group: wfx instances list --state failed --error-code HTTP_500 --failed-node call p1$/m,
  );
  t.match(text, new RegExp(`^retry its newest:     wfx instances retry ${ID}$`, 'm'));
  t.ok(failuresText(answer, NOW, null).split('\n')[1]!.includes('x'.repeat(100)), 'piped: a longer message');
  t.equal(failuresText({ groups: [], total: 0, groupCount: 0 }, NOW, 80), 'no failed executions\n');
});
