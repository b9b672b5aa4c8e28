import type { Location } from './files.js';

/** One segment's bytes: all its frames, and those no longer current. */
export interface SegmentBytes {
  readonly segment: number;
  readonly bytes: number;
  readonly dead: number;
}

/**
 * The dead bytes of each segment: frames of entries a later segment superseded or removed. Fed
 * as indexes load and as new segments supersede entries; read to choose what to compact. One
 * record per segment, nothing per entry.
 */
export class SegmentSpace {
  private readonly segments = new Map<number, { bytes: number; dead: number }>();

  /** Segment `segment` is in effect with `bytes` bytes of frames, `dead` of them superseded (none by default). */
  add(segment: number, bytes: number, dead = 0): void {
    this.segments.set(segment, { bytes, dead });
  }

  /** The frame at `location` is no longer current (its id was written again, or removed). */
  supersede(location: Location): void {
    const s = this.segments.get(location.segment);
    if (s) s.dead += location.length;
  }

  /** Segment `segment` is no longer in effect (compacted away). */
  drop(segment: number): void {
    this.segments.delete(segment);
  }

  /** Each segment's bytes, by number. */
  list(): SegmentBytes[] {
    return [...this.segments].sort((a, b) => a[0] - b[0]).map(([segment, s]) => ({ segment, ...s }));
  }

  /** Segment `segment`'s figures; undefined when it is not in effect. */
  get(segment: number): SegmentBytes | undefined {
    const s = this.segments.get(segment);
    return s && { segment, ...s };
  }
}
