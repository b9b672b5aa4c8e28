/**
 * `wfx daemon check`: reads a stopped data directory, changes nothing, and lists every problem
 * found with its file and byte offset. The CLI imports this module alone (lazily): it loads the
 * store's readers, not the daemon.
 */
import { access, open, readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { isWfxError, WfxError } from '../../shared/errors.js';
import { decodeFrames } from '../store/frame.js';
import { verifyHistory } from '../store/history-check.js';
import { scanJournal } from '../store/journal-scan.js';
import { lockOwnerPid } from '../store/lock.js';
import {
  checkSnapshot,
  encodeManifest,
  manifestPathIn,
  markOf,
  readManifest,
  refuseUnlisted,
  type ManifestContent,
} from '../store/manifest.js';
import { segmentsDirIn } from '../at-rest/segments/files.js';
import { verifySegments } from '../at-rest/segments/verify.js';
import { readFileBytes, snapshotPathIn } from '../store/snapshot-file.js';
import { writeFileAtomic } from '../disk/durable-files.js';

/** One problem in a data directory: the file, where in it (bytes) when known, a catalogue code. */
export interface Finding {
  readonly file: string;
  readonly offset?: number;
  readonly code: string;
  readonly message: string;
}

/**
 * One source of findings: reads what it checks in `dataDir` and returns every problem (none: an
 * empty list). Must not change anything on disk. Throws only when it cannot read at all.
 */
export type Checker = (dataDir: string) => Promise<Finding[]>;

/** A WfxError that names its file (details.file) as a finding; anything else is rethrown. */
function findingOf(err: unknown, fallbackFile: string): Finding {
  if (!isWfxError(err)) throw err;
  const details = (err.details ?? {}) as { file?: unknown; offset?: unknown };
  return {
    file: typeof details.file === 'string' ? details.file : fallbackFile,
    ...(typeof details.offset === 'number' && { offset: details.offset }),
    code: err.code,
    message: err.message,
  };
}

/**
 * The store's files: its manifest, its snapshot (parsed, and checked against the manifest's
 * checksum), and its journal segments (every frame read, as a start would, nothing cut). A torn
 * tail, which a start cuts with a warning, is not a finding.
 */
export const checkStore: Checker = async (dataDir) => {
  const findings: Finding[] = [];
  let manifest: ManifestContent | null = null;
  try {
    manifest = await readManifest(dataDir);
  } catch (err) {
    findings.push(findingOf(err, join(dataDir, 'store.manifest')));
  }
  const snapshotPath = snapshotPathIn(dataDir);
  let afterSeq = manifest?.snapshot?.seq ?? 0;
  const bytes = await readFileBytes(snapshotPath);
  if (manifest === null && findings.length === 0) {
    try {
      await refuseUnlisted(dataDir, bytes);
    } catch (err) {
      findings.push(findingOf(err, manifestPathIn(dataDir)));
    }
  }
  try {
    checkSnapshot(dataDir, manifest?.snapshot ?? null, manifest?.pending ?? null, manifest !== null, bytes);
  } catch (err) {
    findings.push(findingOf(err, snapshotPath));
  }
  let listed: unknown = [];
  if (bytes !== null) {
    try {
      const snapshot = JSON.parse(bytes.toString('utf8')) as {
        format?: unknown;
        seq?: unknown;
        state?: unknown;
        executions?: { segments?: unknown };
      };
      if (snapshot.format === 2) listed = snapshot.executions?.segments;
      if (
        (snapshot.format !== 1 && snapshot.format !== 2) ||
        !Array.isArray(listed) ||
        typeof snapshot.seq !== 'number' ||
        !Number.isSafeInteger(snapshot.seq) ||
        snapshot.state === undefined
      ) {
        throw new Error('not a wfx snapshot');
      }
      afterSeq = snapshot.seq;
    } catch (err) {
      findings.push({
        file: snapshotPath,
        code: 'SNAPSHOT_CORRUPT',
        message: `${snapshotPath} is not a wfx snapshot: ${(err as Error).message}`,
      });
    }
  }
  // The execution segments the snapshot lists (format 2): each against its index.
  const segmentsDir = segmentsDirIn(dataDir);
  for (const f of Array.isArray(listed) ? await verifySegments(segmentsDir, listed as number[]) : [])
    findings.push({
      file: join(segmentsDir, f.file),
      offset: f.offset,
      code: 'EXECUTION_SEGMENT_DAMAGED',
      message: f.message,
    });
  const journalDir = join(dataDir, 'journal');
  try {
    await scanJournal({
      dir: journalDir,
      afterSeq,
      listed: manifest?.segments ?? null,
      through: manifest?.lastSeq ?? null,
      replay: () => undefined,
    });
  } catch (err) {
    findings.push(findingOf(err, journalDir));
  }
  return findings;
};

/**
 * History's day files: every frame checked (verifyHistory). What a crash leaves of the write in
 * flight (HISTORY_TORN_WRITE: never acknowledged, cut or skipped at the next start) is not a
 * finding, as a torn journal tail is not.
 */
export const checkHistory: Checker = (dataDir) => checkDays(join(dataDir, 'history'));

/** The audit trail's day files, in history's format: checked as history's are. */
export const checkAudit: Checker = (dataDir) => checkDays(join(dataDir, 'audit'));

async function checkDays(dir: string): Promise<Finding[]> {
  const findings = await verifyHistory(dir);
  return findings
    .filter((f) => f.code !== 'HISTORY_TORN_WRITE')
    .map((f) => ({ file: join(dir, f.file), offset: f.offset, code: f.code, message: f.message }));
}

/** The checkers `checkDataDir` runs by default, in order. */
export const CHECKERS: readonly Checker[] = [checkStore, checkHistory, checkAudit];

/**
 * Checks the stopped data directory `dataDir` with each of `checkers` and returns all their
 * findings (empty: the directory is sound). Throws WfxError DATA_DIR_LOCKED while a live daemon
 * holds it (its files change under a reader), DATA_DIR_INVALID when it is not a directory.
 */
export async function checkDataDir(dataDir: string, checkers: readonly Checker[] = CHECKERS): Promise<Finding[]> {
  const pid = await lockOwnerPid(dataDir);
  if (pid !== null) {
    throw new WfxError('DATA_DIR_LOCKED', `a wfx daemon (pid ${pid}) holds ${dataDir}; stop it before checking`, {
      details: { pid },
    });
  }
  const st = await stat(dataDir).catch(() => null);
  if (!st?.isDirectory()) throw new WfxError('DATA_DIR_INVALID', `${dataDir} is not a data directory`);
  const findings: Finding[] = [];
  for (const checker of checkers) findings.push(...(await checker(dataDir)));
  return findings;
}

/** What `cutDamagedTail` cut: the file, from where, how many bytes, and the last entry kept. */
export interface Loss {
  readonly file: string;
  readonly offset: number;
  readonly bytes: number;
  /** The last whole entry before the cut (entries after it in that segment are gone); null when none. */
  readonly lastKeptSeq: number | null;
}

/**
 * `wfx daemon check --accept-loss`: when the only damage is a JOURNAL_CORRUPT finding in the last
 * journal segment, cuts that segment at the finding's offset (truncated and fsynced) and returns
 * what was cut; returns null, changing nothing, for any other set of findings (a missing file,
 * a damaged snapshot or manifest, damage in an older segment: those need a backup). The
 * directory must be stopped (DATA_DIR_LOCKED otherwise).
 */
export async function cutDamagedTail(dataDir: string, findings: readonly Finding[]): Promise<Loss | null> {
  if (findings.length !== 1 || findings[0]!.code !== 'JOURNAL_CORRUPT' || findings[0]!.offset === undefined)
    return null;
  const { file, offset } = findings[0]! as Finding & { offset: number };
  const journalDir = join(dataDir, 'journal');
  const last = (await readdir(journalDir))
    .filter((n) => n.endsWith('.wal'))
    .sort()
    .at(-1);
  if (last === undefined || join(journalDir, last) !== file) return null;
  const pid = await lockOwnerPid(dataDir);
  if (pid !== null)
    throw new WfxError('DATA_DIR_LOCKED', `a wfx daemon (pid ${pid}) holds ${dataDir}`, { details: { pid } });
  const bytes = await readFile(file);
  const kept = decodeFrames(bytes.subarray(0, offset), { keysOnly: true }).frames.at(-1);
  const fh = await open(file, 'r+');
  try {
    await fh.truncate(offset);
    await fh.sync();
  } finally {
    await fh.close();
  }
  // A backup's manifest said the journal went further: the loss accepted, it no longer does.
  const manifest = await readManifest(dataDir);
  if (manifest?.lastSeq !== undefined) {
    const { lastSeq: _said, ...rest } = manifest;
    await writeFileAtomic(manifestPathIn(dataDir), encodeManifest(rest));
  }
  return { file, offset, bytes: bytes.length - offset, lastKeptSeq: kept?.seq ?? null };
}

/**
 * `wfx daemon check --adopt`: when the only finding is the manifest missing (refuseUnlisted), writes
 * one for what the directory holds (its snapshot's size and CRC-32, its journal segments) and
 * returns it; returns null, changing nothing, for any other set of findings. For a directory a
 * wfx from before manifests wrote, or a copy known to be whole: the store then trusts what is
 * there. The directory must be stopped (DATA_DIR_LOCKED otherwise).
 */
export async function adoptDataDir(dataDir: string, findings: readonly Finding[]): Promise<ManifestContent | null> {
  const path = manifestPathIn(dataDir);
  if (findings.length !== 1 || findings[0]!.code !== 'DATA_DIR_DAMAGED' || findings[0]!.file !== path) return null;
  const missing = await access(path).then(
    () => false,
    (err: NodeJS.ErrnoException) => err.code === 'ENOENT',
  );
  if (!missing) return null; // there, but damaged: that needs a backup
  const pid = await lockOwnerPid(dataDir);
  if (pid !== null)
    throw new WfxError('DATA_DIR_LOCKED', `a wfx daemon (pid ${pid}) holds ${dataDir}`, { details: { pid } });
  const bytes = await readFileBytes(snapshotPathIn(dataDir));
  // The check found no other problem: the snapshot parses, and the journal reads through.
  const seq = bytes === null ? 0 : (JSON.parse(bytes.toString('utf8')) as { seq: number }).seq;
  const { segments } = await scanJournal({ dir: join(dataDir, 'journal'), afterSeq: seq, replay: () => undefined });
  let from = 0;
  while (from < segments.length - 1 && segments[from + 1]! - 1 <= seq) from++;
  const content: ManifestContent = {
    format: 1,
    snapshot: bytes === null ? null : markOf(seq, bytes),
    pending: null,
    segments: segments.slice(from),
  };
  await writeFileAtomic(path, encodeManifest(content));
  return content;
}
