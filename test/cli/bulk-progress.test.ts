import t from 'tap';
import { finishedText, progressBar, ProgressView } from '../../src/cli/bulk-progress.js';
import { CLEAR_LINE } from '../../src/cli/spinner.js';
import type { BulkView } from '../../src/shared/api/index.js';

const view = (over: Partial<BulkView> = {}): BulkView => ({
  bulkId: 'b1',
  operation: 'cancel',
  params: null,
  query: {},
  organization: 'default',
  state: 'RUNNING',
  total: 10_000,
  selected: true,
  done: 2_490,
  skipped: 10,
  pending: 7_500,
  createdAt: '2026-11-26T09:00:00.000Z',
  startedBefore: '2026-11-26T09:00:00.000Z',
  finishedAt: null,
  by: 'key:k1',
  cancelledBy: null,
  error: null,
  etaSeconds: 15,
  ...over,
});

t.test('a progress bar: filled as far as reached, the counts, the ETA, cut to the width', async (t) => {
  t.equal(progressBar(view(), 120), '[######..................] 2,500/10,000 (25%): 2,490 done, 10 skipped, ETA 15s');
  t.equal(progressBar(view(), 30).length, 29, 'never wider than the terminal');
  t.match(progressBar(view({ total: 0, done: 0, skipped: 0, pending: 0 }), 80), /^\[#{24}\] 0\/0 \(100%\)/);
});

t.test('the closing line says how it ended and where the skipped ones are', async (t) => {
  t.equal(
    finishedText(view({ state: 'COMPLETED', done: 9_990, skipped: 10, pending: 0 })),
    'bulk cancel b1 completed: 9,990 done, 10 skipped (why each was skipped: wfx instances bulk show b1 --outcome skipped)',
  );
  t.equal(
    finishedText(view({ state: 'CANCELLED', skipped: 0 })),
    'bulk cancel b1 cancelled: 2,490 done, 0 skipped, 7,500 not reached',
  );
});

t.test('without a terminal: a line when it changed, at most one a second, and always the last', async (t) => {
  let out = '';
  let now = 0;
  const sink = { write: (s: string) => ((out += s), true) } as unknown as NodeJS.WritableStream;
  const v = new ProgressView(sink, false, () => now);
  v.show(view());
  v.show(view({ done: 2_600 }));
  now = 1500;
  v.show(view({ done: 2_700 }));
  v.show(view({ state: 'COMPLETED', done: 9_990, pending: 0 }));
  t.same(out.trim().split('\n'), [
    '2,500/10,000 (25%): 2,490 done, 10 skipped',
    '2,710/10,000 (27%): 2,700 done, 10 skipped',
    '10,000/10,000 (100%): 9,990 done, 10 skipped',
  ]);
  let bar = '';
  const tty = {
    write: (s: string) => ((bar += s), true),
    isTTY: true,
    columns: 100,
  } as unknown as NodeJS.WritableStream;
  const drawn = new ProgressView(tty, true);
  drawn.show(view());
  drawn.end();
  t.ok(bar.startsWith(CLEAR_LINE) && bar.endsWith('\n'), 'a bar drawn in place, its line ended');
});
