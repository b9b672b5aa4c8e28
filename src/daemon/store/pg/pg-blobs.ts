/**
 * The file store's content in PostgreSQL (`--store`): each blob a row of `wfx_blobs` and its
 * content in chunks of `wfx_blob_chunks`, written in one transaction that commits before the
 * `file.stored` record naming it is journaled, so a daemon that takes over serves the files the
 * one before it stored. Writing a blob that is there already only renews its time, so the
 * orphan sweep's grace covers a file that names an old blob again.
 */
import { writeFile, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { randomBytes } from 'node:crypto';
import type pg from 'pg';
import { consume, ORPHAN_GRACE_MS, type Blob, type BlobContent, type Blobs } from '../blobs.js';
import { FILE_MODE } from '../../disk/durable-files.js';
import { inTransaction } from './transaction.js';

/** Content is kept in chunks of this size: a read streams them one query at a time. */
const CHUNK_BYTES = 1024 * 1024;

export class PgBlobs implements Blobs {
  constructor(private readonly pool: pg.Pool) {}

  async write(content: BlobContent, maxBytes: number): Promise<Blob> {
    // Held until the hash is known (the row's key): at most maxBytes, as the upload's limit says.
    const chunks: Buffer[] = [];
    const blob = await consume(content, maxBytes, (chunk) => void chunks.push(Buffer.from(chunk)));
    const whole = Buffer.concat(chunks);
    await inTransaction(this.pool, async (client) => {
      const fresh = await client.query(
        `INSERT INTO wfx_blobs (sha256, bytes) VALUES ($1, $2)
         ON CONFLICT (sha256) DO UPDATE SET stored_at = now() RETURNING (xmax = 0) AS inserted`,
        [blob.sha256, blob.bytes],
      );
      if ((fresh.rows[0] as { inserted: boolean }).inserted) {
        for (let at = 0, n = 0; at < whole.length || n === 0; at += CHUNK_BYTES, n++) {
          await client.query('INSERT INTO wfx_blob_chunks (sha256, chunk, data) VALUES ($1, $2, $3)', [
            blob.sha256,
            n,
            whole.subarray(at, at + CHUNK_BYTES),
          ]);
        }
      }
    });
    return blob;
  }

  async read(sha256: string): Promise<Readable | null> {
    const { rows } = await this.pool.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM wfx_blob_chunks WHERE sha256 = $1',
      [sha256],
    );
    const count = rows[0]?.n ?? 0;
    if (count === 0) return null;
    const pool = this.pool;
    return Readable.from(
      (async function* () {
        for (let n = 0; n < count; n++) {
          const chunk = await pool.query<{ data: Buffer }>(
            'SELECT data FROM wfx_blob_chunks WHERE sha256 = $1 AND chunk = $2',
            [sha256, n],
          );
          if (chunk.rows[0]) yield chunk.rows[0].data;
        }
      })(),
    );
  }

  async path(sha256: string, tmpDir: string): Promise<{ path: string; release(): Promise<void> } | null> {
    const stream = await this.read(sha256);
    if (!stream) return null;
    const parts: Buffer[] = [];
    for await (const part of stream) parts.push(part as Buffer);
    const path = join(tmpDir, `${randomBytes(8).toString('hex')}.blob`);
    await writeFile(path, Buffer.concat(parts), { mode: FILE_MODE });
    return { path, release: () => unlink(path).catch(() => undefined) };
  }

  async removeOrphans(named: (sha256: string) => boolean, now: Date): Promise<number> {
    const { rows } = await this.pool.query<{ sha256: string }>('SELECT sha256 FROM wfx_blobs WHERE stored_at < $1', [
      new Date(now.getTime() - ORPHAN_GRACE_MS),
    ]);
    const orphans = rows.map((r) => r.sha256).filter((sha256) => !named(sha256));
    if (orphans.length === 0) return 0;
    // The chunks go with their blob (ON DELETE CASCADE); the time is checked again, in the same statement.
    const gone = await this.pool.query('DELETE FROM wfx_blobs WHERE sha256 = ANY($1) AND stored_at < $2', [
      orphans,
      new Date(now.getTime() - ORPHAN_GRACE_MS),
    ]);
    return gone.rowCount ?? 0;
  }
}
