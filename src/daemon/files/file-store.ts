/**
 * The file store: an organization's files (uploads, a voiceTask's audio) as content-addressed
 * blobs (blobs.ts: under `<data-dir>/files/`, or in PostgreSQL with `--store`), and their
 * metadata in the state (`files`, by fileId). A blob is durable BEFORE the `file.stored`
 * record that names it is journaled, so a journaled file always has its content; a crash in
 * between leaves a blob no record names, which the sweep removes. Two files with the same
 * content share one blob.
 *
 * Retention: a file expires `retentionMs` after it was stored; the sweep then deletes it unless
 * something still refers to it (by its fileId in any string): a live execution (running or
 * finished and not yet archived: variables, node waits, output, log; a cold one by the file
 * index, state/file-refs.ts, its document unread), a memory entry, a buffered
 * message, or a finished execution in history. History is not read: when an execution is
 * archived, the files it names are recorded with the bucket it went to (`files.held`,
 * engine/archive.ts), and the file is kept while that bucket is, i.e. until history retention
 * prunes the execution. A kept file is looked at again `retentionMs` later. A blob goes once no
 * file names it.
 */
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { WfxError } from '../../shared/errors.js';
import { ExecutionTable } from '../state/execution-table.js';
import { FileRefs } from '../state/file-refs.js';
import type { WfxRecord } from '../state/records.js';
import type { StoredFile, WfxState } from '../state/state.js';
import { collectFileIds } from '../state/stored-file.js';
import { keptBlobs } from '../state/webhook-log.js';
import type { DurableStore } from '../store/durable-store.js';
import type { HistoryStore } from '../store/history-store.js';
import { ensurePrivateDir } from '../disk/durable-files.js';
import { DiskBlobs, type Blob, type BlobContent, type Blobs } from '../store/blobs.js';

export type { Blob } from '../store/blobs.js';

/** The largest file accepted by default. */
export const DEFAULT_MAX_FILE_BYTES = 25 * 1024 * 1024;

/** Options of a FileStore. */
export interface FileStoreOptions {
  /** `<data-dir>/files`: its blobs unless `blobs` is given, and its `tmp/` for work in progress. */
  readonly dir: string;
  /** Where content lives (default: DiskBlobs in `dir`). */
  readonly blobs?: Blobs;
  readonly store: DurableStore<WfxState, WfxRecord>;
  /** The daemon's history: which buckets it still keeps (a file stays while one that names it is there). */
  readonly history: Pick<HistoryStore, 'buckets'>;
  /** Default DEFAULT_MAX_FILE_BYTES. */
  readonly maxBytes?: number;
  /** How long a file lives after it was stored (or last found in use). */
  readonly retentionMs: number;
  readonly now?: () => Date;
  /**
   * Makes the file index know the fileIds of executions not in memory that nobody read since
   * the start (Executions.learnColdFiles); false while it cannot: the sweep then deletes none.
   */
  readonly learnColdFiles?: () => Promise<boolean>;
}

/** A new fileId: `file_` and 32 random hex digits. */
export function newFileId(): string {
  return `file_${randomBytes(16).toString('hex')}`;
}

/** Keeps blobs on disk and their metadata in the store. One per daemon. */
export class FileStore {
  readonly maxBytes: number;
  /** Where work in progress is written (uploads, audio being made); its files are swept once old. */
  readonly tmpDir: string;
  private readonly now: () => Date;
  private readonly blobs: Blobs;

  constructor(private readonly options: FileStoreOptions) {
    this.maxBytes = options.maxBytes ?? DEFAULT_MAX_FILE_BYTES;
    this.tmpDir = join(options.dir, 'tmp');
    this.now = options.now ?? (() => new Date());
    this.blobs = options.blobs ?? new DiskBlobs(options.dir);
  }

