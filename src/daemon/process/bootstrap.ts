/** The first start of an empty data directory or database: organization `default` and its admin key. */
import { readdir } from 'node:fs/promises';
import type { Logger } from 'pino';
import { WfxError } from '../../shared/errors.js';
import { newApiKey } from '../auth/api-keys.js';
import type { WfxRecord } from '../state/records.js';
import type { WfxState } from '../state/state.js';
import { writeFileAtomic } from '../disk/durable-files.js';
import { BUCKET_RE } from '../store/history-files.js';
import type { RecordStore } from '../store/record-store.js';

/**
 * On the first start of an empty data directory: creates organization `default` and an admin
 * system key, written to `bootstrap.key` (0600). The key file is written before the records are
 * committed, so a crash in between leaves an empty store, and the next start makes a new key.
 * The key itself is never logged. An empty store beside history files is not a first start but a
 * directory that lost its state (snapshot, manifest and journal all gone): that start is refused
 * with DATA_DIR_DAMAGED rather than begun anew over the history and the key.
 */
export async function bootstrap(
  store: RecordStore<WfxState, WfxRecord>,
  paths: { bootstrapKey: string; history: string },
  logger: Logger,
): Promise<void> {
  if (Object.keys(store.state.organizations).length > 0) return;
  const keyFile = paths.bootstrapKey;
  const buckets = (await readdir(paths.history).catch(() => [] as string[])).filter((name) => BUCKET_RE.test(name));
  if (buckets.length > 0) {
    throw new WfxError(
      'DATA_DIR_DAMAGED',
      `the data directory has no state (no snapshot, manifest or journal) but ${buckets.length} history file(s) in ${paths.history}: its state was lost, not created`,
      {
        details: { file: paths.history },
      },
    );
  }
  const { key, apiKey } = newApiKey({ name: 'bootstrap', organization: null, role: 'admin', at: new Date() });
  await writeFileAtomic(keyFile, `${apiKey}\n`);
  await store.commit(
    { type: 'organization.created', name: 'default', at: key.createdAt },
    { type: 'apiKey.created', key },
  );
  const keyId = key.keyId;
  logger.info({ keyId, file: keyFile }, 'first start: created organization "default" and a bootstrap admin key');
}
