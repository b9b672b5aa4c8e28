import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import t from 'tap';
import { IMAGE_NAME } from '../../../../src/daemon/store/segments/directory-image.js';
import { ImageRefresh } from '../../../../src/daemon/store/segments/image-refresh.js';

// The refresh of directory images while the daemon runs (decision 084): one child process at a
// time, one asked for meanwhile after it, failures logged, none after a stop.

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
  'a refresh that cannot read its segments is logged and writes nothing; one asked for meanwhile follows',
  async (t) => {
    const dir = t.testdir();
    const { lines, logger } = logged();
    let jobs = 0;
    const refresh = new ImageRefresh(
      () => {
        jobs++;
        return { dir, listed: [1], live: 1 }; // no segment 1 there
      },
      () => t.fail('no image is written'),
      logger,
    );
    refresh.request();
    refresh.request(); // while the first runs
    await refresh.idle();
    t.equal(jobs, 2, 'the refresh asked for meanwhile followed the first');
    t.same(
      lines.map((l) => `${l.level} ${l.msg}`),
      ['warn store: the directory image was not refreshed', 'warn store: the directory image was not refreshed'],
      'each failure logged',
    );
    t.match(lines[0]!.o, { err: { message: /ENOENT/ } }, 'with why');
    await t.rejects(stat(join(dir, IMAGE_NAME)), { code: 'ENOENT' }, 'no image');
  },
);

t.test('a stop kills the refresh under way, quietly, and none starts after it', async (t) => {
  const dir = t.testdir();
  const { lines, logger } = logged();
  let jobs = 0;
  const refresh = new ImageRefresh(
    () => {
      jobs++;
      return { dir, listed: [1], live: 1 };
    },
    () => t.fail('no image is written'),
    logger,
  );
  refresh.request();
  await refresh.stop();
  refresh.request();
  await refresh.idle();
  t.equal(jobs, 1, 'no refresh after the stop');
  t.notOk(
    lines.some((l) => 'signal' in l.o),
    'the kill itself is not logged as a failure',
  );
});

t.test('nothing starts when there is nothing worth an image', async (t) => {
  let jobs = 0;
  const refresh = new ImageRefresh(
    () => {
      jobs++;
      return null;
    },
    () => t.fail('no image is written'),
    undefined,
  );
  refresh.request();
  await refresh.idle();
  t.equal(jobs, 1, 'asked once, answered null: no process');
});
