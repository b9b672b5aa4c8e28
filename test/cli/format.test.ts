import t from 'tap';
import { formatLogLine, table } from '../../src/cli/format.js';

t.test('table: columns padded to their widest cell, the last one not, one line each', async (t) => {
  t.equal(
    table(
      ['ID', 'NAME'],
      [
        ['1', 'One'],
        ['22', ''],
      ],
    ),
    'ID  NAME\n1   One\n22\n',
  );
  t.equal(table(['A', 'B'], []), 'A  B\n', 'a header alone');
});

t.test('formatLogLine: time, level, who, message; colour only when asked', async (t) => {
  const entry = {
    id: 1,
    timestamp: '2026-11-21T10:00:01.234Z',
    level: 'INFO',
    nodeId: 'ask',
    nodeName: 'Approve',
    nodeType: 'inputNode',
    message: 'waiting for input',
  } as unknown as Parameters<typeof formatLogLine>[0];
  t.equal(formatLogLine(entry, false), '10:00:01.234 INFO  Approve (ask): waiting for input');
  t.match(formatLogLine(entry, true), /^\u001b\[2m10:00:01\.234\u001b\[0m \u001b\[36mINFO /);
  const flow = { ...entry, nodeType: 'process', nodeName: 'Ship order' } as typeof entry;
  t.equal(
    formatLogLine(flow, false),
    '10:00:01.234 INFO  Ship order: waiting for input',
    'the flow itself: its name alone',
  );
});
