import t from 'tap';
import { boundaryDue } from '../../../src/daemon/engine/effect-plan.js';
import { summarize } from '../../../src/daemon/state/execution-summary.js';
import { STATE } from '../../../src/daemon/state/state.js';
import { MemoryStep } from '../../helpers/step.js';

// An execution's summary (what the directory keeps of an execution on disk) made from real
// steps: its waits by kind with what routing needs, its earliest timer among the waits' due
// times and the unfired timer boundary events, and nothing for nodes no longer live.

const FLOW = `processId: AUTO
name: Summary
nodes:
  start: { type: startEvent, next: split }
  split: { type: parallelGateway, next: [ask, msg, nap] }
  ask: { type: userTask, assignee: ana, fields: [{ name: ok, type: boolean }], timeout: 2h, next: join }
  msg: { type: intermediateCatchEvent, eventType: message, messageRef: paid, correlationKey: "{order}", next: join }
  nap: { type: intermediateCatchEvent, eventType: timer, duration: 3d, next: join }
  late: { type: boundaryEvent, attachedTo: msg, event: timer, duration: 30m, next: done }
  join: { type: parallelGateway, next: done }
  done: { type: endEvent }
`;

t.test('a waiting execution: its waits, their routing keys, and its earliest timer', async (t) => {
  const m = new MemoryStep();
  const pid = await m.publish(FLOW);
  const id = m.start(pid, { order: 'o-17' }).answer.processInstanceId;
  const inst = m.instance(id);
  const s = summarize(inst, boundaryDue(m.ctx));
  t.equal(s.id, id);
  t.equal(s.processId, pid);
  t.equal(s.stateCd, STATE.RUNNING);
  t.equal(s.root, null, 'a root');
  t.equal(s.startMs, m.ms);
  t.equal(s.active, 0, 'nothing active at rest');
  t.equal(s.triggered, false, 'started by no trigger');
  t.equal(s.child, false, 'no parent waits for it');
  t.equal(new Date(s.startMs).toISOString(), inst.startTime, 'its start time round trips as ISO');
  const byKind = Object.fromEntries(s.waits.map((w) => [w.kind, w]));
  t.match(byKind.input, { kind: 'input', since: m.ms, assignee: 'ana' });
  t.match(byKind.event, { kind: 'event', eventType: 'message', nodeId: 'msg', ref: 'paid', key: 'o-17' });
  t.match(byKind.timer, { kind: 'timer' });
  t.equal(s.waits.length, 3);
  t.equal(s.dueMs, m.ms + 30 * 60_000, "the message wait's boundary comes first (30 min, before the input's 2 h)");
  t.same(JSON.parse(JSON.stringify(s)), s, 'plain JSON');
});
