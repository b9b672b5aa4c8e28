/**
 * What the metrics read from the daemon's parts that hold no count of their own: the history
 * files' size, a webhook delivery's verdict.
 */
import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { DeliveryRecord } from '../../shared/api/index.js';

/** Bytes of the files under `dir` (the JSON store's history), 0 when it cannot be read. */
export async function historyBytes(dir: string): Promise<number> {
  let total = 0;
  const entries = await readdir(dir, { recursive: true, withFileTypes: true }).catch(() => []);
  for (const e of entries) {
    if (!e.isFile()) continue;
    total += await stat(join(e.parentPath, e.name)).then(
      (s) => s.size,
      () => 0,
    );
  }
  return total;
}

/** A processed delivery's verdict: `started` executions, `refused` (signature, duplicate, refused as it came), or `ignored`. */
export function webhookVerdict(record: DeliveryRecord): 'started' | 'ignored' | 'refused' {
  if (record.startedInstanceIds.length > 0) return 'started';
  return record.refused !== undefined || !record.signatureOk ? 'refused' : 'ignored';
}
