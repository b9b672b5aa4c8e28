import { open, readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { crc32 } from 'node:zlib';
import { WfxError } from '../../shared/errors.js';
import { writeFileAtomic } from '../disk/durable-files.js';
import { SEGMENT_RE } from './journal-scan.js';
import { snapshotPathIn } from './snapshot-file.js';

/** Where a store in `dir` keeps its manifest. */
export function manifestPathIn(dir: string): string {
  return join(dir, 'store.manifest');
}

/** A snapshot as the manifest knows it: what a checkpoint wrote, checked at the next open. */
export interface SnapshotMark {
  /** The journal entry the snapshot covers. */
  readonly seq: number;
  /** Its size in bytes. */
  readonly bytes: number;
  /** CRC-32 of all its bytes. */
  readonly crc32: number;
}

/**
 * What a store's directory should contain, as RocksDB's MANIFEST or PostgreSQL's control file
 * record it: that the directory was initialized, its snapshot, and its live journal segments.
 * Its existence alone says the directory holds a store, so a start that finds the snapshot gone
 * refuses instead of starting empty over the history and credentials beside it.
 */
export interface ManifestContent {
  readonly format: 1;
  /** The snapshot in place, or null while the store has none (no checkpoint yet). */
  readonly snapshot: SnapshotMark | null;
  /**
   * A snapshot a checkpoint has written and synced but may not have renamed into place yet:
   * after a crash, `snapshot.json` is either `snapshot` or this one, and both are sound.
   */
  readonly pending: SnapshotMark | null;
  /**
   * First sequence numbers of the journal segments that may hold entries after `snapshot`, oldest
   * first. Each exists on disk (empty at worst) before it is listed, and is listed before any
   * of its entries is acknowledged: a listed segment missing is lost data.
   */
  readonly segments: readonly number[];
  /**
   * A backup's manifest only (src/daemon/backup.ts): the last journal entry the copy holds. A
   * journal that ends before it was cut short (JOURNAL_CORRUPT), never a torn write to cut. A
   * store's own manifest has none: its journal grows after each save.
   */
  readonly lastSeq?: number;
}

/**
 * The manifest's text: one line, `<crc32 of the JSON as 8 hex digits> <JSON>\n`, as a journal
 * frame is checked, so a flipped bit or a cut is caught before anything trusts it.
 */
export function encodeManifest(content: ManifestContent): string {
  const json = JSON.stringify(content);
  return `${crc32(json).toString(16).padStart(8, '0')} ${json}\n`;
}

/**
 * Reads the manifest of the store in `dir`: null when there is none (a new directory, unless
 * refuseUnlisted finds otherwise). Throws WfxError DATA_DIR_DAMAGED, naming the file, when
 * it is there but does not check out.
 */
export async function readManifest(dir: string): Promise<ManifestContent | null> {
  const path = manifestPathIn(dir);
  const text = await readFile(path, 'utf8').catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT') return null;
    throw err;
  });
  if (text === null) return null;
  const damaged = (why: string): WfxError =>
    new WfxError('DATA_DIR_DAMAGED', `${path} is damaged: ${why}`, { details: { file: path } });
  const match = /^([0-9a-f]{8}) (.*)\n$/s.exec(text);
  if (!match) throw damaged('not a manifest line');
  if (crc32(match[2]!) !== Number.parseInt(match[1]!, 16)) throw damaged('its checksum does not match');
  let content: ManifestContent;
  try {
    content = JSON.parse(match[2]!) as ManifestContent;
  } catch {
    throw damaged('not JSON');
  }
  if (content.format !== 1 || !Array.isArray(content.segments)) throw damaged('not a format-1 manifest');
  if (content.lastSeq !== undefined && !(Number.isSafeInteger(content.lastSeq) && content.lastSeq >= 0))
    throw damaged('its lastSeq is not a sequence number');
  return content;
}

/**
 * For a directory without a manifest (readManifest gave null): throws WfxError DATA_DIR_DAMAGED,
 * naming the missing manifest (details.file) and what shows a store was there (details.found),
 * when it holds a snapshot (`snapshotBytes` not null) or a journal segment with anything but
 * zeros in it. A store writes its manifest before its first entry, so such a directory lost it,
 * or is a copy cut short, and may lack acknowledged entries; one a wfx from before manifests
 * wrote is adopted by hand (`wfx daemon check --adopt`). Otherwise the directory is new, or its
 * first start stopped before writing the manifest: nothing in it was acknowledged.
 */
