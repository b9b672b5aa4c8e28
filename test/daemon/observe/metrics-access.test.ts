import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { startDaemon } from '../../../src/daemon/process/daemon.js';
import { codeOf } from '../../helpers/error-code.js';

t.test('--metrics-open on a non-loopback host: the daemon refuses to start, before it listens', async (t) => {
  const dataDir = await mkdtemp(join(tmpdir(), 'wfx-metrics-'));
  t.teardown(() => rm(dataDir, { recursive: true, force: true }));
  // Reaching the listen would be the bug: fail there, never bind a non-loopback address.
  const beforeListen = () => Promise.reject(new Error('reached listen'));
  for (const host of ['0.0.0.0', '::', '192.0.2.10'])
    t.equal(
      await codeOf(startDaemon({ dataDir, host, port: 0, metricsOpen: true, beforeListen })),
      'USAGE_ERROR',
      host,
    );
  await t.rejects(
    startDaemon({ dataDir, host: '0.0.0.0', port: 0, beforeListen }),
    { message: 'reached listen' },
    'the same host without --metrics-open gets as far as the listen',
  );
});

t.test('--metrics-open on loopback: GET /metrics answers without a credential', async (t) => {
  const dataDir = await mkdtemp(join(tmpdir(), 'wfx-metrics-'));
  t.teardown(() => rm(dataDir, { recursive: true, force: true }));
  const daemon = await startDaemon({ dataDir, port: 0, metricsOpen: true });
  t.teardown(() => daemon.stop());
  const res = await fetch(`${daemon.info.url}/metrics`);
  t.equal(res.status, 200);
  t.match(await res.text(), /# TYPE wfx_executions_started_total counter/);
});

t.test('--metrics-token-file: a short or missing file refuses the start with USAGE_ERROR', async (t) => {
  const dataDir = await mkdtemp(join(tmpdir(), 'wfx-metrics-'));
  t.teardown(() => rm(dataDir, { recursive: true, force: true }));
  const short = join(dataDir, 'short.token');
  await writeFile(short, '  0123456789abcde \n');
  for (const metricsTokenFile of [short, join(dataDir, 'missing.token')])
    t.equal(await codeOf(startDaemon({ dataDir, port: 0, metricsTokenFile })), 'USAGE_ERROR', metricsTokenFile);
});
