/**
 * Where the file store's content lives, by SHA-256: files under the data directory
 * (DiskBlobs), or a table of the PostgreSQL store (store/pg/pg-blobs.ts). A blob is durable
 * before `write` resolves, so before the `file.stored` record that names it is journaled.
 */
import { createHash, randomBytes } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { mkdir, open, readdir, rename, stat, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { WfxError } from '../../shared/errors.js';
import { DIR_MODE, ensurePrivateDir, FILE_MODE, fsyncDir } from '../disk/durable-files.js';

/** What `write` made: the content's hash and size, durable under its hash. */
export interface Blob {
  readonly sha256: string;
  readonly bytes: number;
}

export type BlobContent = AsyncIterable<Buffer | Uint8Array> | Buffer;

/** A blob no file names is removed once it is this old (younger ones may be on their way to a record). */
export const ORPHAN_GRACE_MS = 60 * 60 * 1000;

export interface Blobs {
  /** Writes `content`, durable before this resolves. Throws PAYLOAD_TOO_LARGE past `maxBytes`, leaving nothing. */
  write(content: BlobContent, maxBytes: number): Promise<Blob>;
  /** The content of `sha256`, or null when it is gone. */
  read(sha256: string): Promise<Readable | null>;
  /** A file holding the content (for a program that reads a path): the blob's own, or a copy `release` removes. */
  path(sha256: string, tmpDir: string): Promise<{ readonly path: string; release(): Promise<void> } | null>;
  /** Removes the blobs `named` says no file names, once older than ORPHAN_GRACE_MS; returns how many. */
  removeOrphans(named: (sha256: string) => boolean, now: Date): Promise<number>;
}

/**
 * Reads `content` whole, hashing it and counting its bytes as it comes; throws PAYLOAD_TOO_LARGE
 * as soon as it passes `maxBytes`. `each` sees every chunk (to write it somewhere).
 */
export async function consume(
  content: BlobContent,
  maxBytes: number,
  each: (chunk: Buffer | Uint8Array) => Promise<void> | void,
): Promise<Blob> {
  const hash = createHash('sha256');
  let bytes = 0;
  for await (const chunk of Buffer.isBuffer(content) ? [content] : content) {
    bytes += chunk.byteLength;
    if (bytes > maxBytes) throw new WfxError('PAYLOAD_TOO_LARGE', `a file may hold ${maxBytes} bytes at most`);
    hash.update(chunk);
    await each(chunk);
  }
  return { sha256: hash.digest('hex'), bytes };
}

/**
 * Blobs under `<data-dir>/files/<first two hex digits>/<sha256>`: written to a temporary file,
 * fsynced, renamed into place and the directory fsynced. Two files with the same content share
 * one blob; `tmp/` holds work in progress, swept once old.
 */
export class DiskBlobs implements Blobs {
  constructor(private readonly dir: string) {}

  private get tmpDir(): string {
    return join(this.dir, 'tmp');
  }

  async write(content: BlobContent, maxBytes: number): Promise<Blob> {
    await ensurePrivateDir(this.dir);
    await ensurePrivateDir(this.tmpDir);
    const tmp = join(this.tmpDir, `${randomBytes(8).toString('hex')}.part`);
    const fh = await open(tmp, 'wx', FILE_MODE);
    let blob: Blob | null = null;
    try {
      blob = await consume(content, maxBytes, async (chunk) => void (await fh.write(chunk)));
      await fh.sync();
    } finally {
      await fh.close();
      if (!blob) await unlink(tmp).catch(() => undefined);
    }
    const dir = join(this.dir, blob.sha256.slice(0, 2));
    await mkdir(dir, { recursive: true, mode: DIR_MODE });
    // The same content again: the rename replaces an identical blob, which is harmless.
    await rename(tmp, join(dir, blob.sha256));
    await fsyncDir(dir);
    return blob;
  }

  private pathOf(sha256: string): string {
    return join(this.dir, sha256.slice(0, 2), sha256);
  }

  async read(sha256: string): Promise<Readable | null> {
    const path = this.pathOf(sha256);
    if (!(await stat(path).catch(() => null))) return null;
    return createReadStream(path);
  }

  async path(sha256: string): Promise<{ path: string; release(): Promise<void> } | null> {
    const path = this.pathOf(sha256);
    if (!(await stat(path).catch(() => null))) return null;
    return { path, release: async () => undefined };
  }

  async removeOrphans(named: (sha256: string) => boolean, now: Date): Promise<number> {
    let removed = 0;
    let dirs: string[];
    try {
      dirs = await readdir(this.dir);
    } catch {
      return 0; // no file stored yet
    }
    for (const d of dirs) {
      const dir = join(this.dir, d);
      let names: string[];
      try {
        names = await readdir(dir);
      } catch {
        continue;
      }
      for (const name of names) {
        if (d !== 'tmp' && named(name)) continue;
        const path = join(dir, name);
        const info = await stat(path).catch(() => null);
        if (!info || now.getTime() - info.mtimeMs < ORPHAN_GRACE_MS) continue;
        // Asked again now: a file stored since the sweep began may name it.
        if (d !== 'tmp' && named(name)) continue;
        await unlink(path).catch(() => undefined);
        removed++;
      }
    }
    return removed;
  }
}
