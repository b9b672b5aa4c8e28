import t from 'tap';
import { AnswerStream } from '../../src/cli/answer-stream.js';
import { logStreamServer, type ScriptedEvent } from '../helpers/log-stream-server.js';
import { wfxIn } from '../helpers/cli.js';

const ID = '01a1fe30-edc6-7617-bd1f-84feb7474dfd';
const p = (delta: string, nodeInstanceId = 'n2', nodeId = 'classify') => ({ nodeId, nodeInstanceId, delta });

/** A triage execution whose aiTask streams its answer, then logs its attempt and completes. */
const SCRIPT: ScriptedEvent[] = [
  { entry: { nodeId: '', nodeName: 'Triage', message: 'execution started (version 1)' } },
  { entry: { nodeId: 'classify', message: 'started' } },
  { progress: p('{"category":') },
  { progress: p(' "billing"}') },
  { entry: { nodeId: 'classify', message: 'attempt 1: model m, 12+5 tokens, 40 ms, stop' } },
  { entry: { nodeId: 'classify', message: 'completed' } },
  { end: true },
];

t.test('wfx logs --follow in a pipe: the answer as plain text, its line ended before the next log line', async (t) => {
  const { url } = await logStreamServer(t, SCRIPT);
  const res = await wfxIn(['--url', url, '--api-key', 'apk_x_y', 'logs', ID, '--follow']);
  t.equal(res.code, 0, res.stderr);
  const lines = res.stdout.split('\n');
  t.match(lines, [
    /INFO  Triage: execution started/,
    /INFO  classify: started$/,
    'classify: {"category": "billing"}',
    /INFO  classify: attempt 1: model m/,
    /INFO  classify: completed$/,
    `${ID} completed`,
    '',
  ]);
});

t.test('wfx logs --follow --json: the progress events as lines of their own', async (t) => {
  const { url } = await logStreamServer(t, SCRIPT);
  const res = await wfxIn(['--url', url, '--api-key', 'apk_x_y', 'logs', ID, '--follow', '--json']);
  t.equal(res.code, 0, res.stderr);
  const lines = res.stdout
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Record<string, unknown>);
  t.match(lines, [
    { id: 1, message: /execution started/ },
    { id: 2, message: 'started' },
    { event: 'progress', nodeId: 'classify', nodeInstanceId: 'n2', delta: '{"category":' },
    { event: 'progress', delta: ' "billing"}' },
    { id: 3, message: /attempt 1/ },
    { id: 4, message: 'completed' },
  ]);
});

t.test('wfx logs without --follow: entries only', async (t) => {
  const { url } = await logStreamServer(t, SCRIPT);
  const res = await wfxIn(['--url', url, '--api-key', 'apk_x_y', 'logs', ID]);
  t.equal(res.code, 0, res.stderr);
  t.notMatch(res.stdout, /billing/);
  t.equal(res.stdout.trim().split('\n').length, 4);
});

/** A terminal-like output that keeps what was written. */
function terminal(columns: number) {
  const out = { text: '', columns, isTTY: true, write: (s: string) => ((out.text += s), true) };
  return out;
}

/** What a terminal shows: each line as the last carriage return and erase left it. */
function screen(text: string): string[] {
  return text.split('\n').map((line) => line.split('\r\u001b[2K').at(-1)!);
}

t.test('on a terminal the answer grows on one line, cut to its tail, and the log line replaces it', async (t) => {
  const out = terminal(30);
  const s = new AnswerStream(out as never, 'tty', false);
  s.progress(p('Hello'));
  t.same(screen(out.text), ['classify: Hello']);
  s.progress(p(' there,\nhow are you doing today?'));
  const line = screen(out.text).at(-1)!;
  t.equal(line, `classify: ${'Hello there, how are you doing today?'.slice(-19)}`, 'newlines as spaces, the tail');
  t.equal(line.length, 29, 'that fits the terminal');
  s.beforeEntry('classify');
  out.write('10:00:01.000 INFO  classify: completed\n');
  t.same(screen(out.text), ['10:00:01.000 INFO  classify: completed', ''], 'the log line took its place');
  s.progress(p('again', 'n9'));
  t.same(screen(out.text).at(-1), 'classify: again', 'a retry streams from the start');
  s.close();
  t.same(screen(out.text).at(-1), '', 'closed: nothing left on the line');
  const colored = terminal(80);
  new AnswerStream(colored as never, 'tty', true).progress(p('x'));
  t.match(colored.text, /\u001b\[2mclassify: \u001b\[0mx/);
});

t.test('in a pipe two nodes answering in turn each get their own line', async (t) => {
  const out = terminal(80);
  const s = new AnswerStream(out as never, 'plain', false);
  s.progress(p('a1', 'n1', 'first'));
  s.progress(p('b1', 'n2', 'second'));
  s.progress(p('a2', 'n1', 'first'));
  s.close();
  t.equal(out.text, 'first: a1\nsecond: b1\nfirst: a2\n');
});

t.test("wfx instances get: the execution's model usage, when it has some", async (t) => {
  const { url } = await logStreamServer(t, SCRIPT);
  const res = await wfxIn(['--url', url, '--api-key', 'apk_x_y', 'instances', 'get', ID]);
  t.equal(res.code, 0, res.stderr);
  t.match(res.stdout, /^model usage: 1 call, 12 input \+ 5 output tokens$/m);
});
