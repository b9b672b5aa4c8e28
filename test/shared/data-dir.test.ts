import '../setup/fixtures.js'; // fixtures under the OS temp dir (see there)
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { dataDirPaths, resolveDataDir } from '../../src/shared/data-dir.js';

t.test('resolveDataDir: the flag, then WFX_DATA_DIR, each relative to cwd', async (t) => {
  const cwd = t.testdir({});
  t.equal(resolveDataDir('d', { WFX_DATA_DIR: '/elsewhere' }, cwd), join(cwd, 'd'), 'the flag wins');
  t.equal(resolveDataDir(undefined, { WFX_DATA_DIR: 'e' }, cwd), join(cwd, 'e'));
  t.equal(resolveDataDir(undefined, { WFX_DATA_DIR: '/abs' }, cwd), '/abs');
});

t.test('resolveDataDir: else the nearest .wfx directory upward, else <cwd>/.wfx', async (t) => {
  const root = t.testdir({ project: { '.wfx': {}, deep: { down: {} } }, 'file-named': { '.wfx': 'not a directory' } });
  t.equal(
    resolveDataDir(undefined, {}, join(root, 'project', 'deep', 'down')),
    join(root, 'project', '.wfx'),
    'found like git finds .git',
  );
  t.equal(
    resolveDataDir(undefined, {}, join(root, 'file-named')),
    join(root, 'file-named', '.wfx'),
    'a file named .wfx is not one',
  );
  mkdirSync(join(root, 'fresh'));
  t.equal(
    resolveDataDir(undefined, {}, join(root, 'fresh')),
    join(root, 'fresh', '.wfx'),
    'none: where a daemon start creates it',
  );
});

t.test('dataDirPaths names the files of a data directory', async (t) => {
  t.match(dataDirPaths('/d'), {
    daemonJson: '/d/daemon.json',
    bootstrapKey: '/d/bootstrap.key',
    lock: '/d/daemon.lock',
    daemonLog: '/d/logs/daemon.log',
  });
});
