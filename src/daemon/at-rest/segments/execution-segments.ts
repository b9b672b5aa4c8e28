/**
 * The large collection of the JSON store (its executions) kept in execution segments
 * (segments/, docs/decisions/070-execution-segments.md) instead of inside the snapshot: a
 * checkpoint writes the entries changed since the last one into one new segment, with the ids
 * removed since, and the snapshot lists the segments in effect. Opening reads every listed
 * segment's entries back into the state (eager: the lazy open builds on this).
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { WfxError } from '../../../shared/errors.js';
import { decodeFrames } from '../../store/frame.js';
import type {
  ImageOptions,
  LazyOpen,
  RefreshOptions,
  SegmentCheckpointStart,
  SegmentsAtRest,
  StoreSegments,
} from '../../store/at-rest-port.js';
import type { EvictableEntries } from '../../store/durable-store.js';
import { compactSegments, mergeRun } from './compact.js';
import {
  indexName,
  removeSegments,
  removeUnlisted,
  segmentDamaged,
  segmentName,
  segmentsDirIn,
  type Location,
} from './files.js';
import { readImage, removeImageLeftover, type Covered } from './directory-image.js';
import { loadSegmentsInto, openSegments } from './load.js';
import { ExecutionIndex } from '../../state/execution-index/execution-index.js';
import { SegmentReader } from './read.js';
import { SegmentSpace } from './space.js';
import { writeFrames, type SegmentFrame } from './write.js';
import { SegmentsImage } from './segments-image.js';
import { segmentCheckpoint, type Captured, type SegmentCopy, type SegmentsWritten } from './segment-copy.js';

/** Compaction starts once the dead bytes of the listed segments pass this share of their total. */
const COMPACT_DEAD_SHARE = 0.5;
/**
 * Past this many listed segments, the newest of similar size are merged (mergeRun): an open
 * reads one index per segment, and a daemon whose executions mostly wait leaves little dead
 * space to start a compaction by share.
 */
export const MAX_LISTED_SEGMENTS = 16;

/** The segments of one store directory in effect, where each entry's frame is, and their space. */
export class ExecutionSegments implements StoreSegments {
  readonly dir: string;
  private listed: number[];
  private readonly locations = new Map<string, Location>();
  private readonly space = new SegmentSpace();
  private readonly reader: SegmentReader;
  /**
   * The entries the open left unread (`openLazy`), their summaries and locations: where an
   * entry `locations` has not got is found. Its owner removes an entry once it has read it back
   * (`adopt` first), and may put there others it took out of memory.
   */
  unread: ExecutionIndex | null = null;
  /** The directory image of these segments (decision 076): what it covers, its writes. */
  private readonly image: SegmentsImage;
  /** Past this many listed segments, merges (StoreOptions.maxListedSegments). */
  maxListed = MAX_LISTED_SEGMENTS;

  private constructor(storeDir: string, listed: number[]) {
    this.dir = segmentsDirIn(storeDir);
    this.listed = listed;
    this.reader = new SegmentReader(this.dir);
    this.image = new SegmentsImage(this, this.locations);
  }

  /**
   * Opens the segments `listed` (a snapshot's list): removes the files of any other (left by a
   * crash or a compaction), loads their indexes and puts each live entry's document into
   * `collection`, in the order the entries were first written. Throws EXECUTION_SEGMENT_DAMAGED.
   */
  static async open(storeDir: string, listed: readonly number[], collection: Record<string, unknown>) {
    const segments = new ExecutionSegments(storeDir, [...listed]);
    const { locations, space } = segments;
    await openSegments(segments.dir, listed, space, {
      locate: (id) => locations.get(id),
      onEntry: (id, location) => void locations.set(id, location),
      onRemoved: (id) => void locations.delete(id),
    });
    const docs = new Map<string, unknown>();
    for (const segment of listed) {
      const file = join(segments.dir, segmentName(segment));
      const { frames, badOffset } = decodeFrames(await readFile(file));
      if (badOffset !== null) throw segmentDamaged(file, badOffset, 'a record fails its checksum');
      for (const f of frames) {
        const at = locations.get(f.key);
        if (at?.segment === segment && at.offset === f.offset) docs.set(f.key, f.value);
      }
    }
    for (const [id, at] of locations) {
      if (!docs.has(id))
        throw segmentDamaged(join(segments.dir, segmentName(at.segment)), at.offset, 'the index names no record');
      collection[id] = docs.get(id);
    }
    return segments;
  }

