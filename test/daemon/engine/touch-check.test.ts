import t from 'tap';
import { jobKey } from '../../../src/daemon/state/job-queues.js';
import type { WfxRecord } from '../../../src/daemon/state/records.js';
import { execution, treeOf } from '../../../src/daemon/state/executions.js';
import type { StepInput } from '../../../src/daemon/engine/step/index.js';
import { touchedBy } from '../../../src/daemon/engine/step/touched.js';
import { touchCheck } from '../../../src/daemon/engine/touch-check.js';
import { catchFlow, engineHarness } from '../../helpers/engine.js';

const logged = (instanceId: string): WfxRecord => ({
  type: 'instance.logged',
  instanceId,
  entry: { at: '2026-11-21T10:00:00.000Z', level: 'INFO', message: 'x' } as never,
});

const SUB = `
processId: AUTO
name: Parent
nodes:
  start: { type: startEvent, next: sub }
  sub:
    type: subProcess
    next: done
    nodes:
      s: { type: startEvent, next: wait }
      wait: { type: intermediateCatchEvent, eventType: message, messageRef: inner, next: e }
      e: { type: endEvent }
  done: { type: endEvent }
`;

t.test('a step may write only to the trees its input names, ones it starts, and ones it reaches', async (t) => {
  const h = await engineHarness(t);
  const pid = await h.publish(catchFlow('paid'));
  const a = (await h.start(pid, {}, { correlationKey: 'a' })).processInstanceId;
  const b = (await h.start(pid, {}, { correlationKey: 'b' })).processInstanceId;
  const parent = await h.start(await h.publish(SUB));
  // The check applies records to resident executions (WFX_TEST_COLD=1 took them off).
  h.cold?.restoreAll(h.store.state);
  const child = Object.keys(h.store.state.instances).find(
    (id) => h.store.state.instances[id]!.parentInstanceId === parent.processInstanceId,
  )!;
  t.ok(child, 'the subProcess runs as a child');
  t.equal(treeOf(execution(h.store.state, child)!), parent.processInstanceId, 'the child is in its parent’s tree');

  const applied: WfxRecord[] = [];
  const check = touchCheck(h.store.state, 'answer', [a, parent.processInstanceId], (r) => applied.push(r));
  check.apply(logged(a));
  check.apply(logged(child));
  t.throws(() => check.apply(logged(b)), 'an execution of a tree not named is refused');
  t.equal(applied.length, 2, 'the refused record is not applied');
  check.reach(b);
  check.apply(logged(b));
  t.equal(applied.length, 3, 'one reached through the subscription index is allowed');

  const fresh = touchCheck(h.store.state, 'start', [], () => undefined);
  t.throws(() => fresh.apply(logged(a)), 'naming nothing allows no existing execution');
  const started = { ...h.store.state.instances[a]!, processInstanceId: 'new-one' };
  fresh.apply({ type: 'instance.started', instance: started as never });
  t.doesNotThrow(() => fresh.apply(logged('new-one')), 'one the step started is allowed');
});

t.test('touchedBy names what each input reaches', async (t) => {
  const h = await engineHarness(t);
  const pid = await h.publish(catchFlow('paid'));
  const a = (await h.start(pid, {}, { correlationKey: 'a' })).processInstanceId;
  const b = (await h.start(pid, {}, { correlationKey: 'a' })).processInstanceId;
  await h.start(pid, {}, { correlationKey: 'c' });
  const now = new Date();
  const event: StepInput = {
    kind: 'event',
    organization: 'default',
    eventType: 'paid',
    correlationKey: 'a',
    data: {},
    ttlSeconds: 0,
    messageId: null,
    dedupKey: null,
    elsewhere: [],
  };
  t.same([...touchedBy(h.store.state, event, now)].sort(), [a, b].sort(), 'an event: the subscribers of its key');
  t.same(touchedBy(h.store.state, { kind: 'continue', ids: [a, b], from: 1 }, now), [b], 'continue: from `from`');
  const key = jobKey(a, 'n2');
  t.same(touchedBy(h.store.state, { kind: 'job.release', req: { organization: null, key, worker: 'w' } }, now), [a]);
  t.same(
    touchedBy(h.store.state, { kind: 'job.release', req: { organization: null, key: 'nope', worker: 'w' } }, now),
    [],
  );
  t.same(touchedBy(h.store.state, { kind: 'sweep', memoryBatch: 10 }, now), [], 'a sweep names none');
  t.same(touchedBy(h.store.state, { kind: 'start', request: { organization: 'default', processId: pid } }, now), []);
});

t.test('while every execution is resident, ensure answers null: a step begins at once', async (t) => {
  const h = await engineHarness(t);
  const pid = await h.publish(catchFlow('paid'));
  const a = (await h.start(pid)).processInstanceId;
  t.equal(h.engine.executions.allResident, true);
  t.equal(h.engine.executions.ensure([a, 'no-such-execution']), null);
  t.equal(h.engine.executions.get(a), h.store.state.instances[a], 'get reads the resident execution');
  t.equal(h.engine.executions.get('constructor'), undefined, 'an id is never a prototype key');
});
