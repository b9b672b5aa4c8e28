/**
 * A real PostgreSQL server for the tests: Debian's `postgresql` package (.ci/run installs it),
 * a throwaway cluster in a temp dir, listening on a Unix socket in that dir only (no TCP port
 * to collide on), stopped and removed at teardown. PostgreSQL refuses to run as root: when the
 * tests run as root (as CI does) the cluster runs as the `postgres` user the package creates.
 */
import { spawnSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Test } from 'tap';
import pg from 'pg';
import { forgetDaemon, noteDaemon } from '../setup/daemons.js';

/** The directory of initdb and pg_ctl, or null when PostgreSQL's server is not installed. */
function serverBinDir(): string | null {
  const found = spawnSync('pg_config', ['--bindir'], { encoding: 'utf8' });
  const candidates = found.status === 0 ? [found.stdout.trim()] : [];
  const debian = '/usr/lib/postgresql';
  if (existsSync(debian)) {
    const versions = readdirSync(debian).sort((a, b) => Number(b) - Number(a));
    candidates.push(...versions.map((v) => join(debian, v, 'bin')));
  }
  return candidates.find((dir) => existsSync(join(dir, 'initdb')) && existsSync(join(dir, 'pg_ctl'))) ?? null;
}

const BIN = serverBinDir();

/** Whether tests can start PostgreSQL here; under CI=true its absence fails the test instead. */
export const HAVE_POSTGRES = BIN !== null;

/**
 * A test's `skip` option: a message on a machine without PostgreSQL's server, never under CI=true
 * (there `.ci/run` installs it, and startPostgres throws if it is missing).
 */
export const POSTGRES_SKIP: string | false =
  !HAVE_POSTGRES && process.env.CI !== 'true' && 'PostgreSQL is not installed (apt-get install postgresql)';

export interface Postgres {
  /** A connection string for the `wfx` database, as `wfx daemon start --store` takes it. */
  readonly url: string;
  /** The socket directory (a `host` for pg). */
  readonly socketDir: string;
  /** A new, empty database on this server; returns its connection string. */
  createDatabase(name: string): Promise<string>;
  /** Runs one statement as the superuser on the `wfx` database. */
  query<T extends pg.QueryResultRow = pg.QueryResultRow>(sql: string, values?: unknown[]): Promise<T[]>;
}

const asRoot = typeof process.getuid === 'function' && process.getuid() === 0;

/** Runs a server program, as `postgres` when this process is root. */
function run(program: string, args: string[]): void {
  const [command, argv] = asRoot ? ['runuser', ['-u', 'postgres', '--', program, ...args]] : [program, args];
  const done = spawnSync(command, argv, { encoding: 'utf8', timeout: 60_000 });
  if (done.status !== 0)
    throw new Error(`${program} ${args.join(' ')} failed (${done.status}): ${done.stderr || done.stdout}`);
}

/** A running throwaway cluster: `url` of its `wfx` database; `stop()` removes it. */
export interface Cluster {
  readonly url: string;
  readonly socketDir: string;
  /** The connection string of database `db` on this server. */
  urlOf(db: string): string;
  stop(): void;
}

/**
 * Starts a throwaway PostgreSQL cluster in a temp dir (for tests, startPostgres; the benchmarks
 * call it directly). `fsync: false` for tests: they never crash the PostgreSQL server itself,
 * only the daemons that use it, and a commit a live server acknowledged survives its client's
 * SIGKILL; the benchmarks keep fsync on, as a real server has it.
 */
export async function startCluster(options: { fsync: boolean }): Promise<Cluster> {
  if (!BIN) throw new Error('PostgreSQL is not installed; .ci/run installs the postgresql package');
  const dir = mkdtempSync(join(tmpdir(), 'wfx-pg-'));
  const data = join(dir, 'data');
  if (asRoot) {
    const uid = Number(spawnSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).stdout.trim());
    const gid = Number(spawnSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).stdout.trim());
    chownSync(dir, uid, gid);
  }
  run(join(BIN, 'initdb'), ['-D', data, '-U', 'wfx', '-A', 'trust', '--no-sync', '-E', 'UTF8', '--no-instructions']);
  const settings = [
    `-c listen_addresses=''`,
    `-c unix_socket_directories=${dir}`,
    `-c fsync=${options.fsync ? 'on' : 'off'}`,
    '-c max_connections=100',
    '-c shared_buffers=32MB',
  ].join(' ');
  let pid: number | null = null;
  let stopped = false;
  const stop = (): void => {
    if (stopped) return;
    stopped = true;
    try {
      run(join(BIN, 'pg_ctl'), ['-D', data, '-m', 'immediate', '-w', 'stop']);
    } catch {
      // gone already
    }
    if (pid !== null) forgetDaemon(pid);
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    run(join(BIN, 'pg_ctl'), ['-D', data, '-o', settings, '-l', join(dir, 'server.log'), '-w', '-t', '60', 'start']);
    pid = Number(readFileSync(join(data, 'postmaster.pid'), 'utf8').split('\n')[0]);
    noteDaemon(pid); // swept after the suite if this process dies before it stops the server
  } catch (err) {
    stop();
    throw err;
  }
  const urlOf = (db: string): string => `postgresql://wfx@localhost/${db}?host=${encodeURIComponent(dir)}`;
  await queryAt(urlOf('postgres'), 'CREATE DATABASE wfx');
  return { url: urlOf('wfx'), socketDir: dir, urlOf, stop };
}

/** Starts a throwaway PostgreSQL cluster for this test, removed at its teardown (skipped by POSTGRES_SKIP where absent). */
export async function startPostgres(t: Test): Promise<Postgres> {
  const cluster = await startCluster({ fsync: false });
  t.teardown(cluster.stop);
  return {
    url: cluster.url,
    socketDir: cluster.socketDir,
    async createDatabase(name) {
      await queryAt(cluster.urlOf('postgres'), `CREATE DATABASE ${pg.escapeIdentifier(name)}`);
      return cluster.urlOf(name);
    },
    query: (sql, values) => queryAt(cluster.url, sql, values),
  };
}

/** Runs one statement on the database at `url` (a connection string of startPostgres's server). */
export async function queryAt<T extends pg.QueryResultRow = pg.QueryResultRow>(
  url: string,
  sql: string,
  values?: unknown[],
): Promise<T[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<T>(sql, values)).rows;
  } finally {
    await client.end();
  }
}

/**
 * A session of its own on the database at `url` with a transaction open and `sql` run in it (a
 * lock taken, say), held until the test commits or rolls it back; closed at the test's end.
 */
export async function inTransaction(t: Test, url: string, sql: string): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  t.teardown(() => client.end());
  await client.query('BEGIN');
  await client.query(sql);
  return client;
}

/**
 * Whether a standby's follower (journal-follower.ts) on the database at `url` has its LISTEN in
 * place: a test that relies on NOTIFY alone waits for it, or an append made before is missed.
 */
export async function standbyListens(url: string): Promise<boolean> {
  const rows = await queryAt(
    url,
    "SELECT 1 FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'wfx standby' AND query LIKE 'LISTEN%' AND state = 'idle'",
  );
  return rows.length > 0;
}
