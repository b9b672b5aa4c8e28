/**
 * `wfx daemon backup` (POST /admin/backup): a consistent copy of a running daemon's data
 * directory, taken while it goes on serving. See docs/operations.md "Backups".
 */
import { link, lstat, mkdir, open, readdir, rm, stat, type FileHandle } from 'node:fs/promises';
import { dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { isWfxError, WfxError } from '../shared/errors.js';
import { BUCKET_RE } from './store/history-check.js';
import type { History } from './store/history.js';
import { scanJournal, segmentName } from './store/journal.js';
import { encodeManifest, manifestPathIn } from './store/manifest.js';
import { DIR_MODE, FILE_MODE, fsyncDir, SYNC_EVERY_BYTES, writeFileAtomic } from './store/fs-util.js';
import { snapshotPathIn } from './store/snapshot-file.js';
import type { Store, StoreHold } from './store/store.js';
import type { BackupReport } from '../shared/api/index.js';

/** What a backup holds (the answer of POST /admin/backup: the wire's type, shared/api). */
export type { BackupReport };

/** What a backup reads from: the running daemon's store and history, and its data directory. */
export interface BackupSource {
  readonly dataDir: string;
  readonly store: Pick<Store<unknown, unknown>, 'hold'>;
  readonly history: Pick<History, 'durableEnds'>;
}

/** Bytes read before they are written: the event loop never holds a large file. */
const COPY_CHUNK = 1 << 20;

/**
 * Copies the store and history of `source` into `target` (absolute; it must not exist or be an
 * empty directory; created 0700, files 0600): a data directory that opens with everything
 * acknowledged up to `lastSeq`. A checkpoint is taken first and no other runs until the journal
 * is copied (Store.hold); the snapshot is hard-linked when it can be (same file system), else
 * copied; journal segments and history files are copied up to their durable ends. Neither
 * `bootstrap.key` (a secret), `daemon.json`, the lock nor logs are copied. Throws WfxError
 * VALIDATION_ERROR (a relative path), BACKUP_TARGET_NOT_EMPTY, BACKUP_TARGET_INVALID,
 * BACKUP_FAILED (nothing partial left), STORE_FAILED / STORE_CLOSED.
 */
export async function backupDataDir(source: BackupSource, target: string): Promise<BackupReport> {
  if (!isAbsolute(target))
    throw new WfxError('VALIDATION_ERROR', `the backup directory must be an absolute path: ${target}`, {
      details: { directory: target },
    });
  target = resolve(target);
  const inside = relative(resolve(source.dataDir), target);
  if (inside === '' || (inside !== '..' && !inside.startsWith(`..${sep}`) && !isAbsolute(inside))) {
    throw new WfxError('BACKUP_TARGET_INVALID', `the backup directory ${target} is inside the data directory`, {
      details: { directory: target },
    });
  }
  // Refused before the checkpoint; checked again, and created, under the hold (one at a time).
  await checkTarget(target);
  const hold = await source.store.hold();
  let held: StoreHold | null = hold;
  const release = (): void => {
    held?.release();
    held = null;
  };
  let created: 'dir' | 'contents' | null = null;
  try {
    created = await createTarget(target);
    const out = new Output();
    const snapshotSeq = hold.snapshot?.seq ?? 0;
    if (hold.snapshot) await linkOrCopy(hold.snapshotPath, snapshotPathIn(target), hold.snapshot.bytes, out);
    const journalDir = join(target, 'journal');
    await mkdir(journalDir, { mode: DIR_MODE });
    for (const segment of hold.segments) {
      // A closed segment whole but for zeros its close may not have cut yet (frames are lines).
      await copyPrefix(segment.path, join(journalDir, segmentName(segment.first)), segment.bytes, out, {
        wholeLines: segment.bytes === null,
      });
    }
    release(); // the snapshot and the journal are copied: checkpoints may replace and retire them
    const segments = hold.segments.map((s) => s.first);
    await writeFileAtomic(
      manifestPathIn(target),
      encodeManifest({ format: 1, snapshot: hold.snapshot, pending: null, segments }),
    );
    out.files++;
    // What the copy holds, read back as a start would (it also proves every frame whole).
    const scan = await scanJournal({
      dir: journalDir,
      afterSeq: snapshotSeq,
      listed: segments,
      replay: () => undefined,
    });
    // History after the journal: an execution archived since is in it (a duplicate of one still
    // live in the copy's state is harmless); one archived before was written there before the
    // record that removed it from the state.
    const historyDir = join(target, 'history');
    await mkdir(historyDir, { mode: DIR_MODE });
    const ends = await source.history.durableEnds();
    const liveHistory = join(source.dataDir, 'history');
    const names = await readdir(liveHistory).catch((err: NodeJS.ErrnoException) => {
      if (err.code === 'ENOENT') return [];
      throw err;
    });
    for (const name of names.sort()) {
      const bucket = BUCKET_RE.exec(name)?.[1];
      if (bucket === undefined) continue; // `.open` markers, temporary files
      await copyPrefix(join(liveHistory, name), join(historyDir, name), ends.get(bucket) ?? null, out, {
        wholeLines: true,
      });
    }
    // The file store's blobs: immutable, named by their hash, each written before the record
    // that names it, so those the copied journal names are all here by now.
    const filesDirs = await copyBlobs(join(source.dataDir, 'files'), join(target, 'files'), out);
    for (const dir of filesDirs) await fsyncDir(dir);
    await fsyncDir(journalDir);
    await fsyncDir(historyDir);
    await fsyncDir(target);
    if (created === 'dir') await fsyncDir(dirname(target)); // the copy's own name
    return { directory: target, snapshotSeq, lastSeq: scan.lastSeq, files: out.files, bytes: out.bytes };
  } catch (err) {
    release();
    if (created === 'dir') await rm(target, { recursive: true, force: true }).catch(() => undefined);
    else if (created === 'contents') {
      for (const name of await readdir(target).catch(() => []))
        await rm(join(target, name), { recursive: true, force: true }).catch(() => undefined);
    }
    if (isWfxError(err) && err.code !== 'JOURNAL_CORRUPT' && err.code !== 'SNAPSHOT_CORRUPT') throw err;
    const message = err instanceof Error ? err.message : String(err);
    throw new WfxError('BACKUP_FAILED', `the backup to ${target} failed: ${message}`, {
      details: { directory: target },
      cause: err,
    });
  }
}

/** Counts what a backup writes. */
class Output {
  files = 0;
  bytes = 0;
}

/** Throws unless `target` is missing or an empty directory. */
async function checkTarget(target: string): Promise<'missing' | 'empty'> {
  const st = await lstat(target).catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT') return null;
    throw invalidTarget(target, err);
  });
  if (st === null) return 'missing';
  const notEmpty = new WfxError('BACKUP_TARGET_NOT_EMPTY', `${target} exists and is not an empty directory`, {
    details: { directory: target },
  });
  if (!st.isDirectory()) throw notEmpty;
  const entries = await readdir(target).catch((err: NodeJS.ErrnoException) => {
    throw invalidTarget(target, err);
  });
  if (entries.length > 0) throw notEmpty;
  return 'empty';
}

