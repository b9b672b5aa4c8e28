import t from 'tap';
import { ScriptLanes } from '../../../src/daemon/engine/work/script-lanes.js';

const key = (organization: string, execution = 'e') => ({ organization, execution });

/** Takes every queued run, returning each to its lane before the next take (one worker). */
function serveOneAtATime(lanes: ScriptLanes<string>): string[] {
  const order: string[] = [];
  for (let next = lanes.take(); next; next = lanes.take()) {
    order.push(next.item);
    lanes.finished(next.organization);
  }
  return order;
}

t.test('a free worker goes to the organization holding the fewest, whatever the order of arrival', async (t) => {
  const lanes = new ScriptLanes<string>();
  for (const item of ['a1', 'a2', 'a3', 'a4']) lanes.push(item, key('A'));
  t.equal(lanes.nextHolds(), 0);
  t.equal(lanes.take()?.item, 'a1');
  t.equal(lanes.take()?.item, 'a2');
  t.equal(lanes.nextHolds(), 2, 'A alone: it may hold every worker');
  lanes.push('b1', key('B'));
  lanes.push('b2', key('B'));
  t.equal(lanes.nextHolds(), 0, 'B, queued after A, is served first: it holds none');
  t.same(lanes.take(), { item: 'b1', organization: 'B' });
  t.equal(lanes.nextHolds(), 1, 'B holds one, A two: B again');
  t.equal(lanes.take()?.item, 'b2');
  t.equal(lanes.nextHolds(), 2);
  t.equal(lanes.take()?.item, 'a3');
  t.same([lanes.running('A'), lanes.running('B'), lanes.queued], [3, 2, 1]);
});

t.test('organizations holding as many take turns; within one, executions take turns', async (t) => {
  const lanes = new ScriptLanes<string>();
  for (const item of ['a1', 'a2', 'a3']) lanes.push(item, key('A'));
  for (const item of ['b1', 'b2']) lanes.push(item, key('B'));
  lanes.push('c1', key('C'));
  t.same(serveOneAtATime(lanes), ['a1', 'b1', 'c1', 'a2', 'b2', 'a3']);

  // One execution's parallel loop queues many; another execution of the same organization is not behind them all.
  for (const item of ['x1', 'x2', 'x3', 'x4']) lanes.push(item, key('A', 'x'));
  lanes.push('y1', key('A', 'y'));
  lanes.push('y2', key('A', 'y'));
  t.same(serveOneAtATime(lanes), ['x1', 'y1', 'x2', 'y2', 'x3', 'x4']);
  t.equal(lanes.queued, 0);
});

t.test('remove and drain take queued runs out; a lane is dropped once empty and idle', async (t) => {
  const lanes = new ScriptLanes<string>();
  lanes.push('a1', key('A'));
  lanes.push('a2', key('A'));
  lanes.push('b1', key('B'));
  t.equal(lanes.remove('a2', key('A')), true);
  t.equal(lanes.remove('a2', key('A')), false, 'not queued any more');
  t.equal(lanes.remove('b1', key('A')), false, 'not in that lane');
  t.equal(lanes.take()?.item, 'a1');
  t.same(lanes.drain(), ['b1']);
  t.equal(lanes.queued, 0);
  t.equal(lanes.nextHolds(), undefined);
  t.equal(lanes.running('A'), 1, 'a run on a worker is counted until it finishes');
  lanes.finished('A');
  lanes.finished('A'); // twice changes nothing
  t.equal(lanes.running('A'), 0);
  t.equal(lanes.take(), undefined);
});

t.test('within an organization, an execution of a higher priority is served first; equals take turns', async (t) => {
  const lanes = new ScriptLanes<string>();
  for (const item of ['bulk1', 'bulk2']) lanes.push(item, key('A', 'bulk'));
  for (const item of ['other1', 'other2']) lanes.push(item, key('A', 'other'));
  lanes.push('urgent1', { organization: 'A', execution: 'urgent', priority: 5 });
  lanes.push('urgent2', { organization: 'A', execution: 'urgent', priority: 5 });
  lanes.push('low1', { organization: 'A', execution: 'low', priority: -1 });
  t.same(serveOneAtATime(lanes), ['urgent1', 'urgent2', 'bulk1', 'other1', 'bulk2', 'other2', 'low1']);
  t.equal(lanes.queued, 0);
});
