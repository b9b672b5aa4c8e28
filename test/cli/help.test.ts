import t from 'tap';
import { wfxIn } from '../helpers/cli.js';

/**
 * Snapshots of `wfx --help` and of every command's help: a change to the CLI's interface shows
 * up here and must be accepted on purpose (`npm run build && npx tap --snapshot dist/test/cli/help.test.js`).
 */
const COMMANDS = [
  [],
  ['init'],
  ['completion'],
  ['console'],
  ['daemon', 'start'],
  ['daemon', 'stop'],
  ['daemon', 'status'],
  ['daemon', 'check'],
  ['daemon', 'backup'],
  ['daemon', 'secrets'],
  ['daemon', 'rotate-secrets-key'],
  ['flow', 'validate'],
  ['flow', 'publish'],
  ['flow', 'list'],
  ['flow', 'show'],
  ['flow', 'activate'],
  ['flow', 'promote'],
  ['flow', 'schema'],
  ['flow', 'new'],
  ['run'],
  ['instances', 'list'],
  ['instances', 'get'],
  ['instances', 'cancel'],
  ['instances', 'retry'],
  ['instances', 'replay'],
  ['instances', 'move'],
  ['instances', 'failures'],
  ['instances', 'bulk', 'list'],
  ['instances', 'bulk', 'show'],
  ['instances', 'bulk', 'follow'],
  ['instances', 'bulk', 'cancel'],
  ['logs'],
  ['task', 'list'],
  ['task', 'show'],
  ['task', 'complete'],
  ['task', 'cancel'],
  ['event', 'send'],
  ['keys', 'create'],
  ['keys', 'list'],
  ['keys', 'suspend'],
  ['keys', 'activate'],
  ['keys', 'revoke'],
  ['env', 'set'],
  ['env', 'unset'],
  ['env', 'list'],
  ['secrets', 'set'],
  ['secrets', 'list'],
  ['secrets', 'delete'],
  ['apply'],
  ['export'],
  ['expr'],
  ['test'],
  ['test', 'record'],
  ['test', 'schema'],
  ['cron', 'next'],
  ['schedules', 'list'],
  ['schedules', 'pause'],
  ['schedules', 'resume'],
  ['schedules', 'backfill'],
  ['webhooks', 'create'],
  ['webhooks', 'update'],
  ['webhooks', 'listen'],
  ['webhooks', 'send'],
  ['webhooks', 'verify'],
  ['webhooks', 'deliveries'],
  ['webhooks', 'redeliver'],
  ['webhooks', 'list'],
  ['webhooks', 'rotate'],
  ['webhooks', 'delete'],
  ['email-connections', 'list'],
  ['email-connections', 'delete'],
  ['email-connections', 'create'],
  ['ai', 'providers', 'create'],
  ['ai', 'providers', 'list'],
  ['ai', 'providers', 'get'],
  ['ai', 'providers', 'update'],
  ['ai', 'providers', 'delete'],
  ['ai', 'providers', 'test'],
  ['memory', 'list'],
  ['memory', 'get'],
  ['memory', 'delete'],
  ['audit'],
  ['domains', 'register'],
  ['domains', 'list'],
  ['domains', 'show'],
  ['domains', 'delete'],
  ['jobs', 'list'],
  ['worker', 'run'],
  ['dev'],
  ['login'],
  ['tui'],
];

t.test('help of every command', async (t) => {
  for (const cmd of COMMANDS) {
    const res = await wfxIn([...cmd, '--help']);
    t.equal(res.code, 0, `wfx ${cmd.join(' ')} --help exits 0`);
    t.matchSnapshot(res.stdout, `wfx ${cmd.join(' ')} --help`);
  }
});

t.test("every command's help shows an example", async (t) => {
  for (const cmd of COMMANDS.filter((c) => c.length > 0)) {
    t.match((await wfxIn([...cmd, '--help'])).stdout, /Examples?:\n  \$ .*wfx /, `wfx ${cmd.join(' ')}`);
  }
});
