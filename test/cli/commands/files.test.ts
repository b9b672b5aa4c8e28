import '../../setup/fixtures.js'; // fixtures under the OS temp dir (see there)
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import t from 'tap';
import type { FileView } from '../../../src/shared/api/index.js';
import { humanBytes, mimeTypeOfPath } from '../../../src/cli/commands/files.js';
import { served } from '../../helpers/served.js';

t.test('files put, list, get (to a file and to stdout), delete', async (t) => {
  const { cwd: dir, wfx, wfxAs } = await served(t);
  const wfxOther = await wfxAs('other');
  const bytes = Buffer.from([0x52, 0x49, 0x46, 0x46, 0, 1, 2, 255]);
  await writeFile(join(dir, 'hello.wav'), bytes);
  const put = await wfx(['files', 'put', 'hello.wav', '--json']);
  t.equal(put.code, 0, put.stderr);
  const file = JSON.parse(put.stdout) as FileView;
  t.match(file, { name: 'hello.wav', mimeType: 'audio/wav', bytes: 8, organization: 'acme' });
  const plain = await wfx(['files', 'put', 'hello.wav', '--name', 'again.bin', '--type', 'application/x-test']);
  t.match(plain.stdout, /^file_[0-9a-f]{32} {2}again\.bin {2}application\/x-test {2}8 B\n$/);

  const listed = await wfx(['files', 'list']);
  t.match(listed.stdout, /FILE ID\s+NAME\s+TYPE\s+SIZE\s+CREATED\s+EXPIRES/);
  t.match(listed.stdout, new RegExp(`${file.fileId}\\s+hello\\.wav\\s+audio/wav\\s+8 B`));
  t.equal(JSON.parse((await wfx(['files', 'list', '--json'])).stdout).length, 2);

  const got = await wfx(['files', 'get', file.fileId, '-o', 'copy.wav']);
  t.equal(got.code, 0, got.stderr);
  t.same(await readFile(join(dir, 'copy.wav')), bytes, 'the same bytes');
  const out = await wfx(['files', 'get', file.fileId]);
  t.equal(out.stdout, bytes.toString(), 'to stdout without -o');

  const theirs = await wfxOther(['files', 'get', file.fileId]);
  t.equal(theirs.code, 1);
  t.match(theirs.stderr, /FILE_NOT_FOUND/);
  const gone = await wfx(['files', 'delete', file.fileId]);
  t.match(gone.stdout, `${file.fileId} deleted`);
  t.match((await wfx(['files', 'get', file.fileId])).stderr, /FILE_NOT_FOUND/);
  const missing = await wfx(['files', 'put', 'nope.wav']);
  t.equal(missing.code, 2);
  t.match(missing.stderr, /cannot read nope\.wav: ENOENT/);
});

t.test('content types by extension; sizes for people', async (t) => {
  t.equal(mimeTypeOfPath('a/b/Song.MP3'), 'audio/mpeg');
  t.equal(mimeTypeOfPath('data.json'), 'application/json');
  t.equal(mimeTypeOfPath('unknown.xyz'), 'application/octet-stream');
  t.equal(humanBytes(1023), '1023 B');
  t.equal(humanBytes(1536), '1.5 KiB');
  t.equal(humanBytes(25 * 1024 * 1024), '25 MiB');
});
