import t from 'tap';
import { logEntries } from '../../../src/daemon/state/log-line.js';
import { STATE, STATUS } from '../../../src/daemon/state/state.js';
import { engineHarness, trail } from '../../helpers/engine.js';

t.test('a linear flow runs to completion in one durable step, with events and logs', async (t) => {
  const h = await engineHarness(t);
  const pid = await h.publish(`
processId: AUTO
name: Linear
nodes:
  start: { type: startEvent, next: work }
  work: { type: task, name: Do the work, next: set }
  set:
    type: setVariable
    variables: { total: "{order.amount}", label: "order {order.id} of {customer}", nothing: "{missing.value}" }
    next: out
  out: { type: outputNode, outputs: { result: "{total}" }, next: done }
  done: { type: endEvent }
`);
  const seqBefore = h.store.lastSeq;
  const inst = await h.start(pid, { order: { id: 7, amount: 12.5 }, customer: 'ACME' });
  await h.archived(inst.processInstanceId);
  t.equal(
    h.store.lastSeq - seqBefore,
    0,
    'nothing journaled: a run that starts and finishes in one step is written to history alone',
  );
  t.same(
    await h.engine.getInstance({ organization: null }, inst.processInstanceId),
    inst,
    'read back from history as it was live',
  );
  t.equal(inst.stateCd, STATE.COMPLETED);
  t.same(trail(inst), ['start:2', 'work:2', 'set:2', 'out:2', 'done:2']);
  t.equal(inst.variables.total, 12.5, 'a lone {ref} keeps its type');
  t.equal(inst.variables.label, 'order 7 of ACME');
  t.equal(inst.variables.nothing, '', 'a missing reference resolves to an empty string');
  t.same(inst.output, { result: 12.5 });
  t.ok(inst.endTime);
  t.match(
    logEntries(inst).find((l) => l.level === 'WARN'),
    { nodeId: 'set', message: /\{missing\.value\}/ },
    'the missing reference is logged as WARN',
  );
  t.match(
    logEntries(inst).find((l) => l.nodeId === 'work'),
    { nodeName: 'Do the work', nodeType: 'task', level: 'INFO' },
  );
  const types = h.events.filter((e) => e.processInstanceId === inst.processInstanceId).map((e) => e.type);
  t.same(types.slice(0, 3), ['PROCESS_STARTED', 'NODE_STARTED', 'NODE_COMPLETED']);
  t.equal(types.at(-1), 'PROCESS_COMPLETED');
  t.equal(
    h.logs.filter((l) => l.processInstanceId === inst.processInstanceId).length,
    inst.logs.length,
    'every log entry streamed',
  );
  t.same(h.logs.map((l) => l.id).slice(0, 3), [1, 2, 3], 'log ids number the entries');
  t.notOk(h.store.state.instances[inst.processInstanceId], 'archived out of the live state');
});

t.test('runs written to history alone leave nothing for the next checkpoint to write', async (t) => {
  const h = await engineHarness(t);
  const linear = await h.publish(`
processId: AUTO
name: Linear
nodes:
  start: { type: startEvent, next: done }
  done: { type: endEvent }
`);
  const waits = await h.publish(`
processId: AUTO
name: Waits
nodes:
  start: { type: startEvent, next: ask }
  ask: { type: inputNode, inputType: textbox, next: done }
  done: { type: endEvent }
`);
  await h.store.checkpoint();
  t.equal(h.store.changedSinceCheckpoint, 0, 'nothing changed since the checkpoint');
  const ran = await Promise.all(Array.from({ length: 50 }, () => h.start(linear, {})));
  for (const inst of ran) await h.archived(inst.processInstanceId);
  // Checkpoints follow the journal's growth, which these runs leave alone: a mark of each would
  // stay until a restart.
  t.equal(h.store.changedSinceCheckpoint, 0, 'fifty runs in history: none marked changed');
  const waiting = await h.start(waits, {});
  t.equal(h.store.changedSinceCheckpoint, 1, 'a journaled execution is marked, for the checkpoint to write');
  await h.store.checkpoint();
  t.equal(h.store.changedSinceCheckpoint, 0, 'and written by it');
  t.equal(h.store.state.instances[waiting.processInstanceId]?.stateCd, STATE.RUNNING);
});

