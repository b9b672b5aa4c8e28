import t from 'tap';
import {
  argumentsText,
  callState,
  formatTranscriptLine,
  readable,
  resultText,
  transcriptLines,
  transcriptSummary,
  wrap,
} from '../../src/client/transcript.js';
import type { AgentCall, AgentState, NodeView } from '../../src/shared/api/index.js';

const CHILD = '01a1fe30-edc6-7617-bd1f-84feb7474dfd';
const call = (extra: Partial<AgentCall>): AgentCall => ({
  id: 'call_1',
  name: 'look_up_order',
  arguments: '{"orderId":"A1"}',
  processId: '11111111-1111-4111-8111-111111111111',
  step: 1,
  childInstanceId: CHILD,
  ok: null,
  ...extra,
});

/** An agent node: the first turn asked for two tools; the first ended, the second runs. */
const AGENT: AgentState = {
  messages: [
    { role: 'system', content: 'You help customers.' },
    { role: 'user', content: 'Help with order A1' },
    {
      role: 'assistant',
      content: 'Let me look.',
      toolCalls: [
        { id: 'call_1', name: 'look_up_order', arguments: '{"orderId": "A1"}' },
        { id: 'call_2', name: 'ask_a_supervisor', arguments: '{"reason":"refund"}' },
      ],
    },
    { role: 'tool', toolCallId: 'call_1', name: 'look_up_order', content: '{"status":"shipped","lines":[1,2]}' },
  ],
  steps: 1,
  calls: [
    call({ ok: true }),
    call({ id: 'call_2', name: 'ask_a_supervisor', childInstanceId: `${CHILD.slice(0, -1)}e` }),
  ],
  usage: { inputTokens: 30, outputTokens: 8 },
};

const node = (agent: AgentState, statusCd: NodeView['statusCd'] = 1): NodeView & { agent: AgentState } => ({
  nodeInstanceId: 'n2',
  nodeId: 'agent',
  nodeName: 'agent',
  nodeType: 'callAgent',
  statusCd,
  startTime: '2026-11-21T10:00:00.000Z',
  endTime: null,
  agent,
});

const text = (lines: ReturnType<typeof transcriptLines>) => lines.map(formatTranscriptLine).join('\n');

t.test('a call stands as its ok, its execution and whether its node still runs say', async (t) => {
  t.equal(callState(call({ ok: true }), true), 'done');
  t.equal(callState(call({ ok: false }), true), 'failed');
  t.equal(callState(call({ ok: false, childInstanceId: null }), true), 'refused', 'no execution: refused');
  t.equal(callState(call({}), true), 'running');
  t.equal(callState(call({ childInstanceId: null }), true), 'waits its turn', 'one at a time: not started yet');
  t.equal(callState(call({}), false), 'cancelled', 'the node ended under it');
  t.equal(callState(call({ childInstanceId: null }), false), 'not started');
});

t.test('the summary counts turns, calls by state and tokens', async (t) => {
  t.equal(transcriptSummary(AGENT, true), '1 turn · 30 input + 8 output tokens · 2 tool calls: 1 done, 1 running');
  t.equal(
    transcriptSummary({ ...AGENT, steps: 2, calls: [] }, false),
    '2 turns · 30 input + 8 output tokens · no tool calls',
  );
});

t.test('JSON as a person writes it; what is not JSON as it was written, on one line', async (t) => {
  t.equal(
    readable({ orderId: 'A1', 'line-items': [{ sku: 'x', qty: 2 }], note: null }),
    '{orderId: "A1", "line-items": [{sku: "x", qty: 2}], note: null}',
  );
  t.equal(argumentsText('{"orderId": "A1", "verbose": false}'), 'orderId: "A1", verbose: false');
  t.equal(argumentsText('{}'), '');
  t.equal(argumentsText('{not\n json'), '{not json', 'a model may write invalid JSON');
  t.equal(argumentsText('[1, 2]'), '[1, 2]');
  t.same(resultText('{"error":"NO_BRANCH_MATCHED: no\\nbranch"}'), {
    text: 'error: NO_BRANCH_MATCHED: no branch',
    error: true,
  });
  t.same(
    resultText('{"error":"x","detail":1}'),
    { text: '{error: "x", detail: 1}', error: false },
    'only a lone error is one',
  );
  t.same(resultText('"done"'), { text: '"done"', error: false });
  t.same(resultText('{"a":1}… (clipped: 20000 characters in all)'), {
    text: '{"a":1}… (clipped: 20000 characters in all)',
    error: false,
  });
});