  /**
   * Opens the segments `listed` as `open` does but reads no document: each live entry's summary
   * and location go into `unread` (the index's columns straight into the directory's), and the
   * caller reads back what it needs (`readSync` during the replay, `read` after).
   */
  static async openLazy(storeDir: string, listed: readonly number[], o: LazyOpen = {}) {
    const segments = new ExecutionSegments(storeDir, [...listed]);
    const { dir, space } = segments;
    await removeUnlisted(dir, listed);
    await removeImageLeftover(dir);
    // The image of the first segments when there is one (decision 076), their indexes else.
    const image = await readImage(dir, listed);
    const unread = 'directory' in image ? image.directory : new ExecutionIndex();
    const covered = 'covered' in image ? image.covered : [];
    for (const c of covered) space.add(c.segment, c.bytes, c.dead);
    const rest = listed.slice(covered.length);
    const loaded = await loadSegmentsInto(dir, rest, space, unread, o.live);
    segments.unread = unread;
    o.logger?.info(
      { covered: covered.length, loaded: rest.length, image: 'why' in image ? image.why : 'used' },
      'store: execution directory opened',
    );
    segments.image.opened(image, unread, loaded, o);
    return segments;
  }

  /** Resolves once no image is being refreshed, nor one asked for (tests). */
  async imageRefreshed(): Promise<void> {
    await this.image.refreshed();
  }

  /** The listed segments as an image covering them records them. */
  covering(): Covered[] {
    return this.listed.map((n) => ({ segment: n, bytes: this.space.get(n)!.bytes, dead: this.space.get(n)!.dead }));
  }

  /** Leaves an image of every listed segment for the next open, once a close's last checkpoint is durable (SegmentsImage.leave). */
  leaveImage(state: object, o: ImageOptions): Promise<void> {
    return this.image.leave(state, o);
  }

  /** A store with no segment yet (a snapshot of format 1, or none). */
  static empty(storeDir: string): ExecutionSegments {
    return new ExecutionSegments(storeDir, []);
  }

  /** Where entry `id`'s last written frame is (in a listed segment, or the one a checkpoint under way writes), else undefined. */
  locationOf(id: string): Location | undefined {
    return this.locations.get(id) ?? this.unread?.locationOf(id) ?? undefined;
  }

  /** Keeps the location of unread entry `id` here, before its owner removes it from `unread` (it is read back). */
  adopt(id: string): void {
    if (this.locations.has(id)) return;
    const at = this.unread?.locationOf(id);
    if (at) this.locations.set(id, at);
  }

  /** `read`, synchronously (the open's replay): then call `adopt`. Throws as `read` does. */
  readSync(id: string): unknown {
    const at = this.locationOf(id);
    if (at === undefined) throw new WfxError('INTERNAL_ERROR', `no execution segment holds ${id}`);
    return this.reader.readSync(id, at);
  }

  /** Closes what `readSync` opened (the open is over). */
  doneReadingSync(): void {
    this.reader.closeSync();
  }

  /**
   * Reads entry `id`'s document from its last written frame (one positioned read). Throws
   * EXECUTION_SEGMENT_DAMAGED for a frame that fails its checks, INTERNAL_ERROR for an id no
   * segment holds. A compaction that moves the frame meanwhile is followed.
   */
  async read(id: string): Promise<unknown> {
    for (let attempt = 0; ; attempt++) {
      const at = this.locationOf(id);
      if (at === undefined) throw new WfxError('INTERNAL_ERROR', `no execution segment holds ${id}`);
      try {
        return await this.reader.read(id, at);
      } catch (err) {
        // Moved by a compaction between the lookup and the read (its old file removed): read it where it is now.
        if (attempt > 0 || sameLocation(this.locationOf(id), at)) throw err;
      }
    }
  }

  /**
   * The store's port for an owner that keeps entries out of memory (DurableStore.evictable):
   * `store.clean` says whether an entry is unchanged since a durable checkpoint; it must also
   * be in a segment. The owner puts what it takes out of memory in `unread`, the open's own or
   * a new one: a close's image (`leaveImage`) must find them there.
   */
  evictable(store: Omit<EvictableEntries, 'read' | 'unread'>): EvictableEntries {
    this.unread ??= new ExecutionIndex(16);
    return {
      ...store,
      clean: (key) => store.clean(key) && this.locationOf(key) !== undefined,
      read: async (key) => {
        const doc = await this.read(key);
        this.adopt(key);
        return doc;
      },
      unread: this.unread,
    };
  }

  /** Closes the files kept open for reads, once the directory image under way is written. */
  async close(): Promise<void> {
    await this.image.stop();
    await this.reader.close();
  }

  /** The segments in effect, oldest first. */
  get list(): readonly number[] {
    return this.listed;
  }

  /** The files of the listed segments (segment, then index), for a copy of the store. */
  files(): string[] {
    return this.listed.flatMap((n) => [join(this.dir, segmentName(n)), join(this.dir, indexName(n))]);
  }