  /**
   * Writes `content` as a blob, durable before this resolves. Throws PAYLOAD_TOO_LARGE past
   * `maxBytes` (nothing is left behind); I/O errors as they are.
   */
  async writeBlob(content: BlobContent): Promise<Blob> {
    return this.blobs.write(content, this.maxBytes);
  }

  /**
   * Stores an upload: its blob, then its metadata, durable before this resolves. Throws
   * PAYLOAD_TOO_LARGE.
   */
  async put(req: {
    readonly organization: string;
    readonly name: string;
    readonly mimeType: string;
    readonly content: BlobContent;
  }): Promise<StoredFile> {
    const blob = await this.writeBlob(req.content);
    const file = this.describe(req, blob);
    await this.options.store.commit({ type: 'file.stored', file });
    return file;
  }

  /** The metadata of a new file of `blob` (not recorded: the caller journals `file.stored`). */
  describe(
    req: { readonly organization: string; readonly name: string; readonly mimeType: string },
    blob: Blob,
  ): StoredFile {
    const now = this.now();
    return {
      fileId: newFileId(),
      organization: req.organization,
      name: req.name,
      mimeType: req.mimeType,
      bytes: blob.bytes,
      sha256: blob.sha256,
      createdAt: now.toISOString(),
      expiresAt: new Date(now.getTime() + this.options.retentionMs).toISOString(),
    };
  }

  /** The file `fileId` of `organization` (null: any organization, system callers), or undefined. */
  get(organization: string | null, fileId: string): StoredFile | undefined {
    const file = Object.hasOwn(this.options.store.state.files, fileId)
      ? this.options.store.state.files[fileId]
      : undefined;
    return file && (organization === null || file.organization === organization) ? file : undefined;
  }

  /** Every stored file, by fileId (the live state's: read, never change). */
  list(): Readonly<Record<string, StoredFile>> {
    return this.options.store.state.files;
  }

  /** A stream of the file's content. Throws FILE_NOT_FOUND when its blob is gone. */
  async read(file: StoredFile): Promise<Readable> {
    const content = await this.blobs.read(file.sha256);
    if (!content) throw missing(file);
    return content;
  }

  /** The content of blob `sha256` (hex) whole, or null when it is gone (a webhook delivery's kept body). */
  async readBlob(sha256: string): Promise<Buffer | null> {
    const content = await this.blobs.read(sha256);
    if (!content) return null;
    const chunks: Buffer[] = [];
    try {
      for await (const chunk of content) chunks.push(chunk as Buffer);
    } catch (err) {
      // Removed by a sweep between the look and the read: gone, as if never found.
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw err;
    }
    return Buffer.concat(chunks);
  }

