/**
 * `wfx daemon backup` (POST /admin/backup): a consistent copy of a running daemon's data
 * directory, taken while it goes on serving. See docs/operations.md "Backups".
 */
import { link, mkdir, open, readdir, rm, stat, type FileHandle } from 'node:fs/promises';
import { basename, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { errorMessage, isWfxError, WfxError } from '../../shared/errors.js';
import { checkTarget, createPartial, publish, removeLeftovers } from './backup-target.js';
import { crashPoint } from '../store/crash-point.js';
import type { StoreLogger } from '../store/durable-store.js';
import { BUCKET_RE } from '../store/history-files.js';
import type { History } from '../store/history.js';
import { scanJournal, segmentName } from '../store/journal-scan.js';
import { encodeManifest, manifestPathIn } from '../store/manifest.js';
import { DIR_MODE, FILE_MODE, fsyncDir, SYNC_EVERY_BYTES, writeFileAtomic } from '../disk/durable-files.js';
import { IMAGE_NAME } from '../at-rest/segments/directory-image.js';
import { segmentsDirIn } from '../at-rest/segments/files.js';
import { snapshotPathIn } from '../store/snapshot-file.js';
import type { Store } from '../store/store.js';
import type { StoreHold } from '../store/store-options.js';
import type { BackupReport } from '../../shared/api/index.js';

/** What a backup holds (the answer of POST /admin/backup: the wire's type, shared/api). */
export type { BackupReport };

/** What a backup reads from: the running daemon's store and history, and its data directory. */
export interface BackupSource {
  readonly dataDir: string;
  readonly store: Pick<Store<unknown, unknown>, 'hold'>;
  readonly history: Pick<History, 'durableEnds'>;
  /** The audit trail's files (`<data-dir>/audit`, the history's format). */
  readonly audit: Pick<History, 'durableEnds'>;
  /** Told of the partial copies a crash left that this backup removed. */
  readonly logger?: Pick<StoreLogger, 'info'>;
}

/** Bytes read before they are written: the event loop never holds a large file. */
const COPY_CHUNK = 1 << 20;

/** Copies one part of the data directory beside the store into the copy `to`; makes its names durable. */
type CopyPart = (source: BackupSource, to: string, out: Output) => Promise<void>;

/**
 * What a backup copies beside the store (whose snapshot and journal go first, under the hold),
 * in order: the one list to extend when the data directory gains a file a copy must carry. Left
 * out on purpose: `bootstrap.key` (a secret), `daemon.json`, `daemon.lock`, `logs/`.
 */
const PARTS: readonly CopyPart[] = [copyHistory, copyAudit, copyBlobs];

/**
 * Copies the store and history of `source` into `target` (absolute; it must not exist or be an
 * empty directory, not a mount point; created 0700, files 0600): a data directory that opens with
 * everything acknowledged up to `lastSeq`. The copy is assembled beside `target`
 * (`<target>.partial-<pid>-<start>-<random>`, backup-target.ts), every file synced, its manifest
 * last, then renamed to `target`: a crash leaves no `target` or a whole one, and the next backup
 * to `target` removes the partial copy (`removedPartials`). A checkpoint is taken first and no
 * other runs until the journal is copied (Store.hold); the snapshot is hard-linked when it can be
 * (same file system), else copied; journal segments and history files are copied up to their
 * durable ends; then PARTS. Throws WfxError VALIDATION_ERROR (a relative path),
 * BACKUP_TARGET_NOT_EMPTY, BACKUP_TARGET_INVALID, BACKUP_FAILED (nothing partial left),
 * STORE_FAILED / STORE_CLOSED.
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
  await checkTarget(target); // before the checkpoint; the rename is the last word
  const removedPartials = await removeLeftovers(target);
  for (const directory of removedPartials)
    source.logger?.info({ directory }, 'backup: removed a partial copy a crash left beside the target');
  const partial = await createPartial(target);
  let held: StoreHold | null = null;
  const release = (): void => {
    held?.release();
    held = null;
  };
  try {
    const hold = await source.store.hold();
    held = hold;
    const out = new Output();
    const snapshotSeq = hold.snapshot?.seq ?? 0;
    if (hold.snapshot) await linkOrCopy(hold.snapshotPath, snapshotPathIn(partial), hold.snapshot.bytes, out);
    if (hold.executions.length > 0) {
      // The execution segments the snapshot lists: write-once files, linked like it.
      const executionsDir = segmentsDirIn(partial);
      await mkdir(executionsDir, { mode: DIR_MODE });
      for (const file of hold.executions)
        await linkOrCopy(file, join(executionsDir, basename(file)), (await stat(file)).size, out);
      await copyImage(segmentsDirIn(source.dataDir), executionsDir, out);
      await fsyncDir(executionsDir);
    }
    crashPoint('backup:snapshot');
    const journalDir = join(partial, 'journal');
    await mkdir(journalDir, { mode: DIR_MODE });
    for (const segment of hold.segments) {
      // A closed segment whole but for zeros its close may not have cut yet (frames are lines).
      await copyPrefix(segment.path, join(journalDir, segmentName(segment.first)), segment.bytes, out, {
        wholeLines: segment.bytes === null,
        point: 'backup:journal',
      });
    }
    release(); // the snapshot and the journal are copied: checkpoints may replace and retire them
    await fsyncDir(journalDir);
    crashPoint('backup:released');
    const segments = hold.segments.map((s) => s.first);
    // What the copy holds, read back as a start would (it also proves every frame whole).
    const scan = await scanJournal({
      dir: journalDir,
      afterSeq: snapshotSeq,
      listed: segments,
      replay: () => undefined,
    });
    for (const part of PARTS) await part(source, partial, out);
    // Last: a partial copy has no manifest, which a start and `wfx daemon check` refuse.
    const manifest = { format: 1, snapshot: hold.snapshot, pending: null, segments, lastSeq: scan.lastSeq } as const;
    await writeFileAtomic(manifestPathIn(partial), encodeManifest(manifest));
    out.files++;
    crashPoint('backup:synced'); // whole, synced, under its partial name
    await publish(partial, target);
    return {
      directory: target,
      snapshotSeq,
      lastSeq: scan.lastSeq,
      files: out.files,
      bytes: out.bytes,
      ...(removedPartials.length > 0 && { removedPartials }),
    };
  } catch (err) {
    release();
    await rm(partial, { recursive: true, force: true }).catch(() => undefined);
    if (isWfxError(err) && err.code !== 'JOURNAL_CORRUPT' && err.code !== 'SNAPSHOT_CORRUPT') throw err;
    const message = errorMessage(err);
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

/**
 * History, each bucket up to its appender's durable end, whole lines only. After the journal: an
 * execution archived since is in it (a duplicate of one still live in the copy's state is
 * harmless: the later copy wins); one archived before was written there before the record that
 * removed it from the state.
 */
function copyHistory(source: BackupSource, to: string, out: Output): Promise<void> {
  return copyDays(source.history, join(source.dataDir, 'history'), join(to, 'history'), out);
}

/** The audit trail's day files, as history's: each up to its durable end, whole lines only. */
function copyAudit(source: BackupSource, to: string, out: Output): Promise<void> {
  return copyDays(source.audit, join(source.dataDir, 'audit'), join(to, 'audit'), out);
}

/** Day files (history's format) of `liveHistory` into `historyDir`, each up to its durable end. */
async function copyDays(
  files: Pick<History, 'durableEnds'>,
  liveHistory: string,
  historyDir: string,
  out: Output,
): Promise<void> {
  await mkdir(historyDir, { mode: DIR_MODE });
  const ends = await files.durableEnds();
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
  await fsyncDir(historyDir);
}

/**
 * The file store's blobs, each linked (or copied): immutable, named by their hash, each written
 * before the record that names it, so those the copied journal names are all there by now.
 */
async function copyBlobs(source: BackupSource, copy: string, out: Output): Promise<void> {
  const from = join(source.dataDir, 'files');
  const to = join(copy, 'files');
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
  for (const dir of made) await fsyncDir(dir);
}

/**
 * The directory image, if the data directory has one: a start of the copy restores its execution
 * directory from it instead of reading every segment's index (decision 076). The image names the
 * segments it covers and their sizes, and a start uses it only if the copy's first listed
 * segments are those, whole: one a checkpoint outdated since, or one cut short because a refresh
 * renamed a new image into place between its size read and its copy, is left unused and written
 * again by that start.
 */
async function copyImage(fromDir: string, toDir: string, out: Output): Promise<void> {
  const from = join(fromDir, IMAGE_NAME);
  try {
    await linkOrCopy(from, join(toDir, IMAGE_NAME), (await stat(from)).size, out);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err; // none, or removed meanwhile
  }
}

/**
 * Puts the file `from` at `to`: a hard link where the file system allows one (atomic, no bytes
 * copied; a replaced snapshot's blocks are freed only once no name has it), else a copy.
 */
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
  options: { wholeLines?: boolean; point?: string } = {},
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
    if (size === 0 && options.point) crashPoint(options.point);
    while (done < size) {
      const { bytesRead } = await src.read(buf, 0, Math.min(buf.length, size - done), done);
      if (bytesRead === 0) break; // shorter than said: a closed segment's zeros cut meanwhile
      const chunk = buf.subarray(0, bytesRead);
      await dst.write(chunk, 0, bytesRead, done);
      const lf = chunk.lastIndexOf(0x0a);
      if (lf >= 0) keep = done + lf + 1;
      done += bytesRead;
      if (options.point) crashPoint(options.point); // a file copied in part
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