t.test('ifElse takes then or else by a JUEL condition', async (t) => {
  const h = await engineHarness(t);
  const pid = await h.publish(`
processId: AUTO
name: Branch
nodes:
  start: { type: startEvent, next: decide }
  decide: { type: ifElse, condition: "\${order.total < 1000 && approved}", then: yes, else: no }
  yes: { type: endEvent }
  no: { type: endEvent }
`);
  t.same(trail(await h.start(pid, { order: { total: 5 }, approved: true })), ['start:2', 'decide:2', 'yes:2']);
  t.same(trail(await h.start(pid, { order: { total: 5000 }, approved: true })), ['start:2', 'decide:2', 'no:2']);
  const bad = await h.start(pid, { approved: true });
  t.equal(bad.stateCd, STATE.FAILED, 'an unknown top-level variable is an error');
  t.match(bad.error, { code: 'EXPRESSION_ERROR', nodeId: 'decide' });
});

t.test('exclusive gateway: first true branch, else default, else NO_BRANCH_MATCHED', async (t) => {
  const h = await engineHarness(t);
  const flow = (withDefault: boolean) => `
processId: AUTO
name: Exclusive
nodes:
  start: { type: startEvent, next: gw }
  gw:
    type: exclusiveGateway
    branches:
      - { condition: "\${n > 10}", next: big }
      - { condition: "\${n > 5}", next: medium }
${withDefault ? '    default: small' : ''}
  big: { type: endEvent }
  medium: { type: endEvent }
  small: { type: endEvent }
`;
  const pid = await h.publish(flow(true));
  t.same(trail(await h.start(pid, { n: 20 })).at(-1), 'big:2', 'the first true branch only');
  t.same(trail(await h.start(pid, { n: 7 })).at(-1), 'medium:2');
  t.same(trail(await h.start(pid, { n: 1 })).at(-1), 'small:2');
  const h2 = await engineHarness(t);
  const strict = await h2.publish(flow(false).replace('  small: { type: endEvent }\n', ''));
  const failed = await h2.start(strict, { n: 1 });
  t.equal(failed.stateCd, STATE.FAILED);
  t.match(failed.error, { code: 'NO_BRANCH_MATCHED', nodeId: 'gw' });
});

t.test('parallel fork and join: the join waits for a token on every incoming connection', async (t) => {
  const h = await engineHarness(t);
  const pid = await h.publish(`
processId: AUTO
name: Parallel
nodes:
  start: { type: startEvent, next: fork }
  fork: { type: parallelGateway, next: [a, b, c] }
  a: { type: setVariable, variables: { a: 1 }, next: join }
  b: { type: inputNode, inputType: textbox, next: join }
  c: { type: setVariable, variables: { c: 3 }, next: join }
  join: { type: parallelGateway, next: after }
  after: { type: setVariable, variables: { sum: "{a}" }, next: done }
  done: { type: endEvent }
`);
  const inst = await h.start(pid);
  t.equal(inst.stateCd, STATE.RUNNING, 'b still waits, so the join has not fired');
  t.notOk(
    trail(inst).some((s) => s.startsWith('join')),
    'no join node instance yet',
  );
  t.same(
    Object.values(inst.joins.join ?? {}).reduce((a, b) => a + b, 0),
    2,
    'two tokens wait at the join',
  );
  await h.engine.submitTask({
    organization: 'default',
    processInstanceId: inst.processInstanceId,
    nodeId: 'b',
    action: 'COMPLETE',
    data: { inputValue: 'x' },
  });
  const done = await h.get(inst.processInstanceId);
  t.equal(done.stateCd, STATE.COMPLETED);
  t.equal(trail(done).filter((s) => s.startsWith('join')).length, 1, 'the join fired once');
  t.equal(trail(done).filter((s) => s.startsWith('after')).length, 1, 'one token leaves the join');
});

