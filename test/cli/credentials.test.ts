import { join } from 'node:path';
import t from 'tap';
import { credentialsFile } from '../../src/cli/credentials.js';

t.test('credentialsFile: XDG_CONFIG_HOME, else HOME/.config', async (t) => {
  t.equal(credentialsFile({ XDG_CONFIG_HOME: '/x', HOME: '/home/u' }), join('/x', 'wfx', 'credentials.json'));
  t.equal(credentialsFile({ HOME: '/home/u' }), join('/home/u', '.config', 'wfx', 'credentials.json'));
});