export async function refuseUnlisted(dir: string, snapshotBytes: Buffer | null): Promise<void> {
  const found = snapshotBytes !== null ? snapshotPathIn(dir) : await firstJournalData(join(dir, 'journal'));
  if (found === null) return;
  const path = manifestPathIn(dir);
  throw new WfxError(
    'DATA_DIR_DAMAGED',
    `${path} is missing, yet ${found} holds a store: the manifest was lost, or this is a copy cut short (a backup interrupted by a crash), which may lack acknowledged entries`,
    { details: { file: path, found } },
  );
}

/**
 * The first journal segment in `dir` that holds anything but zeros (null: none, or no such
 * directory): whether a journal was ever written there. Reads up to that byte only.
 */
async function firstJournalData(dir: string): Promise<string | null> {
  const names = await readdir(dir).catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT') return [];
    throw err;
  });
  const buf = Buffer.alloc(1 << 16);
  for (const name of names.filter((n) => SEGMENT_RE.test(n)).sort()) {
    const path = join(dir, name);
    const fh = await open(path, 'r');
    try {
      for (let at = 0; ;) {
        const { bytesRead } = await fh.read(buf, 0, buf.length, at);
        if (bytesRead === 0) break;
        if (buf.subarray(0, bytesRead).some((b) => b !== 0)) return path;
        at += bytesRead;
      }
    } finally {
      await fh.close();
    }
  }
  return null;
}

/**
 * The manifest of one open store. `save` writes what it holds now (tmp + fsync + rename +
 * directory fsync); saves are made one after the other, each with the content as of its turn,
 * so the file never goes back to an older content than one already written.
 */
export class Manifest {
  private chain: Promise<void> = Promise.resolve();

  constructor(
    private readonly dir: string,
    /** What the file should say; change it, then `save`. */
    public content: ManifestContent,
  ) {}

  /** Durably writes the content as of when this save's turn comes; rejects if the write fails. */
  save(): Promise<void> {
    const next = this.chain.then(() => writeFileAtomic(manifestPathIn(this.dir), encodeManifest(this.content)));
    this.chain = next.catch(() => undefined);
    return next;
  }

  /** Resolves once every save asked for so far has settled. */
  settled(): Promise<void> {
    return this.chain;
  }
}

/** The CRC-32 and size of a snapshot's bytes. */
export function markOf(seq: number, bytes: Buffer): SnapshotMark {
  return { seq, bytes: bytes.length, crc32: crc32(bytes) };
}

/**
 * Checks `snapshot.json`'s bytes (null: none) against the manifest and returns their mark (null:
 * none). The checksum lives in the manifest rather than in a trailer of the snapshot, so the
 * snapshot stays plain JSON and its layout's offsets unchanged; the manifest's `pending` covers
 * the crash between the new snapshot's rename and the manifest naming it. Without a manifest
 * (`initialized` false) there is nothing to check against. Throws WfxError DATA_DIR_DAMAGED
 * when an initialized directory has lost a snapshot it had, SNAPSHOT_CORRUPT when the bytes are
 * not a snapshot the manifest knows.
 */
export function checkSnapshot(
  dir: string,
  listed: SnapshotMark | null,
  pending: SnapshotMark | null,
  initialized: boolean,
  bytes: Buffer | null,
): SnapshotMark | null {
  const path = snapshotPathIn(dir);
  if (bytes === null) {
    if (listed !== null) {
      throw new WfxError(
        'DATA_DIR_DAMAGED',
        `${path} is missing: the store's manifest says the data directory has one (seq ${listed.seq})`,
        {
          details: { file: path },
        },
      );
    }
    return null;
  }
  const mark = markOf(0, bytes);
  if (!initialized) return mark;
  const known = [listed, pending].find((m) => m !== null && m.bytes === mark.bytes && m.crc32 === mark.crc32);
  if (!known) {
    throw new WfxError('SNAPSHOT_CORRUPT', `${path} does not match the checksum the store's manifest holds for it`, {
      details: { file: path, bytes: mark.bytes, expectedBytes: listed?.bytes ?? pending?.bytes ?? null },
    });
  }
  return known;
}