  /** The content of a file as a Buffer (for nodes that read a file: transcription). */
  async readAll(file: StoredFile): Promise<Buffer> {
    const chunks: Buffer[] = [];
    for await (const chunk of await this.read(file)) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks);
  }

  /**
   * A path holding the file's content, for a program that reads a file; `release` once done (a
   * copy is removed then). Throws FILE_NOT_FOUND when its blob is gone.
   */
  async path(file: StoredFile): Promise<{ readonly path: string; release(): Promise<void> }> {
    await ensurePrivateDir(this.options.dir);
    await ensurePrivateDir(this.tmpDir);
    const found = await this.blobs.path(file.sha256, this.tmpDir);
    if (!found) throw missing(file);
    return found;
  }

  /** Where the blob of `sha256` lives on disk, when blobs are files (DiskBlobs: not with `--store`). */
  blobPath(sha256: string): string {
    return join(this.options.dir, sha256.slice(0, 2), sha256);
  }

  /** Deletes a file (an admin's request): its metadata now, its blob at the next sweep if no file shares it. */
  async delete(fileId: string): Promise<void> {
    await this.options.store.commit({ type: 'file.deleted', fileId });
  }

  /**
   * Retention: expired files nothing refers to (see the module's comment) are deleted, those
   * still referred to are kept another `retentionMs` (and forget the history buckets pruned
   * since), and blobs no file names (older than an hour) are removed.
   */
  async sweep(): Promise<{ deleted: number; kept: number; blobs: number }> {
    const now = this.now();
    const isExpired = (f: StoredFile) => Date.parse(f.expiresAt) <= now.getTime();
    // Read before the history's buckets are listed: a bucket recorded later (an execution
    // archived during the listing) may be missing from the list, and is not taken as pruned.
    const heldBefore = new Map<string, ReadonlySet<string>>();
    for (const f of Object.values(this.options.store.state.files))
      if (isExpired(f) && f.inHistory) heldBefore.set(f.fileId, new Set(f.inHistory));
    const kept = heldBefore.size > 0 ? new Set(await this.options.history.buckets()) : new Set<string>();
    const state = this.options.store.state;
    // Executions not in memory whose fileIds are unknown yet are read first: until then, none is deleted.
    const whole = Object.values(state.files).some(isExpired) ? await (this.options.learnColdFiles?.() ?? true) : true;
    // From here to the commit nothing awaits: the references found are those the records meet.
    const expired = Object.values(state.files).filter(isExpired);
    const unknown = !whole || FileRefs.held(state)?.coldUnread === true;
    const inUse = expired.length > 0 ? referencedFiles(state) : new Set<string>();
    const records: WfxRecord[] = [];
    let keptFiles = 0;
    for (const f of expired) {
      const before = heldBefore.get(f.fileId);
      const inHistory = f.inHistory?.filter((bucket) => kept.has(bucket) || !before?.has(bucket));
      if (unknown || inUse.has(f.fileId) || (inHistory !== undefined && inHistory.length > 0)) {
        keptFiles++;
        const expiresAt = new Date(now.getTime() + this.options.retentionMs).toISOString();
        records.push({ type: 'file.kept', fileId: f.fileId, expiresAt, ...(inHistory && { inHistory }) });
      } else records.push({ type: 'file.deleted', fileId: f.fileId });
    }
    if (records.length > 0) await this.options.store.commit(...records);
    const blobs = await this.removeOrphans(now);
    return { deleted: records.length - keptFiles, kept: keptFiles, blobs };
  }

  /**
   * Removes blobs no file names and no webhook delivery keeps, once older than the grace period
   * (and leftover work in progress).
   */
  private async removeOrphans(now: Date): Promise<number> {
    const state = this.options.store.state;
    const files = (): StoredFile[] => Object.values(state.files);
    const named = new Set(files().map((f) => f.sha256));
    for (const blob of keptBlobs(state)) named.add(blob);
    // Looked at again for a blob not in the set: a file stored (or a delivery kept) since the set was made may name it.
    const removed = await this.blobs.removeOrphans(
      (sha256) => named.has(sha256) || files().some((f) => f.sha256 === sha256) || keptBlobs(state).has(sha256),
      now,
    );
    return (
      removed +
      (this.blobs instanceof DiskBlobs ? 0 : await new DiskBlobs(this.options.dir).removeOrphans(() => true, now))
    );
  }
}

function missing(file: StoredFile): WfxError {
  return new WfxError('FILE_NOT_FOUND', `the content of file ${file.fileId} is missing from the file store`);
}

/**
 * The fileIds the live state refers to, in any string: live executions (running, or finished
 * and not yet archived; variables, node waits, output and log alike; those not resident as the
 * file index has them, their documents unread), memory entries, buffered messages, thrown
 * events not yet given to every daemon. History is not read (see `files.held`). Pure; walks the
 * values without serializing them.
 */
export function referencedFiles(state: WfxState): Set<string> {
  const found = new Set<string>();
  for (const inst of ExecutionTable.of(state).live()) collectFileIds(inst, found);
  FileRefs.held(state)?.notResident(found);
  collectFileIds(state.memory, found);
  collectFileIds(state.messages, found);
  collectFileIds(state.thrown, found);
  return found;
}
