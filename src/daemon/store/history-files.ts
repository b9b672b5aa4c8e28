/**
 * The names of the history directory's files: one `YYYY-MM-DD.jsonl` per day bucket, and a
 * `YYYY-MM-DD.open` marker beside a bucket while an appender has it open.
 */
import { join } from 'node:path';

/** A history bucket's file name; the bucket (YYYY-MM-DD) is group 1. */
export const BUCKET_RE = /^(\d{4}-\d{2}-\d{2})\.jsonl$/;

/** Marker of a bucket with an appender open: a crash may have torn its last write (see History). */
export function openMarkerPath(dir: string, bucket: string): string {
  return join(dir, `${bucket}.open`);
}
