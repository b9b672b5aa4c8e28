import t from 'tap';
import { InstanceReads } from '../../../src/daemon/api/instance-reads.js';
import { catchFlow, engineHarness } from '../../helpers/engine.js';
import { STATE } from '../../../src/daemon/state/state.js';

t.test('readers of one execution share its read while they hold it; another organization is not found', async (t) => {
  const h = await engineHarness(t);
  const pid = await h.publish(`processId: AUTO
name: Straight
nodes:
  start: { type: startEvent, next: done }
  done: { type: endEvent }
`);
  const { processInstanceId: id } = await h.engine.start({ processId: pid, organization: 'default' });
  await h.archived(id);
  let reads = 0;
  const getInstance = h.engine.getInstance.bind(h.engine);
  h.engine.getInstance = (caller, at) => {
    reads++;
    return getInstance(caller, at);
  };
  const shared = new InstanceReads(h.engine);
  const [a, b] = await Promise.all([
    shared.hold({ organization: 'default' }, id),
    shared.hold({ organization: null }, id),
  ]);
  t.equal(reads, 1, 'one read for two readers at once');
  t.equal(a.inst, b.inst, 'one copy');
  t.equal(a.inst.processInstanceId, id);
  const c = await shared.hold({ organization: 'default' }, id);
  t.equal(reads, 1, 'a reader that comes while it is held shares it too');
  await t.rejects(shared.hold({ organization: 'other' }, id), { code: 'INSTANCE_NOT_FOUND' });
  t.equal(shared.size, 1);
  a.release();
  a.release(); // twice is once
  b.release();
  t.equal(shared.size, 1, 'held while a reader holds it');
  c.release();
  t.equal(shared.size, 0, 'let go when the last reader is done');
  await shared.hold({ organization: 'default' }, id).then((d) => d.release());
  t.equal(reads, 2, 'read again once nobody held it');
  await t.rejects(shared.hold({ organization: 'default' }, 'no-such-id'), { code: 'INSTANCE_NOT_FOUND' });
  t.equal(shared.size, 0, 'a failed read is not kept');
});

t.test('a live execution is read as it is now, even while another reader holds it', async (t) => {
  const h = await engineHarness(t);
  const pid = await h.publish(catchFlow('go'));
  const { processInstanceId: id } = await h.engine.start({
    processId: pid,
    organization: 'default',
    correlationKey: 'k',
  });
  const reads = new InstanceReads(h.engine);
  // A log stream following it holds it from here to its end.
  const following = await reads.hold({ organization: 'default' }, id);
  t.equal(following.inst.stateCd, STATE.RUNNING);
  await h.engine.publishEvent({ organization: 'default', eventType: 'go', correlationKey: 'k' });
  const now = await reads.hold({ organization: 'default' }, id).catch(() => null);
  const seen = now?.inst ?? (await h.get(id));
  t.equal(seen.stateCd, STATE.COMPLETED, 'the read after the event sees it completed, not the held object');
  await t.rejects(reads.hold({ organization: 'other' }, id), { code: 'INSTANCE_NOT_FOUND' });
  following.release();
  now?.release();
});
