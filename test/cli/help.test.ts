import t from 'tap';
import { wfx } from '../helpers/cli.js';

/**
 * Snapshots of `wfx --help` and of every command's help: a change to the CLI's interface shows
 * up here and must be accepted on purpose (`npm run build && npx tap --snapshot dist/test/cli/help.test.js`).
 */
const COMMANDS = [
  [],
  ['daemon', 'start'],
  ['daemon', 'stop'],
  ['daemon', 'status'],
  ['flow', 'validate'],
  ['flow', 'publish'],
  ['flow', 'list'],
  ['flow', 'show'],
  ['flow', 'activate'],
  ['flow', 'schema'],
  ['run'],
  ['instances', 'list'],
  ['instances', 'get'],
  ['instances', 'cancel'],
  ['logs'],
  ['task', 'complete'],
  ['task', 'cancel'],
  ['event', 'send'],
  ['keys', 'create'],
  ['keys', 'list'],
  ['keys', 'revoke'],
  ['env', 'set'],
  ['env', 'list'],
  ['expr'],
  ['cron', 'next'],
  ['webhooks', 'create'],
  ['webhooks', 'send'],
  ['webhooks', 'verify'],
  ['webhooks', 'deliveries'],
  ['email-connections', 'create'],
  ['dev'],
  ['login'],
  ['tui'],
];

t.test('help of every command', async (t) => {
  for (const cmd of COMMANDS) {
    const res = await wfx([...cmd, '--help']);
    t.equal(res.code, 0, `wfx ${cmd.join(' ')} --help exits 0`);
    t.matchSnapshot(res.stdout, `wfx ${cmd.join(' ')} --help`);
  }
});

t.test('every command with arguments shows an example', async (t) => {
  for (const cmd of [['run'], ['logs'], ['webhooks', 'send'], ['webhooks', 'verify'], ['webhooks', 'create'], ['email-connections', 'create'], ['dev'], ['task', 'complete'], ['event', 'send'], ['keys', 'create'], ['flow', 'publish'], ['flow', 'validate'], ['expr'], ['login'], ['daemon', 'start']]) {
    t.match((await wfx([...cmd, '--help'])).stdout, /Examples?:/, `wfx ${cmd.join(' ')}`);
  }
});
