import '../setup/fixtures.js'; // fixtures under the OS temp dir (see there)
import { readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import t from 'tap';
import { askThenPay, type ExecutionView } from '../helpers/ask-then-pay.js';
import { callDaemon, killIfAlive, startDaemon, wfxIn } from '../helpers/cli.js';
import { eventually } from '../helpers/eventually.js';

// The directory image (decision 076): a daemon that stops leaves it, and one that opened from
// the segments' indexes writes it; the next one restores its directory from it and loads only
// the later segments' indexes on top, also after a kill -9; a damaged image is not used. Each daemon must answer alike:
// executions, input tasks, message routing by correlation key, and the answers acknowledged.
// Few checkpoints, so that no compaction rewrites the segment the image covers (that makes an
// image out of date: bulk-load.test.ts).

const FLOW_ID = '3b2c1d0e-5f6a-4b7c-8d9e-0f1a2b3c4d5e';
const FLOW = askThenPay(FLOW_ID);

const STARTED = 60;
/**
 * Every daemon here writes an image for any directory. The default cache: one that evicts asks
 * for checkpoints, whose segments could start a compaction that outdates the image.
 */
const ENV = { WFX_TEST_DIRECTORY_IMAGE_MIN: '1' };

/** Whether process `pid` is still there. */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

interface LogLine {
  readonly time: number;
  readonly msg: string;
  readonly image?: string;
  readonly covered?: number;
  readonly loaded?: number;
}

t.test('restarts from the directory image answer as restarts from the indexes, after a kill -9 too', async (t) => {
  const dataDir = join(t.testdir(), 'data');
  let seen = 0;
  const start = async (env: Record<string, string> = {}) => {
    seen = (await opens().catch(() => [])).length;
    return startDaemon(t, { dataDir, env: { ...ENV, ...env } });
  };
  const opens = async (): Promise<LogLine[]> =>
    (await readFile(join(dataDir, 'logs', 'daemon.log'), 'utf8'))
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as LogLine)
      .filter((l) => l.msg === 'store: execution directory opened');
  /** The open of the daemon started last (each start on segments logs one). */
  const nextOpen = async (): Promise<LogLine | undefined> => {
    let all: LogLine[] = [];
    await eventually('the open is logged', async () => (all = await opens()).length > seen);
    return all.at(-1);
  };

  const first = await start();
  const key = (await readFile(join(dataDir, 'bootstrap.key'), 'utf8')).trim();
  const call = (url: string, method: string, path: string, body?: object) => callDaemon(url, key, method, path, body);
  const answer = (url: string, i: number) =>
    call(url, 'POST', '/process/task', {
      processInstanceId: ids[i]!,
      nodeId: 'ask',
      action: 'COMPLETE',
      data: { inputValue: `a-${i}` },
    });
  t.ok(
    (await call(first.url, 'POST', '/admin/flows', { source: FLOW, organization: 'default' })).status < 300,
    'published',
  );
  const ids: string[] = [];
  for (let i = 0; i < STARTED; i++) {
    const res = await call(first.url, 'POST', '/process/start', { processId: FLOW_ID, correlationKey: `o-${i}` });
    ids.push(res.body.processInstanceId as string);
  }
  await wfxIn(['daemon', 'stop', '--data-dir', dataDir]); // its checkpoint writes them to a segment
  const image = join(dataDir, 'executions', 'directory.image');
  t.ok(await readFile(image), 'the stop left an image');

  // Opened from the indexes (a directory of a version before the image): it writes the image.
  await rm(image);
  const second = await start();
  t.match(await nextOpen(), { image: 'none', covered: 0 }, 'no image at the second start');
  await eventually('the image written', async () =>
    readFile(image).then(
      () => true,
      () => false,
    ),
  );
  // A third of them answered (acknowledged), then a kill -9 without a checkpoint after some.
  const answered = new Set<number>();
  for (let i = 0; i < STARTED; i += 3) if ((await answer(second.url, i)).status === 200) answered.add(i);
  t.equal(answered.size, STARTED / 3, 'answered a third');
  process.kill(second.pid, 'SIGKILL');

  // The image covers the segments the second daemon opened; the journal holds the answers.
  const third = await start({ WFX_TEST_CRASH_POINT: 'image:closing' });
  t.match(await nextOpen(), { image: 'used' }, 'the third start restored the directory from the image');
  const check = async (url: string, what: string) => {
    const lost: number[] = [];
    for (const [i, id] of ids.entries()) {
      const view = (await call(url, 'GET', `/process/instance/${id}`)).body as unknown as ExecutionView;
      const ask = view.nodes.find((n) => n.nodeId === 'ask');
      if (answered.has(i) !== (ask?.statusCd === 2) || (answered.has(i) && view.data.inputValue !== `a-${i}`))
        lost.push(i);
    }
    t.same(lost, [], `${what}: every execution as acknowledged`);
    const tasks = (await call(url, 'GET', `/process/tasks?processId=${FLOW_ID}&limit=100`)).body as {
      items: unknown[];
    };
    t.equal(tasks.items.length, STARTED - answered.size, `${what}: the input tasks that wait`);
  };
  await check(third.url, 'from the image');
  // More answers, then a stop killed in the middle of the image it leaves: its checkpoint wrote
  // a later segment, the image is written under its temporary name, not renamed.
  for (let i = 1; i < STARTED; i += 3) if ((await answer(third.url, i)).status === 200) answered.add(i);
  t.teardown(() => killIfAlive(third.pid)); // were it left at the crash point
  process.kill(third.pid, 'SIGTERM');
  await eventually('the stop is at its image', async () =>
    (await readFile(join(dataDir, 'logs', 'daemon.out'), 'utf8').catch(() => '')).includes(
      'crash-point image:closing\n',
    ),
  );
  const leftover = join(dataDir, 'executions', 'directory.image.tmp');
  t.ok(await readFile(leftover), 'the image written under its temporary name');
  process.kill(third.pid, 'SIGKILL');
  await eventually('the stopping daemon is gone', () => !alive(third.pid));

  // The next start removes what the kill left, uses the older image and loads the later segment on top.
  const fourth = await start();
  await t.rejects(readFile(leftover), { code: 'ENOENT' }, 'the temporary file of a write cut short is gone');
  const afterKill = await nextOpen();
  t.match(afterKill, { image: 'used' }, 'the older image');
  t.ok((afterKill?.loaded ?? 0) >= 1, 'the segment the killed stop wrote loaded on top');
  await check(fourth.url, 'after a kill in the stop');
  await wfxIn(['daemon', 'stop', '--data-dir', dataDir]);
  const fifth = await start();
  t.match(await nextOpen(), { image: 'used', loaded: 0 }, 'the image the stop left, of every segment');
  await check(fifth.url, 'the image of a stop');
  await wfxIn(['daemon', 'stop', '--data-dir', dataDir]);

  // A damaged image is not used: the indexes answer alike.
  const bytes = await readFile(image);
  bytes[bytes.length - 100] = bytes[bytes.length - 100]! ^ 0xff;
  await writeFile(image, bytes);
  const sixth = await start();
  t.match(await nextOpen(), { image: /^damaged/, covered: 0 }, 'the damaged image not used');
  await check(sixth.url, 'from the indexes');
  // Messages reach cold executions by their keys: every answered one is paid and ends.
  for (const i of answered) {
    const res = await call(sixth.url, 'POST', '/process/event', {
      eventType: 'paid',
      correlationKey: `o-${i}`,
      data: {},
    });
    t.equal(res.status, 200, `paid o-${i}`);
  }
  let completed = 0;
  for (const i of answered) {
    const view = (await call(sixth.url, 'GET', `/process/instance/${ids[i]!}`)).body as unknown as ExecutionView;
    if (view.stateCd === 1) completed++;
  }
  t.equal(completed, answered.size, 'each paid execution ran to its end');
});