  /**
   * Writes the entries `copy` captures (a slice at a time, `pause` between) as one new segment,
   * with the ids it found gone that a listed segment holds; then compacts the older segments when
   * their dead bytes pass the share. Nothing is in effect until a snapshot lists `listed`;
   * `retire(dropped)` once that snapshot is durable.
   */
  async write(
    copy: SegmentCopy,
    slice: () => Array<{ key: string; frame: Captured }>,
    pause: () => Promise<void>,
  ): Promise<SegmentsWritten> {
    if (copy.empty) return { listed: this.listed, dropped: [], bytes: 0, entries: 0 };
    const ids: string[] = [];
    const removed: string[] = [];
    const next = Math.max(0, ...this.listed) + 1;
    const locate = { has: (id: string) => this.locationOf(id) !== undefined };
    // Streamed: each slice's frames go to the file before the next slice is captured.
    const frames = async function* (): AsyncGenerator<SegmentFrame> {
      for (;;) {
        for (const { key, frame } of slice()) {
          if (frame) {
            ids.push(frame.id);
            yield frame;
          } else if (locate.has(key)) removed.push(key);
        }
        if (copy.done) return;
        await pause();
      }
    };
    const segmentsDir = this.dir;
    const locations = await writeFrames(segmentsDir, next, frames(), removed);
    if (ids.length === 0 && removed.length === 0) {
      // Nothing changed after all (entries created and removed since): no segment.
      await removeSegments(segmentsDir, [next]);
      return { listed: this.listed, dropped: [], bytes: 0, entries: 0 };
    }
    let bytes = 0;
    for (const l of locations) bytes += l.length;
    this.space.add(next, bytes);
    for (let i = 0; i < ids.length; i++) this.place(ids[i]!, locations[i]!);
    for (const id of removed) {
      const before = this.locationOf(id);
      if (before) this.space.supersede(before);
      this.locations.delete(id);
      this.unread?.remove(id);
    }
    this.listed = [...this.listed, next];
    const compacted = await this.compact(next);
    return { listed: this.listed, dropped: compacted.dropped, bytes: bytes + compacted.bytes, entries: ids.length };
  }

  /** Starts a checkpoint into a new segment of these (segment-copy.ts, segmentCheckpoint). */
  checkpoint(o: SegmentCheckpointStart) {
    return segmentCheckpoint({ ...o, segments: this });
  }

  private place(id: string, location: Location): void {
    const before = this.locationOf(id);
    if (before) this.space.supersede(before);
    this.locations.set(id, location);
  }

  /**
   * Compacts every segment older than `newest` into one once the dead bytes pass the share; else,
   * past `maxListed` listed, merges the newest run of similar size (mergeRun).
   */
  private async compact(newest: number): Promise<{ dropped: number[]; bytes: number }> {
    let total = 0;
    let dead = 0;
    for (const s of this.space.list()) {
      total += s.bytes;
      dead += s.dead;
    }
    let chosen = this.listed.filter((n) => n !== newest);
    const byShare = chosen.length > 0 && dead > total * COMPACT_DEAD_SHARE;
    if (!byShare) {
      const live = this.listed.map((n) => {
        const s = this.space.get(n);
        return s === undefined ? 0 : s.bytes - s.dead;
      });
      const keep = this.image.spared(this.listed);
      const from = mergeRun(live, this.maxListed, keep);
      if (from < 0) return { dropped: [], bytes: 0 };
      chosen = this.listed.slice(from);
      if (from < keep) this.image.outdate();
    }
    const target = Math.max(...this.listed) + 1;
    const { moved, listed } = await compactSegments(this.dir, this.listed, chosen, target, (id) => this.locationOf(id));
    let bytes = 0;
    for (const m of moved) {
      if (this.locations.has(m.id) || !this.unread?.relocate(m.id, m.location)) this.locations.set(m.id, m.location);
      bytes += m.location.length;
    }
    for (const n of chosen) this.space.drop(n);
    this.space.add(target, bytes);
    // The compacted segment takes the place of the newest chosen (before `newest`, unless chosen too).
    this.listed = listed;
    if (byShare) this.image.outdate();
    return { dropped: chosen, bytes };
  }

  /** Removes the files of segments a durable snapshot no longer lists; after a compaction that outdated the image, refreshes it (SegmentsImage.retired). */
  async retire(dropped: readonly number[], o: RefreshOptions): Promise<void> {
    if (dropped.length > 0) {
      for (const n of dropped) await this.reader.forget(n);
      await removeSegments(this.dir, dropped);
    }
    this.image.retired(o);
  }

  /** Bytes of the listed segments and how many of them are dead (tests, logs). */
  usage(): { bytes: number; dead: number } {
    let bytes = 0;
    let dead = 0;
    for (const s of this.space.list()) {
      bytes += s.bytes;
      dead += s.dead;
    }
    return { bytes, dead };
  }
}

/** The JSON store's execution segments (StoreOptions.segments): opened eagerly or lazily. */
export const SEGMENTS_AT_REST: SegmentsAtRest = {
  open: (storeDir, listed, collection) => ExecutionSegments.open(storeDir, listed, collection),
  openLazy: (storeDir, listed, o) => ExecutionSegments.openLazy(storeDir, listed, o),
};

/** Whether two locations name the same bytes. */
function sameLocation(a: Location | undefined, b: Location): boolean {
  return a !== undefined && a.segment === b.segment && a.offset === b.offset && a.length === b.length;
}
