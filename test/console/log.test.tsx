import { render } from 'preact-render-to-string';
import t from 'tap';
import { LogFollower, type LogSource } from '../../src/console/api/log-follower.js';
import { LogView } from '../../src/console/components/log-view.js';
import {
  addEntries,
  EMPTY_LOG,
  endLog,
  nodeVariables,
  type LogArrival,
  type LogState,
} from '../../src/console/model/log.js';
import type { LogEntry } from '../../src/shared/api/process.js';

const entry = (n: number): LogEntry => ({
  nodeId: `node${n}`,
  nodeName: `Node ${n}`,
  nodeType: 'task',
  message: `entry ${n}`,
  level: n === 3 ? 'ERROR' : 'INFO',
  timestamp: new Date(Date.UTC(2026, 0, 1, 0, 0, n)).toISOString(),
});
const arrivals = (...seqs: number[]): LogArrival[] => seqs.map((seq) => ({ seq, entry: entry(seq) }));
const seqs = (log: LogState) => log.entries.map((e) => e.seq);

t.test('entries are kept once each, in order, whatever a reconnect sends again', async (t) => {
  let log = addEntries(EMPTY_LOG, arrivals(1, 2, 3));
  t.same(seqs(log), [1, 2, 3]);
  log = addEntries(log, arrivals(1, 2, 3, 4, 5));
  t.same(seqs(log), [1, 2, 3, 4, 5], 'a stream opened anew replays from the start: kept once');
  t.equal(addEntries(log, arrivals(4, 5)), log, 'nothing new: the same log');
  t.same(
    seqs(
      addEntries(log, [
        { seq: Number('x'), entry: entry(9) },
        { seq: 6.5, entry: entry(9) },
      ]),
    ),
    [1, 2, 3, 4, 5],
    'no sequence, no entry',
  );
  t.equal(log.last, 5);
  t.notOk(log.ended);
  t.ok(endLog(log).ended);
});

/** An EventSource that a test drives: `emit` an entry, `drop` the connection, `end`. */
class FakeSource implements LogSource {
  readyState = 1;
  onmessage: ((e: MessageEvent<string>) => void) | null = null;
  onerror: ((e: Event) => void) | null = null;
  closed = false;
  private endListener: (() => void) | null = null;
  constructor(readonly url: string) {}
  addEventListener(_type: 'end', listener: () => void) {
    this.endListener = listener;
  }
  close() {
    this.closed = true;
    this.readyState = 2;
  }
  emit(seq: number) {
    this.onmessage?.({ data: JSON.stringify(entry(seq)), lastEventId: String(seq) } as MessageEvent<string>);
  }
  /** A drop EventSource retries by itself (CONNECTING), or one it gives up on (CLOSED). */
  drop(gaveUp: boolean) {
    this.readyState = gaveUp ? 2 : 0;
    this.onerror?.(new Event('error'));
  }
  end() {
    this.endListener?.();
  }
}

t.test(
  'the log follower resumes after a drop: each entry once, reopened when EventSource gives up, closed at end',
  async (t) => {
    const sources: FakeSource[] = [];
    const timers: (() => void)[] = [];
    let log = EMPTY_LOG;
    let refused = 0;
    let ended = false;
    const follower = new LogFollower('/process/instance/x/logs?follow=true', {
      open: (url) => {
        const s = new FakeSource(url);
        sources.push(s);
        return s;
      },
      entries: (a) => (log = addEntries(log, a)),
      ended: () => (ended = true),
      refused: () => refused++,
      setTimer: (fn) => timers.push(fn),
      clearTimer: () => undefined,
      reopenMs: 3000,
    });
    const [first] = sources;
    first!.emit(1);
    first!.emit(2);
    first!.drop(false);
    t.equal(sources.length, 1, 'EventSource reconnects by itself, sending Last-Event-ID');
    first!.readyState = 1;
    first!.emit(3);
    first!.drop(true);
    t.equal(refused, 1, 'a stream given up on: the session is checked');
    t.equal(sources.length, 1, 'reopened only after the pause');
    timers.shift()!();
    t.equal(sources.length, 2, 'reopened');
    const second = sources[1]!;
    t.equal(second.url, '/process/instance/x/logs?follow=true');
    for (const n of [1, 2, 3, 4, 5]) second.emit(n);
    t.same(seqs(log), [1, 2, 3, 4, 5], 'the replay kept once');
    second.end();
    t.ok(ended, 'end reported');
    t.ok(second.closed, 'the stream closed at end');
    second.drop(true);
    t.equal(timers.length, 0, 'never reopened after end');
    follower.stop();
  },
);

t.test('the log view shows the entries, a level each, and how many it leaves out', async (t) => {
  const log = addEntries(EMPTY_LOG, arrivals(1, 2, 3, 4));
  const html = render(<LogView log={log} limit={3} />);
  t.match(html, /1 earlier entries not shown/);
  t.notMatch(html, /entry 1</, 'the oldest left out');
  t.match(html, /entry 4/);
  t.match(html, /class="log-entry level-error"[^>]*data-seq="3"/, 'its level');
  t.match(html, /Following the log/);
  t.match(
    render(<LogView log={endLog(log)} nodeId="node2" />),
    /entry 2[\s\S]*the log is complete/,
    "one node's entries, complete",
  );
  t.match(render(<LogView log={EMPTY_LOG} />), /No entries yet/);
});

t.test("a node's variables in and set come from the log's copies around its run", async (t) => {
  const line = (nodeId: string, message: string, variables?: Record<string, unknown>): LogEntry => ({
    nodeId,
    nodeName: nodeId,
    nodeType: 'task',
    message,
    level: 'INFO',
    timestamp: '2026-11-26T00:00:00.000Z',
    ...(variables && { variables }),
  });
  const log = addEntries(
    EMPTY_LOG,
    [
      line('', 'execution started', { order: 1 }),
      line('a', 'started'),
      line('a', 'completed', { order: 1, total: 5 }),
      line('b', 'started'),
      line('b', 'completed', { order: 1, total: 7, ok: true }),
      line('a', 'started'),
      line('a', 'waiting for input'),
    ].map((entry, i) => ({ seq: i + 1, entry })),
  );
  t.same(
    nodeVariables(log, 'b'),
    { in: { order: 1, total: 5 }, set: { total: 7, ok: true } },
    'what b found, what it changed',
  );
  t.same(nodeVariables(log, 'a'), { in: { order: 1, total: 7, ok: true }, set: null }, "a's latest run, still waiting");
  t.same(nodeVariables(log, 'c'), { in: null, set: null }, 'a node not reached');
  const noCopies = addEntries(EMPTY_LOG, [
    { seq: 1, entry: line('a', 'started') },
    { seq: 2, entry: line('a', 'completed') },
  ]);
  t.same(nodeVariables(noCopies, 'a'), { in: null, set: null }, 'a log too long to keep copies says nothing');
});
