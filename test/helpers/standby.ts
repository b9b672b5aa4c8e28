/**
 * A daemon run in the foreground beside another on the same database (a standby, say), and the
 * wait until a daemon serves.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Test } from 'tap';
import { spawnWfx } from './cli.js';
import { eventually } from './eventually.js';

/** A foreground daemon process (as a supervisor runs one); SIGKILLed at teardown. */
export function foreground(t: Test, dataDir: string, args: string[]) {
  const child = spawnWfx(t, ['daemon', 'start', '--foreground', '--port', '0', '--data-dir', dataDir, ...args]);
  let output = '';
  child.stdout.on('data', (b: Buffer) => (output += b.toString()));
  child.stderr.on('data', (b: Buffer) => (output += b.toString()));
  return { child, output: () => output };
}

/**
 * The daemon of `dataDir` once it serves (its health `ok`): a standby's port answers before that
 * (it forwards, or says it stands by), and daemon.json names it from the start.
 */
export function serving(dataDir: string, what: string, withinMs?: number) {
  return eventually(
    what,
    async () => {
      const info = JSON.parse(await readFile(join(dataDir, 'daemon.json'), 'utf8')) as { url: string };
      const health = (await (await fetch(`${info.url}/health`)).json()) as { status: string };
      return health.status === 'ok' && info;
    },
    withinMs === undefined ? {} : { withinMs },
  );
}
