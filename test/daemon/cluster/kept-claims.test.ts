import t, { type Test } from 'tap';
import { engineCluster } from '../../../src/daemon/cluster/engine-part.js';
import type { KeptClaims } from '../../../src/daemon/cluster/kept-claims.js';
import { STATE, type BufferedMessage } from '../../../src/daemon/state/state.js';
import { catchFlow, engineHarness, type EngineHarness } from '../../helpers/engine.js';
import { eventually } from '../../helpers/eventually.js';

/*
 * Kept messages consumed under claims (decision 043), as a daemon sharing its database does:
 * the claims here stand in for the database's (store/pg/pg-message-claims.ts, tested against
 * PostgreSQL in pg-message-claims.test), so that another daemon's claim can be held or given up
 * at will.
 */

const CATCH = catchFlow('paid');

/** Claims as the database keeps them: one holder per message, `elsewhere` being another daemon. */
class Claims implements KeptClaims {
  readonly holders = new Map<string, string>();
  readonly log: string[] = [];
  /** While set, each claim waits for it (a slow database). */
  gate: Promise<void> | null = null;
  private listener: ((ids: readonly string[]) => void) | null = null;

  async claim(id: string, instanceId: string): Promise<boolean> {
    this.log.push(`claim ${id}`);
    await this.gate;
    const holder = this.holders.get(id);
    if (holder !== undefined && holder !== instanceId) return false;
    this.holders.set(id, instanceId);
    return true;
  }

  async release(id: string, instanceId: string): Promise<void> {
    this.log.push(`release ${id}`);
    if (this.holders.get(id) === instanceId) this.holders.delete(id);
  }

  onMessages(listener: (ids: readonly string[]) => void): void {
    this.listener = listener;
  }

  /** Another daemon kept or removed these messages, and this one has read it. */
  told(ids: readonly string[]): void {
    this.listener!(ids);
  }
}

async function setup(t: Test, cold?: boolean) {
  const claims = new Claims();
  const h = await engineHarness(t, undefined, undefined, {
    cluster: engineCluster({ keptClaims: claims }),
    ...(cold !== undefined && { cold }),
  });
  const pid = await h.publish(CATCH);
  return { claims, h, pid };
}

const keep = (h: EngineHarness, key: string, data: Record<string, unknown>) =>
  h.engine.publishEvent({ organization: 'default', eventType: 'paid', correlationKey: key, data, ttlSeconds: 60 });
const kept = (h: EngineHarness): BufferedMessage[] => Object.values(h.store.state.messages);
const completed = (h: EngineHarness, id: string) =>
  h.waitFor((e) => e.processInstanceId === id && e.type === 'PROCESS_COMPLETED');

t.test('a node that starts waiting for a kept message consumes it under a claim', async (t) => {
  const { claims, h, pid } = await setup(t);
  t.equal((await keep(h, 'k', { n: 1 })).status, 'buffered');
  const [message] = kept(h);
  const started = await h.start(pid, {}, { correlationKey: 'k' });
  await completed(h, started.processInstanceId);
  t.equal((await h.get(started.processInstanceId)).variables.n, 1, 'then takes the message');
  t.same(claims.log, [`claim ${message!.id}`, `release ${message!.id}`], 'claimed, then given up once consumed');
  t.same(kept(h), [], 'and it is kept no more');
});

t.test('a claim another daemon holds leaves the node waiting, until that daemon gives it up', async (t) => {
  const { claims, h, pid } = await setup(t);
  await keep(h, 'k', { n: 1 });
  const [message] = kept(h);
  claims.holders.set(message!.id, 'elsewhere');
  const started = await h.start(pid, {}, { correlationKey: 'k' });
  // Each try is logged before it is answered: two logged means the first was refused.
  await eventually('the claim is tried again', () => claims.log.length >= 2);
  t.equal((await h.get(started.processInstanceId)).stateCd, STATE.RUNNING, 'it still waits');
  t.equal(kept(h).length, 1, 'and the message is still kept');
  claims.holders.delete(message!.id); // its node no longer waited: the other daemon gave it up
  await completed(h, started.processInstanceId);
  t.equal((await h.get(started.processInstanceId)).variables.n, 1, 'tried again, it takes the message');
});

