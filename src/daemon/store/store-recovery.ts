/**
 * Opening the JSON store's directory (Store.open): the snapshot loaded, the journal after it
 * replayed, a torn tail cut and the directory's manifest written. Only what the Store is then
 * built from outlives it: the snapshot as loaded is dropped here (it holds what recovery
 * replaces, such as the subscription index, for the daemon's lifetime otherwise).
 */
import { join } from 'node:path';
import { WfxError } from '../../shared/errors.js';
import { ensurePrivateDir } from '../disk/durable-files.js';
import { crashPoint } from './crash-point.js';
import { Journal } from './journal.js';
import type { ReplayReport } from './journal-scan.js';
import { checkSnapshot, Manifest, readManifest, refuseUnlisted } from './manifest.js';
import type { StoreSegments } from './at-rest-port.js';
import { silentLogger } from './record-store.js';
import { DurableJsonFile, readFileBytes, snapshotPathIn } from './snapshot-file.js';
import { layoutOf, type SnapshotLayout } from './snapshot-index.js';
import type { SnapshotFile, StoreOptions } from './store-options.js';

/** What opening a store's directory recovered: what the Store is built from. */
export interface Recovered<S, R> {
  readonly journal: Journal<R[]>;
  /** The live state: the snapshot's, the journal after it applied. */
  readonly state: S;
  /** What recovery found (Store.recovery). */
  readonly recovery: ReplayReport & { readonly snapshotSeq: number };
  /** The size of the snapshot loaded (0: none). */
  readonly snapshotBytes: number;
  readonly manifest: Manifest;
  /** The loaded snapshot's layout, to index it for the next checkpoint (snapshotCollection only; else null). */
  readonly layout: SnapshotLayout | null;
  /** The entries of the large collection the journal changed after the snapshot, and adds one. */
  readonly changed: Set<string>;
  readonly change: (key: string) => void;
  /**
   * The execution segments in effect (snapshotCollection.summarize only; else null). With a
   * snapshot of format 1 (or none), none yet, and `changed` holds every entry: the first
   * checkpoint writes them all into the first segment.
   */
  readonly segments: StoreSegments | null;
}

/**
 * Loads the snapshot in `options.dir` and replays the journal after it (Store.open says what it
 * throws). The directory then says what it holds in its manifest.
 */
