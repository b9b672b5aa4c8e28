import t from 'tap';
import { logEntries, logEntry, packedLogLine } from '../../../src/daemon/state/log-line.js';
import type { Execution, LogLine } from '../../../src/daemon/state/state.js';
import { engineHarness } from '../../helpers/engine.js';

const START = '2026-11-22T10:00:00.000Z';
const inst: Pick<Execution, 'nodes' | 'processName' | 'startTime'> = {
  processName: 'Orders',
  startTime: START,
  nodes: {
    n3: {
      id: 'n3',
      nodeId: 'ask',
      nodeName: 'Ask the customer',
      nodeType: 'inputNode',
      statusCd: 1,
      startTime: START,
      endTime: null,
      wait: null,
    },
  },
};

t.test('a packed line reads back with the node, level, time and message it was made from', async (t) => {
  t.same(logEntry(inst, packedLogLine('n3', 'INFO', 1500, 'waiting for input')), {
    nodeId: 'ask',
    nodeName: 'Ask the customer',
    nodeType: 'inputNode',
    message: 'waiting for input',
    level: 'INFO',
    timestamp: '2026-11-22T10:00:01.500Z',
  });
  t.same(
    logEntry(inst, packedLogLine('', 'ERROR', 0, 'execution failed')),
    {
      nodeId: '',
      nodeName: 'Orders',
      nodeType: 'process',
      message: 'execution failed',
      level: 'ERROR',
      timestamp: START,
    },
    "'': the execution itself",
  );
  for (const message of [
    '  two leading spaces',
    'trailing ',
    '',
    'n3 INFO 0 looks packed',
    'ünïcode ✓',
    'line\nbreak',
  ]) {
    t.equal(
      logEntry(inst, packedLogLine('n3', 'WARN', 7, message)).message,
      message,
      `message ${JSON.stringify(message)} kept exactly`,
    );
  }
  t.equal(
    logEntry(inst, packedLogLine('n3', 'INFO', -20, 'm')).timestamp,
    '2026-11-22T09:59:59.980Z',
    'a time before the start (a clock step back) reads back',
  );
  t.equal(
    logEntry(inst, JSON.parse(JSON.stringify(packedLogLine('n3', 'INFO', 3, 'x y'))) as LogLine).message,
    'x y',
    'the same after a round trip through JSON (snapshot, history)',
  );
});

t.test('the older forms still read: arrays with a time in ms or as an ISO string, and whole entries', async (t) => {
  const whole = {
    nodeId: 'x',
    nodeName: 'X',
    nodeType: 'task',
    message: 'resolving',
    level: 'WARN' as const,
    timestamp: START,
  };
  t.same(logEntry(inst, ['n3', 'INFO', 'started', 250]), {
    nodeId: 'ask',
    nodeName: 'Ask the customer',
    nodeType: 'inputNode',
    message: 'started',
    level: 'INFO',
    timestamp: '2026-11-22T10:00:00.250Z',
  });
  t.same(logEntry(inst, ['n3', 'INFO', 'started', '2026-11-22T10:00:09.000Z']).timestamp, '2026-11-22T10:00:09.000Z');
  t.same(logEntry(inst, ['', 'INFO', 'execution started (version 1)', 0, { a: 1 }]), {
    nodeId: '',
    nodeName: 'Orders',
    nodeType: 'process',
    message: 'execution started (version 1)',
    level: 'INFO',
    timestamp: START,
    variables: { a: 1 },
  });
  t.equal(logEntry(inst, whole), whole);
});

t.test('an execution keeps its lines without variables packed, and reads them all back in order', async (t) => {
  const h = await engineHarness(t);
  const pid = await h.publish(`
processId: AUTO
name: Packed
nodes:
  start: { type: startEvent, next: ask }
  ask: { type: inputNode, inputType: textbox, formTitle: Go on?, next: done }
  done: { type: endEvent }
`);
  const started = await h.start(pid, { n: 1 });
  const live = h.store.state.instances[started.processInstanceId]!;
  t.ok(Array.isArray(live.logs[0]), 'the first line keeps a copy of the variables: an array');
  t.same(
    live.logs.slice(1),
    ['n1 INFO 0 started', 'n1 INFO 0 completed', 'n2 INFO 0 started', 'n2 INFO 0 waiting for input'],
    'the others: one string each',
  );
  t.same(
    logEntries(live).map((e) => [e.nodeId, e.level, e.message]),
    [
      ['', 'INFO', 'execution started (version 1)'],
      ['start', 'INFO', 'started'],
      ['start', 'INFO', 'completed'],
      ['ask', 'INFO', 'started'],
      ['ask', 'INFO', 'waiting for input'],
    ],
  );
});