t.test(
  'the image a compaction leaves to refresh: a kill -9 in its write loses nothing, a start after a kill -9 uses it',
  async (t) => {
    const dataDir = join(t.testdir(), 'data');
    const lines = async (): Promise<LogLine[]> =>
      (await readFile(join(dataDir, 'logs', 'daemon.log'), 'utf8').catch(() => ''))
        .split('\n')
        .filter((l) => l.startsWith('{'))
        .map((l) => JSON.parse(l) as LogLine);
    const since = async (mark: number, msg: string) => (await lines()).filter((l) => l.time >= mark && l.msg === msg);
    // Cache 0: at rest every execution leaves memory and asks for a checkpoint.
    const start = (env: Record<string, string> = {}) =>
      startDaemon(t, { dataDir, args: ['--execution-cache', '0'], env: { ...ENV, ...env } });
    /** Kills daemon `pid` with its process group: an image process it started too. */
    const killAll = (pid: number) => {
      try {
        process.kill(-pid, 'SIGKILL');
      } catch {
        // gone already
      }
    };

    const first = await start({ WFX_TEST_CRASH_POINT: 'image:refreshed' });
    t.teardown(() => killAll(first.pid));
    const key = (await readFile(join(dataDir, 'bootstrap.key'), 'utf8')).trim();
    const call = (url: string, method: string, path: string, body?: object) => callDaemon(url, key, method, path, body);
    t.ok(
      (await call(first.url, 'POST', '/admin/flows', { source: FLOW, organization: 'default' })).status < 300,
      'published',
    );
    const ids: string[] = [];
    for (let i = 0; i < 40; i++) {
      const res = await call(first.url, 'POST', '/process/start', { processId: FLOW_ID, correlationKey: `r-${i}` });
      ids.push(res.body.processInstanceId as string);
    }
    const finished = new Set<number>();
    /** Answers and pays executions `from` to `to` (they end), through the daemon at `url`. */
    const finish = async (url: string, from: number, to: number) => {
      for (let i = from; i < to; i++) {
        const answered = await call(url, 'POST', '/process/task', {
          processInstanceId: ids[i]!,
          nodeId: 'ask',
          action: 'COMPLETE',
          data: { inputValue: `a-${i}` },
        });
        const paid = await call(url, 'POST', '/process/event', {
          eventType: 'paid',
          correlationKey: `r-${i}`,
          data: {},
        });
        if (answered.status === 200 && paid.status === 200) finished.add(i);
      }
    };
    // Three quarters end: the checkpoints that write their removals compact by dead share.
    await finish(first.url, 0, 30);
    t.equal(finished.size, 30, 'three quarters answered and paid');
    await eventually('a refresh stopped at its crash point', async () =>
      (await readFile(join(dataDir, 'logs', 'daemon.out'), 'utf8').catch(() => '')).includes(
        'crash-point image:refreshed\n',
      ),
    );
    const leftover = join(dataDir, 'executions', 'directory.image.refresh.tmp');
    t.ok(await readFile(leftover), 'the image written under the temporary name of its own');
    await finish(first.url, 30, 32);
    t.equal(finished.size, 32, 'the daemon serves on while its refresh is stuck');
    killAll(first.pid);
    await eventually('the first daemon is gone', () => !alive(first.pid));

    const check = async (url: string, what: string) => {
      const wrong: number[] = [];
      for (const [i, id] of ids.entries()) {
        const view = (await call(url, 'GET', `/process/instance/${id}`)).body as unknown as ExecutionView;
        const ask = view.nodes.find((n) => n.nodeId === 'ask');
        if (finished.has(i) ? view.stateCd !== 1 : view.stateCd !== 0 || ask?.statusCd === 2) wrong.push(i);
      }
      t.same(wrong, [], `${what}: every execution as acknowledged`);
    };
    const secondAt = Date.now();
    const second = await start();
    t.teardown(() => killAll(second.pid));
    await t.rejects(readFile(leftover), { code: 'ENOENT' }, 'the next start removed what the kill left');
    await check(second.url, 'after a kill in the refresh');
    // Most of the rest end too: this daemon compacts, and its refresh writes the image.
    await finish(second.url, 32, 38);
    await eventually(
      'an image refreshed',
      async () => (await since(secondAt, 'store: directory image refreshed')).length > 0,
    );
    killAll(second.pid);
    await eventually('the second daemon is gone', () => !alive(second.pid));
    const thirdAt = Date.now();
    const third = await start();
    let open: LogLine | undefined;
    await eventually('the third open is logged', async () => {
      open = (await since(thirdAt, 'store: execution directory opened'))[0];
      return open !== undefined;
    });
    t.match(open, { image: 'used' }, 'the start after the kill restores the refreshed image');
    await check(third.url, 'from the refreshed image');
  },
);