t.test('wrap breaks at spaces, splits what has none, keeps line breaks and one blank line', async (t) => {
  t.same(wrap('the quick brown fox jumps', 10), ['the quick', 'brown fox', 'jumps']);
  t.same(wrap('abcdefghijklmnopqrstuvwxyz', 10), ['abcdefghij', 'klmnopqrst', 'uvwxyz']);
  t.same(wrap('one\n\n\n\ntwo', 10), ['one', '', 'two']);
});

t.test('the transcript: each message under its role, calls with their execution and state, results', async (t) => {
  const out = text(transcriptLines(node(AGENT), { width: 100, textChars: 1000, resultChars: 300 }));
  t.equal(
    out,
    [
      '  system     You help customers.',
      '  user       Help with order A1',
      '  assistant  Let me look.',
      '             → look_up_order(orderId: "A1")',
      `               done in ${CHILD}`,
      '             → ask_a_supervisor(reason: "refund")',
      `               running in ${CHILD.slice(0, -1)}e`,
      '  tool       ← look_up_order: {status: "shipped", lines: [1, 2]}',
    ].join('\n'),
  );
  const lines = transcriptLines(node(AGENT), { width: 100, textChars: 1000, resultChars: 300 });
  t.same(
    lines.map((l) => l.tone),
    ['text', 'text', 'text', 'call', 'call', 'call', 'call', 'result'],
  );
});

t.test('long text is wrapped to the width and clipped with a note; a node that asks the model says so', async (t) => {
  const long = { ...AGENT, messages: [{ role: 'user' as const, content: 'word '.repeat(100) }] };
  const lines = transcriptLines(node(long, 0), {
    width: 40,
    textChars: 60,
    resultChars: 300,
    clipHint: ' (see --json)',
  });
  t.same(text(lines).split('\n'), [
    '  user       word word word word word',
    '             word word word word word',
    '             word word',
    '             … 439 more characters (see',
    '             --json)',
    '             … the model is answering (turn 2)',
  ]);
  t.same(
    lines.map((l) => [l.role, l.tone]),
    [
      ['user', 'text'],
      ['', 'text'],
      ['', 'text'],
      ['', 'note'],
      ['', 'note'],
      ['', 'note'],
    ],
  );
  const empty = {
    ...AGENT,
    messages: [
      { role: 'system' as const, content: ' ' },
      { role: 'assistant' as const, content: '' },
    ],
  };
  t.same(text(transcriptLines(node(empty, 2), { width: 80, textChars: 10, resultChars: 10 })).split('\n'), [
    '  system     (empty)',
    '  assistant  (no text)',
  ]);
});

t.test('compact: a call and its state on one line, cut to the width, the execution id cut to its tail', async (t) => {
  const refused = {
    ...AGENT,
    messages: [
      ...AGENT.messages,
      {
        role: 'assistant' as const,
        content: '',
        toolCalls: [{ id: 'call_3', name: 'refund', arguments: `{"amount": 5, "reason": "${'x'.repeat(80)}"}` }],
      },
      {
        role: 'tool' as const,
        toolCallId: 'call_3',
        name: 'refund',
        content: '{"error":"invalid arguments: arguments.amount must be > 10"}',
      },
    ],
    calls: [...AGENT.calls, call({ id: 'call_3', name: 'refund', step: 2, childInstanceId: null, ok: false })],
  };
  const lines = transcriptLines(node(refused, 4), { width: 60, textChars: 200, resultChars: 200, compact: true });
  const out = text(lines).split('\n');
  t.same(out.slice(3), [
    '             → look_up_order(orderId:…) · done …84feb7474dfd',
    '             → ask_a_supervisor(…) · cancelled …84feb7474dfe',
    '  tool       ← look_up_order: {status: "shipped", lines: [1…',
    '  assistant  → refund(amount: 5, reason: "xxxxxx…) · refused',
    '  tool       ← refund: error: invalid arguments: arguments.…',
  ]);
  t.same(
    lines.slice(3).map((l) => l.tone),
    ['call', 'call', 'result', 'error', 'error'],
  );
  t.ok(
    out.every((l) => l.length <= 60),
    'no line wider than the width',
  );
});
