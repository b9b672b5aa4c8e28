/**
 * The directory image of a store's execution segments (decision 076): which of the listed
 * segments the image on disk covers, the image an open writes (or removes), the ones written
 * while the daemon runs after a compaction outdated it (image-refresh.ts), and the one a close
 * leaves. The segments themselves, where each entry is and their space, are ExecutionSegments'
 * (execution-segments.ts); this reads them through ImagedSegments.
 */
import type { LazyOpen, ImageOptions, RefreshOptions } from '../../store/at-rest-port.js';
import { ExecutionIndex } from '../../state/execution-index/execution-index.js';
import type { Location } from './files.js';
import { removeImage, takeImage, writeImage, type Covered, type ReadImage } from './directory-image.js';
import { ImageRefresh } from './image-refresh.js';
import type { ImageJob } from './image-worker.js';

/** A directory image is written for an open of at least this many executions (StoreOptions.imageMin). */
export const IMAGE_MIN_EXECUTIONS = 20_000;

/** What the image reads of the segments it covers (ExecutionSegments). */
export interface ImagedSegments {
  /** The segments' folder. */
  readonly dir: string;
  /** The segments in effect, oldest first. */
  readonly list: readonly number[];
  /** The entries the open left unread, and those taken out of memory since (ExecutionSegments.unread). */
  readonly unread: ExecutionIndex | null;
  /** The listed segments as an image covering them records them. */
  covering(): Covered[];
}

/** The image of one store's segments: what it covers, and the writes of it under way. */
export class SegmentsImage {
  /** The segments the directory image on disk covers (decision 076): merges spare them. */
  private imaged: readonly number[] = [];
  /** The directory image the open writes (or removes), until it is done. */
  private opening: Promise<unknown> = Promise.resolve();
  /** The segments the image on disk covers, as it recorded them (none: no image or an unusable one). */
  private covers: readonly Covered[] = [];
  /** Images written while the daemon runs (`job`): made at the first checkpoint, stopped by a close. */
  private refresh: ImageRefresh | null = null;
  /**
   * Set by a compaction that rewrote segments the image covers (by dead share, or a merge past
   * twice the most listed), until the next `retired` asks for an image of what it left.
   */
  private outdated = false;

  /** `locations`: where the entries read back or written since the open are (ExecutionSegments'). */
  constructor(
    private readonly segments: ImagedSegments,
    private readonly locations: ReadonlyMap<string, Location>,
  ) {}

  /**
   * After a lazy open read `image` (or none, or an unusable one) and `loaded` segments' indexes
   * into `unread`: a new image when those indexes hold an eighth of the directory or more, the
   * unusable one removed, else the one read kept as what covers the first segments.
   */
  opened(image: ReadImage | { why: string }, unread: ExecutionIndex, loaded: number, o: LazyOpen): void {
    const min = o.imageMin ?? IMAGE_MIN_EXECUTIONS;
    const covered = 'covered' in image ? image.covered : [];
    if (unread.size >= min && loaded * 8 >= unread.size && loaded > 0) {
      const covers = this.segments.covering();
      this.opening = writeImage(this.segments.dir, takeImage(unread, covers)).then(
        () => void (this.covers = covers),
        (err: unknown) => o.logger?.warn({ err }, 'store: the directory image was not written'),
      );
      this.imaged = [...this.segments.list];
    } else if ('why' in image && image.why !== 'none') {
      this.opening = removeImage(this.segments.dir).catch(() => undefined);
    } else {
      this.imaged = covered.map((c) => c.segment);
      this.covers = covered;
    }
  }

  /** How many of the first segments of `listed` the image on disk covers: a merge spares them (mergeRun's `keep`). */
  spared(listed: readonly number[]): number {
    let keep = 0;
    while (keep < this.imaged.length && listed[keep] === this.imaged[keep]) keep++;
    return keep;
  }

  /** A compaction rewrote segments the image covers: the next `retired` refreshes it. */
  outdate(): void {
    this.outdated = true;
  }

