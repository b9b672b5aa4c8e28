import t from 'tap';
import { formatBytes, parseBytes } from '../../src/shared/bytes.js';

t.test('parseBytes: a number and a unit of 1024s, any case; anything else is null', async (t) => {
  t.equal(parseBytes('2048'), 2048);
  t.equal(parseBytes('512KiB'), 512 * 1024);
  t.equal(parseBytes('16 MiB'), 16 * 1024 * 1024);
  t.equal(parseBytes('1.5mib'), 1.5 * 1024 * 1024);
  t.equal(parseBytes('2G'), 2 * 1024 ** 3);
  t.equal(parseBytes(' 64kb '), 64 * 1024);
  for (const bad of ['', 'lots', '1.5', '-1KiB', '5TiB', '10 bytes', '1e3'])
    t.equal(parseBytes(bad), null, JSON.stringify(bad));
});

t.test('formatBytes', async (t) => {
  t.equal(formatBytes(512), '512 B');
  t.equal(formatBytes(64 * 1024), '64 KiB');
  t.equal(formatBytes(1.5 * 1024 * 1024), '1.5 MiB');
  t.equal(formatBytes(10 * 1024 * 1024), '10 MiB');
});
