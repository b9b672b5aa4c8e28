import t from 'tap';
import { formatLogLine, table } from '../../src/cli/format.js';
import { partitionRanges } from '../../src/cli/commands/daemon-status.js';

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

t.test("partitionRanges: a daemon's partitions as runs of one epoch", async (t) => {
  const held = (epochs: number[]) =>
    epochs.map((epoch, partition) => ({ partition, epoch, leaseMsLeft: 9000, replayEntries: 0 }));
  t.equal(partitionRanges(held([2, 2, 2, 2])), '0-3 (epoch 2)');
  t.equal(partitionRanges(held([3, 2, 2])), '0 (epoch 3), 1-2 (epoch 2)');
  t.equal(
    partitionRanges([5, 1, 2, 9].map((partition) => ({ partition, epoch: 1, leaseMsLeft: 0, replayEntries: 0 }))),
    '1-2 (epoch 1), 5 (epoch 1), 9 (epoch 1)',
    'sorted, gaps split runs',
  );
  t.equal(partitionRanges([]), '');
});
