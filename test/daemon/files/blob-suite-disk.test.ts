import '../../setup/fixtures.js'; // fixtures under the OS temp dir (see there)
import { join } from 'node:path';
import t from 'tap';
import { DiskBlobs } from '../../../src/daemon/store/blobs.js';
import { blobSuite } from '../../helpers/blob-suite.js';

// The shared behaviour of blob stores (test/helpers/blob-suite.ts), on files.
blobSuite(t, async (t) => {
  const dir = t.testdir();
  return { blobs: new DiskBlobs(join(dir, 'files')), tmpDir: dir };
});
