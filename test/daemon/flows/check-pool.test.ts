import t, { type Test } from 'tap';
import { createFlowCheckPool, TurnLines } from '../../../src/daemon/flows/check-pool.js';
import type { CheckedFlow, FlowChecker } from '../../../src/daemon/flows/check.js';
import { flowHash } from '../../../src/daemon/flows/flow-hash.js';
import { chainFlow, nestedFlow, yamlOf } from '../../fixtures/big-flows.js';
import { codeOf } from '../../helpers/error-code.js';

function pool(t: Test, options?: Parameters<typeof createFlowCheckPool>[0]): FlowChecker {
  const p = createFlowCheckPool(options);
  t.teardown(() => p.close());
  return p;
}

t.test('checks a source or a definition in its worker: the flow and its hash, or the problems', async (t) => {
  const checker = pool(t);
  const value = chainFlow(3);
  const ok = await checker.check('acme', { source: yamlOf(value) });
  t.same(ok, { ok: true, flow: value, hash: flowHash(value as never) });
  const same = await checker.check('acme', { definition: value });
  t.same(same, ok, 'a definition gives the same');
  const bad = (await checker.check('acme', { source: yamlOf(nestedFlow(80)) })) as Extract<CheckedFlow, { ok: false }>;
  t.match(bad, { ok: false, problems: [{ code: 'TOO_DEEP', line: Number }] });
  const located = await checker.locate('acme', yamlOf(value), [
    { code: 'UNKNOWN_TOOL', nodeId: 't1', property: 'next', message: 'x' },
  ]);
  t.match(located, [{ code: 'UNKNOWN_TOOL', line: 15, column: 12 }]);
});

t.test('lines take turns: one organization with many waiting does not hold back another', async (t) => {
  const lines = new TurnLines<string>(3);
  for (const item of ['a1', 'a2', 'a3']) t.ok(lines.push('a', item));
  t.notOk(lines.push('a', 'a4'), 'a full line takes no more');
  t.ok(lines.push('b', 'b1'));
  t.ok(lines.push('c', 'c1'));
  t.equal(lines.waiting('a'), 3);
  const none = new Set<string>();
  t.equal(lines.take(none), 'a1');
  t.equal(lines.take(new Set(['b'])), 'c1', 'an organization with a check running is passed over');
  t.equal(lines.take(none), 'b1', 'a went to the back of the line');
  t.equal(lines.take(none), 'a2');
  t.same(lines.drain(), ['a3']);
  t.equal(lines.take(none), undefined);
});

t.test('one worker: checks of two organizations alternate', async (t) => {
  const checker = pool(t, { workers: 1 });
  const done: string[] = [];
  const check = (org: string, n: number) =>
    checker.check(org, { definition: chainFlow(n) }).then((r) => {
      t.ok(r.ok);
      done.push(`${org}${n}`);
    });
  await Promise.all([...[1, 2, 3, 4, 5].map((n) => check('a', n)), check('b', 1)]);
  t.same(done, ['a1', 'a2', 'b1', 'a3', 'a4', 'a5'], "b's check runs after a's second, not after its fifth");
});

t.test("each organization's line is bounded: past it RATE_LIMIT_EXCEEDED, others still accepted", async (t) => {
  const checker = pool(t, { maxQueuedPerOrganization: 2 });
  const first = checker.check('a', { definition: chainFlow(1) }); // runs: not waiting
  const waiting = [checker.check('a', { definition: chainFlow(2) }), checker.check('a', { definition: chainFlow(3) })];
  t.equal(await codeOf(checker.check('a', { definition: chainFlow(4) })), 'RATE_LIMIT_EXCEEDED');
  const other = checker.check('b', { definition: chainFlow(1) });
  t.match(await Promise.all([first, ...waiting, other]), [{ ok: true }, { ok: true }, { ok: true }, { ok: true }]);
  t.match(await checker.check('a', { definition: chainFlow(5) }), { ok: true }, 'the line empties as checks finish');
});

t.test('close refuses the check running, those waiting and any after it', async (t) => {
  const checker = createFlowCheckPool();
  const running = codeOf(checker.check('a', { definition: chainFlow(1) }));
  const waiting = codeOf(checker.check('a', { definition: chainFlow(2) }));
  await checker.close();
  t.equal(await running, 'SERVICE_UNAVAILABLE');
  t.equal(await waiting, 'SERVICE_UNAVAILABLE');
  t.equal(await codeOf(checker.check('a', { definition: chainFlow(1) })), 'SERVICE_UNAVAILABLE');
});

t.test('a definition that cannot be passed to the worker fails alone', async (t) => {
  const checker = pool(t);
  t.equal(await codeOf(checker.check('a', { definition: { f: () => 1 } })), 'INTERNAL_ERROR');
  t.match(await checker.check('a', { definition: chainFlow(1) }), { ok: true }, 'the next check runs');
});