export async function recoverStore<S, R>(options: StoreOptions<S, R>): Promise<Recovered<S, R>> {
  await ensurePrivateDir(options.dir);
  const listed = await readManifest(options.dir);
  const bytes = await (options.snapshotBytes ?? readFileBytes(snapshotPathIn(options.dir)));
  if (listed === null) await refuseUnlisted(options.dir, bytes);
  const mark = checkSnapshot(options.dir, listed?.snapshot ?? null, listed?.pending ?? null, listed !== null, bytes);
  // No snapshot yet (or one that holds a falsy JSON value): the empty store.
  const snapshot = (await new DurableJsonFile<SnapshotFile<S>>(
    snapshotPathIn(options.dir),
    Promise.resolve(bytes),
  ).read()) || {
    format: 1,
    seq: 0,
    savedAt: new Date(0).toISOString(),
    state: options.initialState(),
  };
  const snapshotBytes = bytes?.length ?? 0;
  const large = options.snapshotCollection;
  const listedSegments = snapshot.format === 2 ? snapshot.executions?.segments : [];
  if (
    (snapshot.format !== 1 && snapshot.format !== 2) ||
    !Number.isSafeInteger(snapshot.seq) ||
    snapshot.state === undefined ||
    !Array.isArray(listedSegments) ||
    (snapshot.format === 2 && !large)
  ) {
    throw new WfxError('SNAPSHOT_CORRUPT', `${snapshotPathIn(options.dir)} is not a wfx snapshot`);
  }
  const summarized = large?.summarize !== undefined;
  const layout = large && !summarized ? layoutOf(snapshot, large.key) : null;
  // Entries the journal changes after the snapshot: their bytes in it are out of date.
  const changed = new Set<string>();
  const change = (key: string): void => void changed.add(key);
  // Collections added since the snapshot was written start empty (top-level merge).
  const state = Object.assign(options.initialState() as object, snapshot.state) as S;
  if (options.derived?.length) {
    // Derived keys as an empty store has them, whatever an older snapshot held.
    const initial = options.initialState() as Record<string, unknown>;
    for (const key of options.derived) (state as Record<string, unknown>)[key] = initial[key];
  }
  // The executions back into the state before the journal after them is replayed; a format-1
  // snapshot's own, and any segment files a crash left unlisted, removed.
  let segments: StoreSegments | null = null;
  const lazy = options.lazy === true && summarized && snapshot.format === 2 && large.adopt !== undefined;
  if (large && (summarized || snapshot.format === 2)) {
    const collection = ((state as Record<string, unknown>)[large.key] ??= {}) as Record<string, unknown>;
    const atRest = options.segments;
    if (atRest === undefined)
      throw new WfxError('INTERNAL_ERROR', 'a store that keeps its executions in segments is opened without them');
    segments = lazy
      ? await atRest.openLazy(options.dir, listedSegments as number[], {
          live: liveHint(snapshot.executions?.live),
          ...(options.imageMin !== undefined && { imageMin: options.imageMin }),
          ...(options.logger && { logger: options.logger }),
        })
      : await atRest.open(options.dir, listedSegments as number[], collection);
    if (options.maxListedSegments !== undefined) segments.maxListed = options.maxListedSegments;
  }
  // Lazy: an entry left unread is read (synchronously, one positioned read) just before the
  // first record of the replay that changes it.
  const unread = lazy ? segments!.unread! : null;
  const readBack = (key: string): void => {
    if (!unread!.has(key)) return;
    large!.adopt!(state as object, segments!.readSync(key));
    segments!.adopt(key);
    unread!.remove(key);
  };
  const manifest = new Manifest(options.dir, {
    format: 1,
    snapshot: mark && { ...mark, seq: snapshot.seq },
    pending: null,
    segments: [],
  });
  const { journal, report } = await Journal.open<R[]>({
    dir: join(options.dir, 'journal'),
    afterSeq: snapshot.seq,
    listed: listed?.segments ?? null,
    through: listed?.lastSeq ?? null,
    onSegment: (segments) => {
      manifest.content = { ...manifest.content, segments: [...segments] };
      return manifest.save();
    },
    replay: (_seq, records) => {
      for (const record of records) {
        if (unread) large!.touched(record, readBack);
        if (layout || segments) large!.touched(record, change);
        options.apply(state, record);
      }
    },
  });
  const logger = options.logger ?? silentLogger;
  // The directory now says what it holds: initialized (a new one), or a checkpoint's pending
  // snapshot found in place; a backup's `lastSeq` is dropped (the journal grows from here).
  if (listed === null)
    logger.info(
      { snapshot: bytes !== null, segments: journal.segmentCount },
      "store: wrote the data directory's manifest",
    );
  crashPoint('recovery:replayed'); // a torn tail cut already, the manifest not yet written
  await journal.ensureCurrentSegment();
  manifest.content = { ...manifest.content, segments: [...journal.segmentList] };
  await manifest.save();
  if (report.truncated) {
    logger.warn(report.truncated, 'journal: cut off a torn entry at the end (a crash during a write)');
  }
  segments?.doneReadingSync();
  logger.info(
    { snapshotSeq: snapshot.seq, replayed: report.replayed, ...(unread && { unread: unread.size }) },
    'store: recovered',
  );
  if (segments && snapshot.format === 1)
    for (const key of Object.keys((state as Record<string, unknown>)[large!.key] as object)) changed.add(key);
  return {
    journal,
    state,
    recovery: { ...report, snapshotSeq: snapshot.seq },
    snapshotBytes,
    manifest,
    layout,
    changed,
    change,
    segments: summarized ? segments : null,
  };
}

/** A snapshot's count of live executions when it is one (a hint: anything else is ignored). */
function liveHint(live: unknown): number | undefined {
  return Number.isSafeInteger(live) && (live as number) >= 0 ? (live as number) : undefined;
}
