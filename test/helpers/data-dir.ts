import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { adoptDataDir, checkDataDir } from '../../src/daemon/ops/check.js';

/**
 * Stands `dir` in for a directory a wfx from before manifests wrote, whose files a test edited:
 * drops its manifest, then adopts what is there as `wfx daemon check --adopt` does (a manifest
 * vouching for the files as they are, edits included). Throws when the check finds more than the
 * missing manifest.
 */
export async function adoptAsIs(dir: string): Promise<void> {
  await rm(join(dir, 'store.manifest'), { force: true });
  const findings = await checkDataDir(dir);
  if (findings.length === 0) return; // nothing there a manifest must vouch for
  if ((await adoptDataDir(dir, findings)) === null)
    throw new Error(`${dir} cannot be adopted: ${JSON.stringify(findings)}`);
}
