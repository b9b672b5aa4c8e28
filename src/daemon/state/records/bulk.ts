/**
 * Records of bulk operations (state/bulk.ts): created, a lane selected, a lane advanced by a
 * chunk, ended, removed. Each sets what it names (commons.ts: the operation's own entry, or one
 * lane's), so applied again over its own effect it changes nothing, as the shared partition
 * requires of its records.
 */
import type { ErrorCode } from '../../../shared/errors.js';
import type { BulkLane, BulkOperation } from '../bulk.js';
import type { Writable } from '../state.js';
import type { Handlers } from './handlers.js';

/** The records of bulk operations (WfxRecord). */
export type BulkRecord =
  /** A new operation, with no lane selected yet (`lanes` empty). */
  | { readonly type: 'bulk.created'; readonly bulk: BulkOperation }
  /** The executions selected in partition `lane`, newest first. */
  | {
      readonly type: 'bulk.selected';
      readonly bulkId: string;
      readonly lane: number;
      readonly ids: readonly string[];
      readonly at: string;
    }
  /**
   * Lane `lane` applied up to `next` (absolute), `skipped` naming those of the chunk passed over:
   * written in the same step, and so the same journal entry, as what the chunk changed.
   */
  | {
      readonly type: 'bulk.progressed';
      readonly bulkId: string;
      readonly lane: number;
      readonly next: number;
      readonly skipped: Readonly<Record<string, ErrorCode>>;
      readonly at: string;
    }
  | {
      readonly type: 'bulk.ended';
      readonly bulkId: string;
      readonly state: 'COMPLETED' | 'CANCELLED' | 'FAILED';
      readonly at: string;
      /** Who cancelled it. */
      readonly by?: string;
      readonly error?: { readonly code: ErrorCode; readonly message: string };
    }
  /** A finished operation and its results forgotten (state/bulk.ts's retention). */
  | { readonly type: 'bulk.removed'; readonly bulkId: string };

/** The reducer's part for bulk operations (records.ts). */
export const bulkHandlers: Handlers<BulkRecord> = {
  'bulk.created': (state, r) => {
    state.bulks[r.bulk.bulkId] = { ...r.bulk, lanes: {} };
  },
  'bulk.selected': (state, r) => {
    const bulk = state.bulks[r.bulkId];
    if (!bulk) return;
    const lane: BulkLane = { ids: r.ids, next: 0, skipped: {}, at: r.at };
    (bulk.lanes as Record<string, BulkLane>)[String(r.lane)] = lane;
  },
  'bulk.progressed': (state, r) => {
    const lane = state.bulks[r.bulkId]?.lanes[String(r.lane)] as Writable<BulkLane> | undefined;
    if (!lane) return;
    lane.next = r.next;
    lane.at = r.at;
    // In place: a lane's skipped entries grow chunk by chunk, and a copy each time would be quadratic.
    for (const id in r.skipped) (lane.skipped as Record<string, ErrorCode>)[id] = r.skipped[id]!;
  },
  'bulk.ended': (state, r) => {
    const bulk = state.bulks[r.bulkId] as Writable<BulkOperation> | undefined;
    if (!bulk) return;
    bulk.state = r.state;
    bulk.finishedAt = r.at;
    if (r.by !== undefined) bulk.cancelledBy = r.by;
    if (r.error !== undefined) bulk.error = r.error;
  },
  'bulk.removed': (state, r) => {
    delete state.bulks[r.bulkId];
  },
};