t.test('a list of next on a task forks tokens that an exclusive gateway passes on one by one', async (t) => {
  const h = await engineHarness(t);
  const pid = await h.publish(`
processId: AUTO
name: Fork by list
nodes:
  start: { type: startEvent, next: [left, right] }
  left: { type: task, next: merge }
  right: { type: task, next: merge }
  merge: { type: exclusiveGateway, next: counted }
  counted: { type: task, next: done }
  done: { type: endEvent }
`);
  const inst = await h.start(pid);
  t.equal(inst.stateCd, STATE.COMPLETED);
  t.equal(trail(inst).filter((s) => s === 'counted:2').length, 2, 'a converging exclusive gateway passes each token');
});

t.test('inclusive gateway: every true branch, and the OR-join under every combination', async (t) => {
  const h = await engineHarness(t);
  const pid = await h.publish(`
processId: AUTO
name: Inclusive
nodes:
  start: { type: startEvent, next: split }
  split:
    type: inclusiveGateway
    branches:
      - { condition: "\${x}", next: a }
      - { condition: "\${y}", next: b }
      - { condition: "\${z}", next: c }
    default: d
  a: { type: setVariable, variables: { ranA: true }, next: join }
  b: { type: inputNode, inputType: number, next: join }
  c: { type: setVariable, variables: { ranC: true }, next: join }
  d: { type: task, next: join }
  join: { type: inclusiveGateway, next: after }
  after: { type: task, next: done }
  done: { type: endEvent }
`);
  for (let mask = 0; mask < 8; mask++) {
    const [x, y, z] = [!!(mask & 1), !!(mask & 2), !!(mask & 4)];
    let inst = await h.start(pid, { x, y, z });
    if (y) {
      t.equal(inst.stateCd, STATE.RUNNING, `x=${x} y=${y} z=${z}: the join waits for the branch still running`);
      t.notOk(trail(inst).includes('join:2'));
      await h.engine.submitTask({
        organization: 'default',
        processInstanceId: inst.processInstanceId,
        nodeId: 'b',
        action: 'COMPLETE',
        data: { inputValue: 1 },
      });
      inst = await h.get(inst.processInstanceId);
    }
    t.equal(inst.stateCd, STATE.COMPLETED, `x=${x} y=${y} z=${z}: completed`);
    const ran = ['a', 'b', 'c', 'd'].filter((n) => trail(inst).includes(`${n}:2`));
    t.same(
      ran,
      mask === 0 ? ['d'] : ['a', 'b', 'c'].filter((_, i) => mask & (1 << i)),
      `x=${x} y=${y} z=${z}: the true branches ran`,
    );
    t.equal(trail(inst).filter((s) => s === 'join:2').length, 1, `x=${x} y=${y} z=${z}: the join fired exactly once`);
    t.equal(trail(inst).filter((s) => s === 'after:2').length, 1);
  }
});

t.test('terminate end cancels every other active node and completes', async (t) => {
  const h = await engineHarness(t);
  const pid = await h.publish(`
processId: AUTO
name: Terminate
nodes:
  start: { type: startEvent, next: [wait, stop] }
  wait: { type: inputNode, inputType: textbox, next: done }
  stop: { type: endEvent, terminate: true }
  done: { type: endEvent }
`);
  const inst = await h.start(pid);
  t.equal(inst.stateCd, STATE.COMPLETED);
  t.equal(Object.values(inst.nodes).find((n) => n.nodeId === 'wait')?.statusCd, STATUS.CANCELLED);
  t.ok(h.events.some((e) => e.type === 'NODE_CANCELLED' && e.nodeId === 'wait'));
});

t.test('a flow that loops without waiting fails with STEP_LIMIT_EXCEEDED instead of running forever', async (t) => {
  const h = await engineHarness(t);
  const pid = await h.publish(`
processId: AUTO
name: Spin
nodes:
  start: { type: startEvent, next: again }
  again: { type: ifElse, condition: "\${true}", then: again, else: done }
  done: { type: endEvent }
`);
  const first = await h.engine.start({ processId: pid, organization: 'default' });
  // Deferred steps run it on, a share of the event loop at a time, until the limit fails it.
  await h.waitFor((e) => e.type === 'PROCESS_FAILED' && e.processInstanceId === first.processInstanceId);
  const inst = await h.get(first.processInstanceId);
  t.equal(inst.stateCd, STATE.FAILED);
  t.match(inst.error, { code: 'STEP_LIMIT_EXCEEDED' });
});

