import type { FileView } from '../../shared/api/index.js';

/**
 * A file of the file store: an upload, or a file a node made (voiceTask's audio). Its fields are
 * the wire's (FileView: the blob is named by its sha256; retention removes it at expiresAt unless
 * something still refers to it then), and what the state keeps besides.
 */
export interface StoredFile extends FileView {
  /**
   * The history buckets (YYYY-MM-DD) that finished executions naming this file were archived
   * into (`files.held`): retention keeps the file while any of them is still kept. Absent: none.
   */
  readonly inHistory?: readonly string[];
}

/** A fileId in any text: how executions, memory and messages refer to a file. */
export const FILE_ID_IN_TEXT = /file_[0-9a-f]{32}/g;

/** Adds to `into` every fileId in `text`. */
export function fileIdsInText(text: string, into: Set<string>): void {
  if (!text.includes('file_')) return;
  for (const m of text.matchAll(FILE_ID_IN_TEXT)) into.add(m[0]);
}

/**
 * Adds to `into` every fileId found in a string (value or key) anywhere inside the JSON data
 * `value`: what JSON.stringify and a scan of its text would find, without making the text.
 */
export function collectFileIds(value: unknown, into: Set<string>): void {
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const v = stack.pop();
    if (typeof v === 'string') fileIdsInText(v, into);
    else if (Array.isArray(v)) for (const item of v) stack.push(item);
    else if (typeof v === 'object' && v !== null)
      for (const key in v) {
        fileIdsInText(key, into);
        stack.push((v as Record<string, unknown>)[key]);
      }
  }
}