t.test('a message consumed elsewhere leaves the node waiting for the next one kept', async (t) => {
  const { claims, h, pid } = await setup(t);
  await keep(h, 'k', { n: 1 });
  await keep(h, 'k', { n: 2 });
  const [first, second] = kept(h);
  claims.holders.set(first!.id, 'elsewhere');
  const started = await h.start(pid, {}, { correlationKey: 'k' });
  await waitUntil(() => claims.log.length >= 1);
  // The other daemon consumed the first: its removal reaches this daemon's state, then is told.
  await h.store.commit({ type: 'message.removed', id: first!.id });
  claims.told([first!.id]);
  await completed(h, started.processInstanceId);
  t.equal((await h.get(started.processInstanceId)).variables.n, 2, 'it takes the second');
  t.ok(claims.log.includes(`claim ${second!.id}`));
  t.same(kept(h), []);
});

t.test('a message another daemon keeps wakes a node that waits here', async (t) => {
  const { claims, h, pid } = await setup(t);
  const started = await h.start(pid, {}, { correlationKey: 'k' });
  const message: BufferedMessage = {
    id: '0193a000-0000-7000-8000-000000000001',
    organization: 'default',
    eventType: 'paid',
    correlationKey: 'k',
    data: { n: 7 },
    messageId: null,
    receivedAt: h.clock.now().toISOString(),
    expiresAt: new Date(h.clock.ms + 60_000).toISOString(),
  };
  await h.store.commit({ type: 'message.buffered', message });
  claims.told([message.id]);
  await completed(h, started.processInstanceId);
  t.equal((await h.get(started.processInstanceId)).variables.n, 7);
  t.same(kept(h), []);
});

t.test('a message another daemon keeps wakes a node that waits here while its execution is cold', async (t) => {
  const { claims, h, pid } = await setup(t, true);
  const started = await h.start(pid, {}, { correlationKey: 'k' });
  await h.rest();
  t.equal(h.engine.executions.get(started.processInstanceId), undefined, 'not resident');
  t.ok(h.engine.executions.coldSummary(started.processInstanceId), 'cold');
  const message: BufferedMessage = {
    id: '0193a000-0000-7000-8000-000000000002',
    organization: 'default',
    eventType: 'paid',
    correlationKey: 'k',
    data: { n: 8 },
    messageId: null,
    receivedAt: h.clock.now().toISOString(),
    expiresAt: new Date(h.clock.ms + 60_000).toISOString(),
  };
  await h.store.commit({ type: 'message.buffered', message });
  claims.told([message.id]);
  await completed(h, started.processInstanceId);
  t.equal((await h.get(started.processInstanceId)).variables.n, 8, 'read back and woken');
  t.same(claims.holders, new Map(), 'its claim given up');
});

t.test('a claim won for a node that no longer waits goes to the next node', async (t) => {
  const { claims, h, pid } = await setup(t);
  await keep(h, 'k', { n: 1 });
  let open!: () => void;
  claims.gate = new Promise((resolve) => (open = resolve));
  const gone = await h.start(pid, {}, { correlationKey: 'k' });
  await waitUntil(() => claims.log.length >= 1);
  await h.engine.cancel({ organization: 'default', processInstanceId: gone.processInstanceId });
  const next = await h.start(pid, {}, { correlationKey: 'k' });
  claims.gate = null;
  open();
  await completed(h, next.processInstanceId);
  t.equal((await h.get(next.processInstanceId)).variables.n, 1, 'the message reaches the node that waits');
  t.equal((await h.get(gone.processInstanceId)).stateCd, STATE.CANCELLED);
  t.same(claims.holders, new Map(), 'every claim given up');
});

t.test('without claims a kept message is consumed in the step that starts the wait', async (t) => {
  const h = await engineHarness(t);
  const pid = await h.publish(CATCH);
  await keep(h, 'k', { n: 1 });
  t.equal((await h.start(pid, {}, { correlationKey: 'k' })).stateCd, STATE.COMPLETED);
});

/** Waits for an in-process condition a few event-loop turns at a time (bounded). */
async function waitUntil(condition: () => boolean): Promise<void> {
  for (let turn = 0; turn < 10_000 && !condition(); turn++) await new Promise((resolve) => setImmediate(resolve));
  if (!condition()) throw new Error('the condition never held');
}
