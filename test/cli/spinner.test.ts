import t from 'tap';
import { Writable } from 'node:stream';
import { CLEAR_LINE, elapsed, Spinner, spinnerFrame } from '../../src/cli/spinner.js';
import type { CliContext } from '../../src/cli/context.js';

t.test('elapsed: seconds, then minutes and seconds, then hours and minutes', async (t) => {
  t.same([0, 999, 4_200, 59_999, 65_000, 3_599_000, 7_380_000].map(elapsed), [
    '0s',
    '0s',
    '4s',
    '59s',
    '1m 05s',
    '59m 59s',
    '2h 03m',
  ]);
});

t.test('a frame: spinner, label, elapsed time; cut to the width; cyan only when asked', async (t) => {
  t.equal(spinnerFrame(0, 'running abc', 3_000, 80, false), '⠋ running abc 3s');
  t.equal(spinnerFrame(1, 'running abc', 3_000, 80, false), '⠙ running abc 3s', 'the next frame turns');
  t.equal(spinnerFrame(10, 'running abc', 0, 80, false), '⠋ running abc 0s', 'and comes round');
  const narrow = spinnerFrame(0, 'running 01a20ffc-c987-782c-82fc-b39665c62d97', 65_000, 30, false);
  t.ok(narrow.length <= 29, `never wider than the terminal less one (${narrow.length})`);
  t.match(narrow, /^⠋ running 01a20f.*… 1m 05s$/);
  t.equal(spinnerFrame(0, 'x', 0, 80, true), '\u001b[36m⠋\u001b[0m x 0s');
});

t.test('a spinner draws over its line, is cleared before other output and at its stop', async (t) => {
  let written = '';
  const out = Object.assign(
    new Writable({
      write(chunk: Buffer, _e, done) {
        written += chunk.toString();
        done();
      },
    }),
    { isTTY: true, columns: 80 },
  );
  let now = 1_000;
  const spinner = new Spinner(out, 'running x', false, () => now).start();
  now += 2_500;
  spinner.draw();
  spinner.clear();
  spinner.clear();
  spinner.stop();
  t.equal(written, `${CLEAR_LINE}⠋ running x 0s${CLEAR_LINE}⠙ running x 2s${CLEAR_LINE}`, 'cleared once, not again');
});

t.test('a spinner only on a terminal, without --json, outside CI, not on TERM=dumb', async (t) => {
  const ctx = (isTTY: boolean, env: NodeJS.ProcessEnv) => ({ stderr: { isTTY }, env }) as unknown as CliContext;
  t.ok(Spinner.allowed(ctx(true, {}), false));
  t.ok(Spinner.allowed(ctx(true, { CI: 'false' }), false), 'CI=false is no CI');
  t.notOk(Spinner.allowed(ctx(false, {}), false), 'a pipe');
  t.notOk(Spinner.allowed(ctx(true, {}), true), '--json');
  t.notOk(Spinner.allowed(ctx(true, { CI: 'true' }), false), 'CI');
  t.notOk(Spinner.allowed(ctx(true, { CONTINUOUS_INTEGRATION: '1' }), false), 'CI by its other name');
  t.notOk(Spinner.allowed(ctx(true, { TERM: 'dumb' }), false), 'a dumb terminal');
});