t.test('an execution read back from history is what it was live, whichever way it was archived', async (t) => {
  const h = await engineHarness(t);
  const straight = await h.publish(`
processId: AUTO
name: Straight
nodes:
  start: { type: startEvent, next: set }
  set: { type: setVariable, variables: { x: "{a}", y: "{missing}" }, next: out }
  out: { type: outputNode, outputs: { r: "{x}" }, next: done }
  done: { type: endEvent }
`);
  const waits = await h.publish(`
processId: AUTO
name: Waits
nodes:
  start: { type: startEvent, next: ask }
  ask: { type: inputNode, inputType: number, next: done }
  done: { type: endEvent }
`);
  // Snapshot the live state the moment each finishes, before it is archived.
  const live = new Map<string, string>();
  h.engine.on('lifecycle', (e) => {
    if (e.type === 'PROCESS_COMPLETED')
      live.set(e.processInstanceId, JSON.stringify(h.store.state.instances[e.processInstanceId]));
  });
  const one = await h.engine.start({ processId: straight, organization: 'default', data: { a: [1, { b: 2 }] } });
  const two = await h.engine.start({ processId: waits, organization: 'default' });
  await h.engine.submitTask({
    organization: 'default',
    processInstanceId: two.processInstanceId,
    nodeId: 'ask',
    action: 'COMPLETE',
    data: { inputValue: 5 },
  });
  for (const inst of [one, two]) {
    await h.archived(inst.processInstanceId);
    t.notOk(h.store.state.instances[inst.processInstanceId], 'no longer live');
    const archived = await h.engine.getInstance({ organization: null }, inst.processInstanceId);
    t.same(
      JSON.parse(JSON.stringify(archived)),
      JSON.parse(live.get(inst.processInstanceId)!),
      `${inst.processName}: the same from history`,
    );
    t.equal(
      await h.engine.getInstance({ organization: 'other' }, inst.processInstanceId),
      null,
      'invisible to another organization',
    );
  }
  const raw = await (await import('../../../src/daemon/store/history.js')).History.open(`${h.dir}/history`);
  t.ok(
    'records' in ((await raw.get(new Date(h.clock.ms).toISOString().slice(0, 10), one.processInstanceId)) as object),
    'a one-step execution is kept as its journaled records',
  );
  await raw.close();
});

t.test('listing executions: live and archived together, newest first, pages that skip nothing', async (t) => {
  const h = await engineHarness(t);
  const pid = await h.publish(`
processId: AUTO
name: Mixed
nodes:
  start: { type: startEvent, next: gate }
  gate: { type: ifElse, condition: "\${wait}", then: ask, else: done }
  ask: { type: inputNode, inputType: textbox, next: done }
  done: { type: endEvent }
`);
  // Two long-running ones early in the day, then one that finishes (archived) later the same day.
  const early1 = await h.engine.start({ processId: pid, organization: 'default', data: { wait: true } });
  h.advance(3_600_000);
  const early2 = await h.engine.start({ processId: pid, organization: 'default', data: { wait: true } });
  h.advance(8 * 3_600_000);
  const late = await h.engine.start({ processId: pid, organization: 'default', data: { wait: false } });
  await h.archived(late.processInstanceId);
  const seen: string[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < 5; page++) {
    const res = await h.engine.listInstances({ organization: 'default' }, pid, { limit: 1, ...(cursor && { cursor }) });
    seen.push(...res.items.map((i) => i.processInstanceId));
    if (!res.nextCursor) break;
    cursor = res.nextCursor;
  }
  t.same(
    seen,
    [late.processInstanceId, early2.processInstanceId, early1.processInstanceId],
    'one per page, newest first, the archived one included',
  );
  const completed = await h.engine.listInstances({ organization: 'default' }, pid, { limit: 10, stateCd: 1 });
  t.same(
    completed.items.map((i) => i.processInstanceId),
    [late.processInstanceId],
  );
});