  /**
   * What a checkpoint that rewrote segments the image covers leaves to refresh
   * (segments/image-refresh.ts): a compaction by dead share copies every older segment into a
   * new one, and a merge past twice the most listed reaches into the image's (mergeRun), so the
   * image on disk no longer covers what is listed. A stop writes a new image, but without this a
   * start after a crash would load every index again, in time that grows with every execution
   * that waits. An image of every listed segment (as the manifest now lists them: `retire` runs
   * after it is saved), written by a child process from their indexes as an open without an
   * image loads them. Null under `imageMin` executions (decisions 084, 085).
   */
  private job(imageMin: number): ImageJob | null {
    const unread = this.segments.unread;
    if (unread === null) return null;
    let live = unread.size;
    // An execution read back and taken out of memory again is in both.
    for (const id of this.locations.keys()) if (!unread.has(id)) live++;
    return live < imageMin ? null : { dir: this.segments.dir, listed: [...this.segments.list], live };
  }

  /** The refresher of images written while the daemon runs. */
  private refresher(o: RefreshOptions): ImageRefresh {
    return new ImageRefresh((covers) => {
      this.covers = covers;
      this.imaged = covers.map((c) => c.segment);
    }, o.logger);
  }

  /** After a checkpoint's segments were retired: an image of what a compaction that outdated this one left (`job`). */
  retired(o: RefreshOptions): void {
    if (!this.outdated) return;
    this.outdated = false;
    const job = this.job(o.imageMin ?? IMAGE_MIN_EXECUTIONS);
    if (job !== null) (this.refresh ??= this.refresher(o)).request(job);
  }

  /** Resolves once no image is being refreshed, nor one asked for (tests). */
  async refreshed(): Promise<void> {
    await this.refresh?.idle();
  }

  /** Stops the refreshes and waits for the open's image. */
  async stop(): Promise<void> {
    // Made if need be only to be stopped: a checkpoint's `retired` after this then starts none.
    await (this.refresh ??= this.refresher({})).stop();
    await this.opening;
  }

  /**
   * Leaves an image of every listed segment (decision 076) for the next open, unless the one on
   * disk covers them already or they hold fewer than `imageMin` executions: the unread entries
   * and the resident ones (the large collection of `state`), each summarized. Only once a close's
   * last checkpoint is durable: every resident entry is then as a listed segment has it. The
   * unread directory takes the resident entries: nothing may use it afterwards.
   */
  async leave(state: object, o: ImageOptions): Promise<void> {
    await this.stop();
    const summarize = o.snapshotCollection?.summarize;
    if (summarize === undefined) return;
    const unread = this.segments.unread;
    const collection = (state as Record<string, Record<string, unknown>>)[o.snapshotCollection!.key]!;
    const resident = Object.keys(collection).filter((id) => collection[id] !== undefined);
    const size = resident.length + (unread?.size ?? 0);
    const covering = this.segments.covering();
    const current = (c: Covered, i: number) => sameCovered(c, this.covers[i]);
    if (size < (o.imageMin ?? IMAGE_MIN_EXECUTIONS)) return;
    if (covering.length === this.covers.length && covering.every(current)) return;
    // A cold timer taken and not read back (its read failed, or was under way at the close) is
    // kept nowhere else: the next open loads the indexes, which have it.
    const untimed = unread?.untimed ?? 0;
    if (untimed > 0) return o.logger?.warn({ untimed }, 'store: no directory image left: cold timers taken, not read');
    try {
      const directory = unread ?? new ExecutionIndex(size);
      directory.reserve(size);
      for (const id of resident) {
        const at = this.locations.get(id);
        if (at === undefined) return; // not as a durable checkpoint wrote it
        directory.put(summarize(collection[id], state), at);
      }
      // Where an execution read back since the open is: the directory keeps no place for one the
      // cache took out of memory again, nor follows one a compaction moved (`compact`).
      for (const [id, at] of this.locations) directory.relocate(id, at);
      await writeImage(this.segments.dir, takeImage(directory, covering), 'image:closing');
      this.covers = covering;
    } catch (err) {
      o.logger?.warn({ err }, 'store: the directory image was not written');
    }
  }
}

/** Whether an image's record of a segment is `b`'s. */
function sameCovered(a: Covered, b: Covered | undefined): boolean {
  return b !== undefined && a.segment === b.segment && a.bytes === b.bytes && a.dead === b.dead;
}
