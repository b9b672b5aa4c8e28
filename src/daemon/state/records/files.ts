/**
 * Records of stored files and memory: a file's blob stored, kept while something refers to it,
 * held by history buckets, deleted; a memory entry set or removed.
 */
import { writeMemory, type MemoryEntry } from '../memory.js';
import type { StoredFile } from '../state.js';
import type { Handlers } from './handlers.js';

/** The records of files and memory (WfxRecord). */
export type FileRecord =
  /** A file's blob is durable and this names it (an upload, or a node's file in the step of its completion). */
  | { readonly type: 'file.stored'; readonly file: StoredFile }
  /**
   * A file is kept until `expiresAt` (something still refers to it); `inHistory`, when given,
   * replaces its history buckets (those retention has pruned are dropped).
   */
  | {
      readonly type: 'file.kept';
      readonly fileId: string;
      readonly expiresAt: string;
      readonly inHistory?: readonly string[];
    }
  /** Finished executions archived into history bucket `bucket` name these files: kept while it is. */
  | { readonly type: 'files.held'; readonly bucket: string; readonly fileIds: readonly string[] }
  /** A file was deleted (by retention or an admin); its blob goes once no file names it. */
  | { readonly type: 'file.deleted'; readonly fileId: string }
  /**
   * A memory entry was set (`entry`) or removed (null): by a memoryAction or an aiTask's chat
   * memory in the same step as its node's completion, by the admin API, or by GC once expired.
   */
  | {
      readonly type: 'memory.written';
      readonly organization: string;
      readonly namespace: string;
      readonly key: string;
      readonly entry: MemoryEntry | null;
    };

/** The reducer's part for files and memory (records.ts). */
export const fileHandlers: Handlers<FileRecord> = {
  'file.stored': (state, r) => {
    state.files[r.file.fileId] = r.file;
  },
  'file.kept': (state, r) => {
    const file = state.files[r.fileId];
    if (!file) return;
    if (r.inHistory === undefined) state.files[r.fileId] = { ...file, expiresAt: r.expiresAt };
    else {
      const { inHistory: _dropped, ...rest } = file;
      state.files[r.fileId] = {
        ...rest,
        expiresAt: r.expiresAt,
        ...(r.inHistory.length > 0 && { inHistory: r.inHistory }),
      };
    }
  },
  'files.held': (state, r) => {
    for (const fileId of r.fileIds) {
      const file = Object.hasOwn(state.files, fileId) ? state.files[fileId] : undefined;
      if (!file || file.inHistory?.includes(r.bucket)) continue;
      state.files[fileId] = { ...file, inHistory: [...(file.inHistory ?? []), r.bucket] };
    }
  },
  'file.deleted': (state, r) => {
    delete state.files[r.fileId];
  },
  'memory.written': (state, r) => {
    writeMemory(state.memory, r, r.entry);
  },
};
