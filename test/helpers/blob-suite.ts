/**
 * What every blob store promises the file store (files/blobs.ts), run against each: files in the
 * data directory (test/daemon/files/blob-suite-disk.test.ts) and PostgreSQL
 * (blob-suite-pg.test.ts).
 */
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import type { Test } from 'tap';
import type { Blobs } from '../../src/daemon/store/blobs.js';

/** A blob store of the test's own, a directory for its temporary copies, and a way to close it. */
export type BlobPlace = (t: Test) => Promise<{ blobs: Blobs; tmpDir: string }>;

const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');
async function all(stream: AsyncIterable<unknown> | null): Promise<Buffer | null> {
  if (!stream) return null;
  const parts: Buffer[] = [];
  for await (const part of stream) parts.push(part as Buffer);
  return Buffer.concat(parts);
}
async function* inPieces(content: Buffer, size: number) {
  for (let at = 0; at < content.length; at += size) yield content.subarray(at, at + size);
}
const HOUR = 60 * 60 * 1000;

export function blobSuite(t: Test, place: BlobPlace): void {
  t.test('content comes back as written, under its SHA-256, whole or streamed in pieces', async (t) => {
    const { blobs } = await place(t);
    const big = Buffer.alloc(2.5 * 1024 * 1024, 7); // more than one chunk of the database's
    big.write('start', 0);
    const blob = await blobs.write(inPieces(big, 64 * 1024), 10 * 1024 * 1024);
    t.same(blob, { sha256: sha(big), bytes: big.length });
    t.ok((await all(await blobs.read(blob.sha256)))!.equals(big));
    const empty = await blobs.write(Buffer.alloc(0), 10);
    t.same(await all(await blobs.read(empty.sha256)), Buffer.alloc(0), 'an empty file has content too');
    t.equal(await blobs.read(sha(Buffer.from('never written'))), null);
  });

  t.test('the same content twice is one blob; too much content leaves nothing', async (t) => {
    const { blobs } = await place(t);
    const a = await blobs.write(Buffer.from('same'), 100);
    const b = await blobs.write(Buffer.from('same'), 100);
    t.same(a, b);
    await t.rejects(blobs.write(Buffer.alloc(101), 100), { code: 'PAYLOAD_TOO_LARGE' });
    t.equal(await blobs.read(sha(Buffer.alloc(101))), null);
    t.equal(await blobs.removeOrphans(() => false, new Date(Date.now() + 2 * HOUR)), 1, 'only the one blob was there');
  });

  t.test('a path holds the content for a program to read', async (t) => {
    const { blobs, tmpDir } = await place(t);
    const blob = await blobs.write(Buffer.from('RIFF audio'), 100);
    const found = (await blobs.path(blob.sha256, tmpDir))!;
    t.equal(await readFile(found.path, 'utf8'), 'RIFF audio');
    await found.release();
    t.equal(await blobs.path(sha(Buffer.from('gone')), tmpDir), null);
  });

  t.test('orphans go once past the grace period; named blobs and young ones stay', async (t) => {
    const { blobs } = await place(t);
    const kept = await blobs.write(Buffer.from('named'), 100);
    const orphan = await blobs.write(Buffer.from('orphan'), 100);
    const named = (s: string) => s === kept.sha256;
    t.equal(await blobs.removeOrphans(named, new Date()), 0, 'young: on its way to a record');
    t.equal(await blobs.removeOrphans(named, new Date(Date.now() + 2 * HOUR)), 1);
    t.equal(await blobs.read(orphan.sha256), null);
    t.ok(await blobs.read(kept.sha256));
  });
}
