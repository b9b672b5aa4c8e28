import '../setup/fixtures.js'; // fixtures under the OS temp dir (see there)
import t from 'tap';
import { parseReplayWindow, safetyOptions } from '../../src/cli/daemon-options.js';
import type { CliContext } from '../../src/cli/context.js';
import { wfxIn } from '../helpers/cli.js';

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
