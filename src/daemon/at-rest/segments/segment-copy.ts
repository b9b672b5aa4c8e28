/**
 * A checkpoint into execution segments (execution-segments.ts): what it captures of the large
 * collection, entry by entry, as it was at the checkpoint's instant, and the snapshot of format 2
 * written once the new segment is.
 */
import type { ExecutionSummary } from '../../state/execution-summary.js';
import type { SegmentCheckpointDone, SegmentCheckpointStart } from '../../store/at-rest-port.js';
import { frameBytes } from '../../store/frame.js';
import type { SegmentFrame } from './write.js';
import { SNAPSHOT_SLICE_MS, writeSnapshotText } from '../../store/snapshot-write.js';

/** An entry of the collection as it was at a checkpoint's instant: its frame, or null when it was gone. */
export type Captured = SegmentFrame | null;

/**
 * The entries a checkpoint writes, each captured as it was at the checkpoint's instant: in
 * slices, and just before a record changes one not reached yet (`touch`, copy on write).
 */
export class SegmentCopy {
  private readonly pending: Set<string>;
  private readonly early = new Map<string, Captured>();
  private cursor = 0;
  private n = 0;

  constructor(
    private readonly keys: readonly string[],
    private readonly collection: Record<string, unknown>,
    private readonly state: object,
    private readonly summarize: (entry: unknown, state: object) => ExecutionSummary,
  ) {
    this.pending = new Set(keys);
  }

  /** Call before a record changes, creates or removes entry `k`: captures it now if it is still to capture. */
  readonly touch = (k: string): void => {
    if (this.pending.delete(k)) this.early.set(k, this.capture(k));
  };

  /** Captures up to `max` entries or for `budgetMs`; each with its key, null for one gone. Done when empty. */
  step(budgetMs: number, max = Infinity): Array<{ key: string; frame: Captured }> {
    const until = performance.now() + budgetMs;
    const out: Array<{ key: string; frame: Captured }> = [];
    while (this.cursor < this.keys.length) {
      const k = this.keys[this.cursor++]!;
      let frame = this.early.get(k);
      if (frame !== undefined) this.early.delete(k);
      else if (this.pending.delete(k)) frame = this.capture(k);
      else continue;
      out.push({ key: k, frame });
      if (out.length >= max || ((out.length & 63) === 0 && performance.now() >= until)) break;
    }
    return out;
  }

  /** Whether there is nothing to capture at all. */
  get empty(): boolean {
    return this.keys.length === 0;
  }

  get done(): boolean {
    return this.cursor >= this.keys.length;
  }

  private capture(k: string): Captured {
    if (!Object.hasOwn(this.collection, k)) return null;
    const entry = this.collection[k];
    const json = JSON.stringify(entry) as string | undefined;
    if (json === undefined) return null;
    return { id: k, bytes: frameBytes(this.n++, json, k), summary: this.summarize(entry, this.state) };
  }
}

/** What a checkpoint's segment work changed: the list for the snapshot, and the segments it no longer lists. */
export interface SegmentsWritten {
  readonly listed: readonly number[];
  readonly dropped: readonly number[];
  /** Bytes written to new segments (the changed entries, then any compaction). */
  readonly bytes: number;
  readonly entries: number;
}

/** What a checkpoint needs of the segments in effect (execution-segments.ts, ExecutionSegments). */
export interface CheckpointSegments {
  write(
    copy: SegmentCopy,
    slice: () => Array<{ key: string; frame: Captured }>,
    pause: () => Promise<void>,
  ): Promise<SegmentsWritten>;
  readonly unread: { readonly size: number } | null;
  usage(): { bytes: number; dead: number };
}

/**
 * Starts a checkpoint into segments (Store.checkpoint): the entries in `dirty` and the rest of the
 * state taken now, at the call; the entries written as one new segment a slice at a time (`pace`
 * between, given each slice's duration), then the snapshot of format 2 listing the segments
 * written atomically (`markPending` before its rename). The caller routes each record's touches
 * to `copy` until `written` settles.
 */
export function segmentCheckpoint(o: SegmentCheckpointStart & { readonly segments: CheckpointSegments }): {
  copy: SegmentCopy;
  written: Promise<SegmentCheckpointDone>;
} {
  const { large } = o;
  const collection = (o.state as Record<string, unknown>)[large.key] as Record<string, unknown>;
  const copy = new SegmentCopy([...o.dirty], collection, o.state, large.summarize!);
  const rest = { ...o.state } as Record<string, unknown>;
  delete rest[large.key];
  for (const key of o.derived ?? []) delete rest[key];
  const stateJson = JSON.stringify(rest);
  const written = (async (): Promise<SegmentCheckpointDone> => {
    let took = 0;
    const out = await o.segments.write(
      copy,
      () => {
        const started = performance.now();
        const slice = copy.step(SNAPSHOT_SLICE_MS, large.sliceEntries);
        took = performance.now() - started;
        return slice;
      },
      () => {
        const failure = o.failure();
        return failure ? Promise.reject(failure) : o.pace(took);
      },
    );
    const failure = o.failure(); // no snapshot from a store that failed meanwhile
    if (failure) throw failure;
    // Resident entries are in the collection, cold ones in `unread`: a read back moves one across.
    const live = Object.keys(collection).length + (o.segments.unread?.size ?? 0);
    const executions = JSON.stringify({ segments: out.listed, live });
    const { seq, savedAt } = o.head;
    const text = `{"format":2,"seq":${seq},"savedAt":"${savedAt}","executions":${executions},"state":${stateJson}}`;
    const mark = await writeSnapshotText(o.snapshotPath, text, seq, o.markPending);
    const usage = o.segments.usage();
    const size = text.length + usage.bytes - usage.dead;
    return { mark, size, reused: Math.max(0, size - text.length - out.bytes), dropped: out.dropped };
  })();
  return { copy, written };
}
