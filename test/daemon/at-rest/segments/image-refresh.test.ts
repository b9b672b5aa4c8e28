import '../../../setup/fixtures.js'; // fixtures under the OS temp dir (see there)
import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import t from 'tap';
import { IMAGE_NAME } from '../../../../src/daemon/at-rest/segments/directory-image.js';
import { ImageRefresh } from '../../../../src/daemon/at-rest/segments/image-refresh.js';

// The refresh of directory images while the daemon runs (decision 084): one child process at a
// time, the last one asked for meanwhile after it, failures logged, none after a stop.

function logged() {
  const lines: Array<{ level: string; msg: string; o: object }> = [];
  return {
    lines,
    logger: {
      info: (o: object, msg: string) => void lines.push({ level: 'info', msg, o }),
      warn: (o: object, msg: string) => void lines.push({ level: 'warn', msg, o }),
      error: (o: object, msg: string) => void lines.push({ level: 'error', msg, o }),
    },
  };
}

t.test(
  'a refresh that cannot read its segments is logged and writes nothing; the last asked for meanwhile follows',
  async (t) => {
    const dir = t.testdir();
    const { lines, logger } = logged();
    const refresh = new ImageRefresh(() => t.fail('no image is written'), logger);
    // No segment 1, 2 or 3 there.
    refresh.request({ dir, listed: [1], live: 1 });
    refresh.request({ dir, listed: [2], live: 1 }); // while the first runs: replaced by the next
    refresh.request({ dir, listed: [3], live: 1 });
    await refresh.idle();
    t.same(
      lines.map((l) => `${l.level} ${l.msg}`),
      ['warn store: the directory image was not refreshed', 'warn store: the directory image was not refreshed'],
      'two refreshes, each failure logged once',
    );
    t.match(lines[0]!.o, { err: { message: /ENOENT.*000001/ } }, 'the first: why');
    t.match(lines[1]!.o, { err: { message: /ENOENT.*000003/ } }, 'then the last asked for');
    await t.rejects(stat(join(dir, IMAGE_NAME)), { code: 'ENOENT' }, 'no image');
  },
);

t.test('a stop kills the refresh under way, quietly, and none starts after it', async (t) => {
  const dir = t.testdir();
  const { lines, logger } = logged();
  const refresh = new ImageRefresh(() => t.fail('no image is written'), logger);
  refresh.request({ dir, listed: [1], live: 1 });
  refresh.request({ dir, listed: [2], live: 1 });
  await refresh.stop();
  refresh.request({ dir, listed: [3], live: 1 });
  await refresh.idle();
  t.notOk(
    lines.some((l) => 'signal' in l.o || /00000[23]/.test(JSON.stringify(l.o))),
    'the kill is not logged as a failure, and nothing ran after it',
  );
});
