import '../../setup/fixtures.js'; // fixtures under the OS temp dir (see there)
import { join } from 'node:path';
import t from 'tap';
import {
  defaultMaxConnections,
  descriptorReserve,
  overflowConnections,
  parseOpenFilesLimit,
  readOpenFilesLimit,
} from '../../../src/daemon/api/open-files.js';

/** /proc/self/limits as Linux writes it, with `soft` and `hard` open files. */
const limits = (soft: string, hard: string) =>
  [
    'Limit                     Soft Limit           Hard Limit           Units     ',
    'Max cpu time              unlimited            unlimited            seconds   ',
    'Max processes             63459                63459                processes ',
    `Max open files            ${soft.padEnd(21)}${hard.padEnd(21)}files     `,
    'Max locked memory         8388608              8388608              bytes     ',
    '',
  ].join('\n');

t.test('parseOpenFilesLimit reads the soft limit of the Max open files line', async (t) => {
  t.equal(parseOpenFilesLimit(limits('1024', '524288')), 1024, 'the soft limit, not the hard one');
  t.equal(parseOpenFilesLimit(limits('256', '256')), 256);
  t.equal(parseOpenFilesLimit(limits('unlimited', 'unlimited')), null, 'unlimited: no limit to derive from');
  t.equal(parseOpenFilesLimit(limits('0', '0')), null);
  t.equal(parseOpenFilesLimit('Max processes 10 10 processes\n'), null, 'no such line');
  t.equal(parseOpenFilesLimit(''), null);
});

t.test('readOpenFilesLimit reads a limits file, and gives null where there is none', async (t) => {
  const dir = t.testdir({ limits: limits('4096', '8192') });
  t.equal(readOpenFilesLimit(join(dir, 'limits')), 4096);
  t.equal(readOpenFilesLimit(join(dir, 'missing')), null);
  if (process.platform === 'linux') {
    const own = readOpenFilesLimit();
    t.ok(own !== null && own > 0, `this process's own limit (${own})`);
  }
});

t.test('defaultMaxConnections leaves the reserve, with the connections answered over the cap', async (t) => {
  t.equal(defaultMaxConnections(null), 1_000, 'a fixed default where the limit is unknown');
  t.equal(defaultMaxConnections(1_048_576), 10_000, 'never more than 10,000 by default');
  t.equal(defaultMaxConnections(20), 8, 'at least 8, however low the limit');
  t.equal(defaultMaxConnections(256), 120);
  for (const openFiles of [140, 256, 1024, 4096, 20_000, 65_536]) {
    const served = defaultMaxConnections(openFiles);
    const sockets = served + overflowConnections(served);
    t.ok(sockets + descriptorReserve(openFiles) <= openFiles, `${openFiles}: ${sockets} sockets leave the reserve`);
    t.ok(descriptorReserve(openFiles) >= 128 && descriptorReserve(openFiles) >= openFiles / 4, `${openFiles}: reserve`);
  }
  t.equal(overflowConnections(1), 1);
  t.equal(overflowConnections(160), 10);
  t.equal(overflowConnections(1_000_000), 64);
});
