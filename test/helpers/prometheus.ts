/**
 * A real Prometheus (Debian's `prometheus` package) for end-to-end tests of GET /metrics: started
 * on a free loopback port with a throwaway config and data dir in the test's fixture, scraping
 * one target every second; noted for the sweep after the suite (test/setup/daemons.ts) and
 * killed before the fixture is removed.
 */
import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { writeFile } from 'node:fs/promises';
import { createServer, type AddressInfo } from 'node:net';
import { join } from 'node:path';
import { forgetDaemon, noteDaemon } from '../setup/daemons.js';
import { beforeFixtureRemoval, killIfAlive } from './cli.js';
import { eventually } from './eventually.js';

/** Whether Prometheus is installed here; under CI=true its absence fails the test instead. */
export const HAVE_PROMETHEUS = spawnSync('prometheus', ['--version']).status === 0;

/**
 * A test's `skip` option: a message on a machine without Prometheus, never under CI=true (there
 * the missing binary fails the test: .ci/run installs it).
 */
export const PROMETHEUS_SKIP: string | false =
  !HAVE_PROMETHEUS && process.env.CI !== 'true' && 'Prometheus is not installed (apt-get install prometheus)';

/** One sample of an instant vector: its labels and its value. */
export interface PromSample {
  readonly metric: Record<string, string>;
  readonly value: number;
}

/** A running Prometheus: its URL and an instant query through its HTTP API. */
export interface TestPrometheus {
  readonly url: string;
  /** `GET /api/v1/query?query=<promql>`: the samples of the instant vector it answers. */
  query(promql: string): Promise<PromSample[]>;
}

/** A port free on 127.0.0.1 now: bound on port 0, then released for Prometheus to take. */
async function freePort(): Promise<number> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/**
 * Starts Prometheus in `dir` (config and TSDB there) scraping `target` (`host:port`) every second
 * as job `wfx`, sending the file `credentialsFile` as a bearer token when given; resolves once
 * its API answers ready. Killed at teardown, before the fixture holding its data goes.
 */
export async function startPrometheus(
  t: { teardown(fn: () => unknown): void },
  dir: string,
  target: string,
  credentialsFile?: string,
): Promise<TestPrometheus> {
  const config = join(dir, 'prometheus.yml');
  await writeFile(
    config,
    [
      'global: { scrape_interval: 1s, scrape_timeout: 1s, evaluation_interval: 1s }',
      'scrape_configs:',
      '  - job_name: wfx',
      ...(credentialsFile ? [`    authorization: { type: Bearer, credentials_file: '${credentialsFile}' }`] : []),
      `    static_configs: [{ targets: ['${target}'] }]`,
      '',
    ].join('\n'),
  );
  const port = await freePort();
  const child = spawn(
    'prometheus',
    [
      `--config.file=${config}`,
      `--storage.tsdb.path=${join(dir, 'tsdb')}`,
      `--web.listen-address=127.0.0.1:${port}`,
      '--log.level=warn',
    ],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const pid = child.pid;
  if (pid !== undefined) noteDaemon(pid);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const onExit = () => killIfAlive(pid);
  process.once('exit', onExit);
  let stopping: Promise<void> | null = null;
  const stop = () =>
    (stopping ??= (async () => {
      if (child.exitCode === null && child.signalCode === null) {
        killIfAlive(pid);
        await exited;
      }
      if (pid !== undefined) forgetDaemon(pid);
      process.removeListener('exit', onExit);
    })());
  beforeFixtureRemoval(t, stop);
  t.teardown(stop);
  const url = `http://127.0.0.1:${port}`;
  await eventually(
    'Prometheus ready',
    async () => {
      if (child.exitCode !== null) throw new Error(`prometheus exited ${child.exitCode}: ${stderr}`);
      return (await fetch(`${url}/-/ready`, { signal: AbortSignal.timeout(5_000) })).ok;
    },
    { withinMs: 60_000, maxPauseMs: 250 },
  );
  return {
    url,
    async query(promql) {
      const res = await fetch(`${url}/api/v1/query?query=${encodeURIComponent(promql)}`, {
        signal: AbortSignal.timeout(10_000),
      });
      const body = (await res.json()) as {
        status: string;
        error?: string;
        data?: { resultType: string; result: { metric: Record<string, string>; value: [number, string] }[] };
      };
      if (body.status !== 'success' || body.data?.resultType !== 'vector')
        throw new Error(`query ${promql}: ${body.status} ${body.error ?? body.data?.resultType}`);
      return body.data.result.map((r) => ({ metric: r.metric, value: Number(r.value[1]) }));
    },
  };
}
