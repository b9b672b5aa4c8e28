/**
 * A small store whose large collection (`items`) a checkpoint keeps in execution segments, for
 * the tests of checkpoints into segments (test/daemon/at-rest/segments/execution-segments.test.ts).
 */
import type { ExecutionSummary } from '../../src/daemon/state/execution-summary.js';
import { SEGMENTS_AT_REST } from '../../src/daemon/at-rest/segments/execution-segments.js';
import type { StoreOptions } from '../../src/daemon/store/store-options.js';

export interface ItemState {
  items: Record<string, { v: string }>;
  note: string[];
}
/** Sets item `k` to `v`; `v` null removes it. */
export interface ItemRecord {
  readonly k: string;
  readonly v: string | null;
}

/** A summary of item `id`: only its id matters to these tests. */
export function itemSummary(id: string): ExecutionSummary {
  return {
    id,
    organization: 'o',
    processId: 'p',
    processVersion: '1',
    environment: 'e',
    stateCd: 1,
    root: null,
    parent: null,
    startMs: 1_700_000_000_000,
    triggered: false,
    child: false,
    correlationKey: null,
    dueMs: null,
    active: 0,
    waits: [],
  };
}

/** The store's options; `segments` false: the collection stays inside the snapshot (format 1). */
export function segmentStoreOptions(
  dir: string,
  extra: { segments?: boolean; sliceEntries?: number } = {},
): StoreOptions<ItemState, ItemRecord> {
  const segments = extra.segments ?? true;
  return {
    dir,
    initialState: () => ({ items: {}, note: [] }),
    apply: (s, r) => {
      if (r.v === null) delete s.items[r.k];
      else s.items[r.k] = { v: r.v };
      s.note.push(r.k);
    },
    checkpointEvery: 1_000_000,
    segments: SEGMENTS_AT_REST,
    snapshotCollection: {
      key: 'items',
      touched: (r, visit) => visit(r.k),
      ...(extra.sliceEntries !== undefined && { sliceEntries: extra.sliceEntries }),
      ...(segments && { summarize: () => itemSummary('item') }),
    },
  };
}