/** Creates `target` (0700) unless it is an empty directory already; says which, for cleaning up. */
async function createTarget(target: string): Promise<'dir' | 'contents'> {
  if ((await checkTarget(target)) === 'empty') return 'contents';
  try {
    await mkdir(target, { mode: DIR_MODE });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST')
      throw new WfxError('BACKUP_TARGET_NOT_EMPTY', `${target} exists`, { details: { directory: target } });
    throw invalidTarget(target, err as NodeJS.ErrnoException);
  }
  return 'dir';
}

function invalidTarget(target: string, err: NodeJS.ErrnoException): WfxError {
  return new WfxError(
    'BACKUP_TARGET_INVALID',
    `the backup directory ${target} cannot be created: ${err.code ?? err.message}`,
    {
      details: { directory: target, reason: err.code },
    },
  );
}

/**
 * Puts the snapshot at `to`: a hard link where the file system allows one (atomic, no bytes
 * copied; a replaced snapshot's blocks are freed only once no name has it), else a copy.
 */
/** Links (or copies) every blob of the file store at `from` into `to`; returns the directories made. */
async function copyBlobs(from: string, to: string, out: Output): Promise<string[]> {
  const made: string[] = [];
  const groups = await readdir(from).catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT') return [];
    throw err;
  });
  for (const group of groups.sort()) {
    if (!/^[0-9a-f]{2}$/.test(group)) continue; // tmp: work in progress
    const dir = join(to, group);
    await mkdir(dir, { recursive: true, mode: DIR_MODE });
    made.push(dir);
    for (const name of (await readdir(join(from, group))).sort()) {
      const info = await stat(join(from, group, name)).catch(() => null);
      if (info?.isFile()) await linkOrCopy(join(from, group, name), join(dir, name), info.size, out);
    }
  }
  if (made.length > 0) made.push(to);
  return made;
}

async function linkOrCopy(from: string, to: string, bytes: number, out: Output): Promise<void> {
  try {
    await link(from, to);
  } catch {
    // Another file system (EXDEV), or one without hard links.
    await copyPrefix(from, to, bytes, out);
    return;
  }
  out.files++;
  out.bytes += bytes;
}

/**
 * Copies the first `length` bytes of `from` (null: all of it) to a new file `to` (0600), a
 * mebibyte at a time, syncing as it goes (one large final fsync would stall the journal's
 * writes on the same disk). `wholeLines`: cut after the last LF (no line half-written by an
 * appender, no zeros written ahead).
 */
async function copyPrefix(
  from: string,
  to: string,
  length: number | null,
  out: Output,
  options: { wholeLines?: boolean } = {},
): Promise<void> {
  const src = await open(from, 'r');
  let dst: FileHandle | null = null;
  try {
    dst = await open(to, 'wx', FILE_MODE);
    const size = length ?? (await src.stat()).size;
    const buf = Buffer.allocUnsafe(Math.min(COPY_CHUNK, Math.max(size, 1)));
    let done = 0;
    let keep = 0;
    let unsynced = 0;
    while (done < size) {
      const { bytesRead } = await src.read(buf, 0, Math.min(buf.length, size - done), done);
      if (bytesRead === 0) break; // shorter than said: a closed segment's zeros cut meanwhile
      const chunk = buf.subarray(0, bytesRead);
      await dst.write(chunk, 0, bytesRead, done);
      const lf = chunk.lastIndexOf(0x0a);
      if (lf >= 0) keep = done + lf + 1;
      done += bytesRead;
      unsynced += bytesRead;
      if (unsynced >= SYNC_EVERY_BYTES) {
        await dst.datasync();
        unsynced = 0;
      }
    }
    const end = options.wholeLines ? keep : done;
    if (end < done) await dst.truncate(end);
    await dst.sync();
    out.files++;
    out.bytes += end;
  } finally {
    await dst?.close();
    await src.close();
  }
}
