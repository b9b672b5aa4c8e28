import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { startDaemon } from '../../src/daemon/daemon.js';

t.test('an in-process daemon has its whole log on disk as soon as stop resolves (the log buffers its lines)', async (t) => {
  const dataDir = await mkdtemp(join(tmpdir(), 'wfx-daemon-'));
  t.teardown(() => rm(dataDir, { recursive: true, force: true }));
  const daemon = await startDaemon({ dataDir, port: 0 });
  await daemon.stop();
  const log = await readFile(join(dataDir, 'logs', 'daemon.log'), 'utf8');
  t.match(log, /"msg":"wfx daemon listening"[\s\S]*"msg":"stopped"/, 'the last line is there, no timer waited for');
});
