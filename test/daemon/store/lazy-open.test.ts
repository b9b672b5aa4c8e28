import t from 'tap';
import { wfxJsonStore } from '../../../src/daemon/engine/segment-summary.js';
import { execution } from '../../../src/daemon/state/executions.js';
import { InstanceTable } from '../../../src/daemon/state/instance-table.js';
import type { WfxRecord } from '../../../src/daemon/state/records.js';
import type { Instance, WfxState } from '../../../src/daemon/state/state.js';
import { Store } from '../../../src/daemon/store/store.js';
import { engineHarness } from '../../helpers/engine.js';

// The lazy open (StoreOptions.lazy, decision 068 step 6b): the executions a checkpoint wrote are
// left unread, their summaries in `evictable.unread`; those the journal after it changes are
// read back just before the replay applies the change; each unread one reads back as it was.

const FLOW = `processId: AUTO
name: Two messages
nodes:
  start: { type: startEvent, next: a }
  a: { type: intermediateCatchEvent, eventType: message, messageRef: first, next: b }
  b: { type: intermediateCatchEvent, eventType: message, messageRef: second, next: done }
  done: { type: endEvent }
`;

t.test('a lazy open reads only what the journal changes; the rest reads back as it was', async (t) => {
  const h = await engineHarness(t, undefined, undefined, { cold: false });
  const pid = await h.publish(FLOW);
  const ids: string[] = [];
  for (let i = 0; i < 6; i++) ids.push((await h.start(pid, {}, { correlationKey: `k-${i}` })).processInstanceId);
  await h.store.checkpoint();
  // After the checkpoint: one execution moves on, one more starts (journal only).
  const moved = await h.engine.publishEvent({
    organization: 'default',
    eventType: 'first',
    correlationKey: 'k-0',
    data: {},
  });
  t.equal(moved.status, 'resumed');
  const late = (await h.start(pid, {}, { correlationKey: 'k-late' })).processInstanceId;
  const expected = new Map<string, Instance>();
  for (const id of [...ids, late]) expected.set(id, structuredClone(execution(h.store.state, id)!));
  await h.engine.close();
  await h.store.close({ checkpoint: false });

  const store = await Store.open<WfxState, WfxRecord>({ dir: h.dir, ...wfxJsonStore(), lazy: true });
  t.teardown(() => store.close({ checkpoint: false }));
  const evictable = store.evictable!;
  const unread = evictable.unread!;
  t.equal(unread.size, 5, 'the five executions the journal did not change are left unread');
  t.same(
    InstanceTable.of(store.state)
      .ids()
      .filter((id) => execution(store.state, id) !== undefined)
      .sort(),
    [ids[0]!, late].sort(),
    'resident: the one the journal changed (read back for the replay) and the one it started',
  );
  t.same(execution(store.state, ids[0]!), expected.get(ids[0]!), 'the changed one has the change applied');
  t.equal(unread.get(ids[1]!)?.summary.waits[0]?.kind, 'event', 'an unread one is summarized');
  for (const id of ids.slice(1)) {
    t.ok(evictable.clean(id), `${id} is clean (a checkpoint wrote it, nothing changed it)`);
    t.same(await evictable.read(id), expected.get(id), `${id} reads back as it was`);
  }
  t.notOk(evictable.clean(ids[0]!), 'the changed one is not clean before the next checkpoint');
  t.notOk(evictable.clean(late), 'nor the new one');
});
