import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { startDaemon } from '../../../src/daemon/process/daemon.js';
import { prepareDataDir } from '../../../src/daemon/process/prepare.js';
import { lockOwnerPid } from '../../../src/daemon/store/lock.js';

const FLOW = `processId: 5a1e0c4d-7b2f-4e8a-9c3d-1f2e3d4c5b6a
name: Prepared
nodes:
  start: { type: startEvent, next: end }
  end: { type: endEvent }
`;

async function dataDir(t: Test): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'wfx-prepare-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  return join(dir, 'data');
}

t.test(
  'a prepared data directory is created 0700 with its logs, locked, and its snapshot read (null: none yet)',
  async (t) => {
    const dir = await dataDir(t);
    const prepared = await prepareDataDir(dir);
    t.equal((await stat(dir)).mode & 0o777, 0o700);
    t.equal((await stat(join(dir, 'logs'))).mode & 0o777, 0o700);
    t.equal(await prepared.snapshotBytes, null);
    t.equal(await lockOwnerPid(dir), process.pid);
    await t.rejects(
      prepareDataDir(dir),
      { code: 'DATA_DIR_LOCKED' },
      'a second daemon is refused before it reads anything',
    );
    await prepared.lock.release();

    await writeFile(join(dir, 'snapshot.json'), '{"format":1}');
    const again = await prepareDataDir(dir);
    t.same(await again.snapshotBytes, Buffer.from('{"format":1}'));
    await again.lock.release();
  },
);

t.test('a path that cannot be a data directory is DATA_DIR_INVALID, and nothing is locked', async (t) => {
  const dir = await dataDir(t);
  await writeFile(dir, 'a file');
  await t.rejects(prepareDataDir(dir), { code: 'DATA_DIR_INVALID' });
});

t.test(
  'a daemon started on a prepared directory recovers what the last one committed, then owns and releases the lock',
  async (t) => {
    const dir = await dataDir(t);
    const first = await startDaemon({ dataDir: dir, port: 0 });
    const key = (await readFile(join(dir, 'bootstrap.key'), 'utf8')).trim();
    const published = await fetch(`${first.info.url}/admin/flows`, {
      method: 'POST',
      headers: { 'x-api-key': key, 'content-type': 'application/json' },
      body: JSON.stringify({ source: FLOW }),
    });
    t.ok(published.ok, await published.text());
    await first.stop(); // its last checkpoint: the flow is in the snapshot, the journal empty

    const prepared = await prepareDataDir(dir);
    t.ok(
      (await prepared.snapshotBytes)?.includes('5a1e0c4d-7b2f-4e8a-9c3d-1f2e3d4c5b6a'),
      'the snapshot read holds the flow',
    );
    const second = await startDaemon({ dataDir: dir, port: 0 }, prepared);
    const flows = await fetch(`${second.info.url}/admin/flows`, { headers: { 'x-api-key': key } });
    t.match(await flows.text(), '5a1e0c4d-7b2f-4e8a-9c3d-1f2e3d4c5b6a');
    t.equal(await lockOwnerPid(dir), process.pid);
    await second.stop();
    t.equal(await lockOwnerPid(dir), null, 'stop released the prepared lock');
  },
);

t.test('a daemon given another directory prepared refuses to start and lets that lock go', async (t) => {
  const dir = await dataDir(t);
  const other = await dataDir(t);
  const prepared = await prepareDataDir(other);
  await t.rejects(startDaemon({ dataDir: dir, port: 0 }, prepared), /is not the daemon's/);
  t.equal(await lockOwnerPid(other), null);
});
