import t from 'tap';
import { COVERAGE_VERSIONS_KEPT, CoverageBoard } from '../../../src/daemon/flows/coverage-board.js';
import type { Flow, FlowVersion, WfxState } from '../../../src/daemon/state/state.js';

/** A flow of `versions` versions, each a different end name (hash `h<N>`). */
function flowOf(versions: number): Flow {
  const all: Record<string, FlowVersion> = {};
  for (let v = 1; v <= versions; v++)
    all[String(v)] = {
      version: String(v),
      hash: `h${v}`,
      publishedAt: '2026-01-01T00:00:00.000Z',
      definition: {
        processId: 'p',
        name: 'P',
        nodes: { s: { type: 'startEvent', next: 'e' }, e: { type: 'endEvent', name: `end ${v}` } },
      },
    };
  return { processId: 'p', organization: 'acme', name: 'P', public: false, versions: all, active: {} };
}

const report = (hash: string, covered = [{ node: 's', part: 'node' }]) => ({
  hash,
  file: 'p.yaml',
  cases: { passed: 1, failed: 0 },
  covered,
});

t.test('one coverage per version, the ones measured last, newest first', async (t) => {
  const board = new CoverageBoard({ state: { flows: { p: flowOf(30) } } as unknown as WfxState });
  const at = (s: number) => new Date(Date.UTC(2026, 0, 1, 0, 0, s));
  for (let v = 1; v <= 30; v++) board.save('acme', 'p', report(`h${v}`), at(v));
  const kept = board.list('acme', 'p');
  t.equal(kept.length, COVERAGE_VERSIONS_KEPT);
  t.same(
    kept.slice(0, 2).map((c) => c.version),
    ['30', '29'],
  );
  t.equal(kept.at(-1)!.version, String(30 - COVERAGE_VERSIONS_KEPT + 1), 'the oldest measured went first');

  // Sent again: replaces that version's, and counts as the newest.
  board.save('acme', 'p', report('h15', [{ node: 'e', part: 'node' }, { node: 'e', part: 'node' }]), at(99));
  const again = board.list('acme', 'p');
  t.equal(again.length, COVERAGE_VERSIONS_KEPT);
  t.same(again[0], {
    processId: 'p',
    version: '15',
    file: 'p.yaml',
    measuredAt: at(99).toISOString(),
    cases: { passed: 1, failed: 0 },
    covered: [{ node: 'e', part: 'node' }],
  }, 'a part given twice is kept once');
  t.same(board.list('acme', 'p', '15').length, 1);
  t.same(board.list(null, 'p', '1'), [], 'a version whose coverage was let go');
  t.throws(() => board.list('globex', 'p'), { code: 'PROCESS_NOT_FOUND' });
});
