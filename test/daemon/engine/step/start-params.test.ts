import t from 'tap';
import { resolveStart } from '../../../../src/daemon/engine/step/start-params.js';
import { MemoryStep } from '../../../helpers/step.js';

const FLOW = `processId: AUTO
name: Typed
inputs:
  type: object
  required: [orderId]
  properties:
    orderId: { type: string }
    priority: { type: string, default: normal }
nodes:
  start: { type: startEvent, next: done }
  done: { type: endEvent }
`;

t.test('a start resolves the active version and fills in the declared defaults', async (t) => {
  const m = new MemoryStep();
  const pid = await m.publish(FLOW);
  const params = resolveStart(m.state, m.ctx, { organization: 'default', processId: pid, data: { orderId: 'o1' } });
  t.equal(params.processVersion, '1');
  t.equal(params.environment, 'PRODUCTION');
  t.same(params.variables, { orderId: 'o1', priority: 'normal' });
  t.equal(params.correlationKey, null);
});

t.test('a start that cannot run is refused with its code', async (t) => {
  const m = new MemoryStep({ limits: { variablesBytes: 100 } });
  const pid = await m.publish(FLOW);
  const start = (over: Record<string, unknown>) => () =>
    resolveStart(m.state, m.ctx, { organization: 'default', processId: pid, data: { orderId: 'o1' }, ...over });
  t.throws(start({ processId: 'nope' }), { code: 'PROCESS_NOT_FOUND' });
  t.throws(start({ organization: 'other' }), { code: 'PROCESS_NOT_FOUND' }, "another organization's flow");
  t.throws(start({ environment: 'DEVELOPMENT' }), { code: 'PROCESS_NOT_PUBLISHED' });
  t.throws(start({ versionNumber: '9' }), { code: 'VERSION_NOT_FOUND' });
  t.throws(start({ data: {} }), { code: 'VALIDATION_ERROR' }, 'the inputs');
  let deep: unknown = 'x';
  for (let i = 0; i < 200; i++) deep = [deep];
  t.throws(start({ data: { orderId: 'o1', deep } }), { code: 'VALIDATION_ERROR' }, 'too deep');
  t.throws(start({ data: { orderId: 'x'.repeat(200) } }), { code: 'PAYLOAD_TOO_LARGE' });
});
