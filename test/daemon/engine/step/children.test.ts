import t from 'tap';
import { MAX_CHILD_DEPTH } from '../../../../src/daemon/engine/step/children.js';
import { STATE } from '../../../../src/daemon/state/state.js';
import { MemoryStep } from '../../../helpers/step.js';

t.test('a subProcess that starts its own flow fails with CHILD_DEPTH_EXCEEDED past the depth limit', async (t) => {
  const m = new MemoryStep();
  const id = '0a1b2c3d-4e5f-4a6b-8c7d-8e9f0a1b2c3d';
  const pid = await m.publish(`processId: ${id}
name: Itself
nodes:
  start: { type: startEvent, next: sub }
  sub: { type: subProcess, processId: ${id}, next: end }
  end: { type: endEvent }
`);
  const root = m.instance(m.start(pid).answer.processInstanceId);
  t.equal(root.stateCd, STATE.FAILED, 'the failure reached the root');
  const all = Object.values(m.state.instances).filter((i) => i !== undefined);
  t.equal(all.length, MAX_CHILD_DEPTH + 1, 'the root and as many children as may nest, no more');
  t.ok(
    all.every((i) => i.error?.code === 'CHILD_DEPTH_EXCEEDED'),
    'the deepest failed with it, and each parent with its child',
  );
});

t.test('a callProcess child carries the link to its root and how deep calls chain', async (t) => {
  const m = new MemoryStep();
  const target = await m.publish(`processId: AUTO
name: Target
nodes:
  start: { type: startEvent, next: ask }
  ask: { type: inputNode, inputType: textbox, next: done }
  done: { type: endEvent }
`);
  const pid = await m.publish(`processId: AUTO
name: Caller
nodes:
  start: { type: startEvent, next: call }
  call: { type: callProcess, processId: ${target}, correlationKey: k1, next: done }
  done: { type: endEvent }
`);
  const caller = m.instance(m.start(pid).answer.processInstanceId);
  const called = m.instance(caller.variables.calledProcessInstanceId as string);
  t.equal(called.parentInstanceId, null, 'not a child: the caller does not wait for it');
  t.equal(called.root, caller.processInstanceId);
  t.equal(called.callDepth, 1);
  t.equal(called.correlationKey, 'k1');
  t.throws(
    () =>
      m.run({
        kind: 'start',
        request: { organization: 'default', processId: 'no-such-flow' },
      }),
    { code: 'PROCESS_NOT_FOUND' },
  );
});
