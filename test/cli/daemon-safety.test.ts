import '../setup/fixtures.js'; // fixtures under the OS temp dir (see there)
import t from 'tap';
import {
  connectionArgs,
  connectionOptions,
  parseHeadersTimeout,
  parseMaxConnections,
  parseReplayWindow,
  safetyOptions,
} from '../../src/cli/daemon-options.js';
import type { CliContext } from '../../src/cli/context.js';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { startDaemon, wfxIn } from '../helpers/cli.js';
import { eventually } from '../helpers/eventually.js';

const ctx = (env: NodeJS.ProcessEnv) => ({ env }) as CliContext;

t.test(
  '--http-deny/--http-allow: a flag, else WFX_HTTP_DENY/WFX_HTTP_ALLOW; a malformed CIDR is a USAGE_ERROR',
  async (t) => {
    t.same(safetyOptions(ctx({}), {}), { webhookReplayWindowMs: undefined, httpDeny: [], httpAllow: [] });
    t.same(safetyOptions(ctx({ WFX_HTTP_DENY: '10.0.0.0/8, 127.0.0.1', WFX_HTTP_ALLOW: '169.254.169.254' }), {}), {
      webhookReplayWindowMs: undefined,
      httpDeny: ['10.0.0.0/8', '127.0.0.1'],
      httpAllow: ['169.254.169.254'],
    });
    t.same(
      safetyOptions(ctx({ WFX_HTTP_DENY: '10.0.0.0/8' }), { httpDeny: '192.168.0.0/16' }).httpDeny,
      ['192.168.0.0/16'],
      'the flag replaces the variable',
    );
    t.throws(() => safetyOptions(ctx({ WFX_HTTP_DENY: '10.0.0.0/99' }), {}), { code: 'USAGE_ERROR' });
    t.equal(parseReplayWindow('72h'), 72 * 60 * 60 * 1000);
    t.throws(() => parseReplayWindow('soon'), { code: 'commander.invalidArgument' });
  },
);

t.test('wfx daemon start refuses a malformed --http-deny or --webhook-replay-window before starting', async (t) => {
  const cwd = t.testdir({});
  t.equal((await wfxIn(['daemon', 'start', '--port', '0', '--http-deny', 'nope'], { cwd })).code, 2);
  t.equal((await wfxIn(['daemon', 'start', '--port', '0', '--webhook-replay-window', '0s'], { cwd })).code, 2);
});

t.test(
  '--max-connections and --headers-timeout: parsed, refused out of range, passed to a background daemon',
  async (t) => {
    t.equal(parseMaxConnections('1'), 1);
    t.equal(parseMaxConnections('20000'), 20_000);
    for (const bad of ['0', '-5', '1.5', '1e3', '', 'many', '1000001'])
      t.throws(() => parseMaxConnections(bad), { code: 'commander.invalidArgument' }, `--max-connections ${bad}`);
    t.equal(parseHeadersTimeout('5s'), 5_000);
    t.equal(parseHeadersTimeout('250ms'), 250);
    t.equal(parseHeadersTimeout('PT1M'), 60_000);
    for (const bad of ['0s', '50ms', '11m', 'soon', '5'])
      t.throws(() => parseHeadersTimeout(bad), { code: 'commander.invalidArgument' }, `--headers-timeout ${bad}`);
    t.same(connectionOptions({}), { maxConnections: undefined, headersTimeoutMs: undefined });
    t.same(connectionOptions({ maxConnections: 50, headersTimeout: 2_000 }), {
      maxConnections: 50,
      headersTimeoutMs: 2_000,
    });
    t.same(connectionArgs({}), []);
    const args = connectionArgs({ maxConnections: 50, headersTimeout: 2_000 });
    t.same(args, ['--max-connections', '50', '--headers-timeout', '2000ms']);
    t.equal(parseHeadersTimeout(args[3]!), 2_000, 'the background daemon parses what it is given back');
    const cwd = t.testdir({});
    t.equal((await wfxIn(['daemon', 'start', '--port', '0', '--max-connections', '0'], { cwd })).code, 2);
    t.equal((await wfxIn(['daemon', 'start', '--port', '0', '--headers-timeout', 'never'], { cwd })).code, 2);
  },
);

t.test('a background daemon gets --max-connections and --headers-timeout', async (t) => {
  const cwd = t.testdir({});
  const daemon = await startDaemon(t, { cwd, args: ['--max-connections', '50', '--headers-timeout', '2s'] });
  // The log is written in chunks: the line comes soon after the start.
  const listening = await eventually('the daemon logs where it listens', async () =>
    (await readFile(join(cwd, '.wfx', 'logs', 'daemon.log'), 'utf8'))
      .split('\n')
      .filter((l) => l.includes('wfx daemon listening'))
      .map((l) => JSON.parse(l) as { maxConnections?: number })
      .at(-1),
  );
  t.equal(listening.maxConnections, 50, 'the cap given');
  t.equal((await fetch(`${daemon.url}/health`)).status, 200);
});
