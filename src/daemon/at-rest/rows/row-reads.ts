/**
 * The engine cache's reads of execution rows (pg-evictable.ts), gathered: the reads asked for
 * in one turn go as one query per partition (`id = ANY`), at most READ_BATCH ids each, and at
 * most READS_IN_FLIGHT queries at once. A recovery or a burst of requests that reads back many
 * executions then takes a few connections of the store's pool, not all of them for as long as
 * the burst lasts: the journal's appends and the lease's renewals keep theirs.
 */
import type pg from 'pg';
import { WfxError } from '../../../shared/errors.js';
import { noRow, parseDoc, readDocTexts } from './pg-cold-rows.js';

/** Ids read per query at most. */
const READ_BATCH = 500;
/** Queries of reads in flight at once, at most (the store's pool has 4 connections). */
const READS_IN_FLIGHT = 2;

interface Waiter {
  readonly resolve: (doc: unknown) => void;
  readonly reject: (err: unknown) => void;
}

export class RowReads {
  /** By partition: the ids waiting to be read, each with who waits for it. */
  private readonly waiting = new Map<number, Map<string, Waiter[]>>();
  private inFlight = 0;
  private scheduled = false;

  constructor(
    private readonly pool: pg.Pool,
    private readonly partitionOf: (id: string) => number,
  ) {}

  /** Execution `id`'s document as its row holds it, parsed. Rejects SNAPSHOT_CORRUPT for no row or one that does not parse. */
  read(id: string): Promise<unknown> {
    return new Promise((resolve, reject) => {
      const partition = this.partitionOf(id);
      let ids = this.waiting.get(partition);
      if (ids === undefined) this.waiting.set(partition, (ids = new Map()));
      const waiters = ids.get(id);
      if (waiters) waiters.push({ resolve, reject });
      else ids.set(id, [{ resolve, reject }]);
      if (this.scheduled) return;
      this.scheduled = true;
      // The next turn: the reads asked for in this one go together.
      setImmediate(() => {
        this.scheduled = false;
        this.pump();
      });
    });
  }

  /** Sends queries while some wait and fewer than READS_IN_FLIGHT are in flight. */
  private pump(): void {
    while (this.inFlight < READS_IN_FLIGHT && this.waiting.size > 0) {
      const [partition, ids] = this.waiting.entries().next().value as [number, Map<string, Waiter[]>];
      const batch = new Map<string, Waiter[]>();
      for (const [id, waiters] of ids) {
        if (batch.size === READ_BATCH) break;
        batch.set(id, waiters);
        ids.delete(id);
      }
      if (ids.size === 0) this.waiting.delete(partition);
      this.inFlight++;
      readDocTexts(this.pool, partition, [...batch.keys()])
        .then(
          (texts) => {
            for (const [id, waiters] of batch) settle(waiters, () => parsed(partition, id, texts.get(id)));
          },
          (err: unknown) => {
            for (const waiters of batch.values()) for (const w of waiters) w.reject(err);
          },
        )
        .finally(() => {
          this.inFlight--;
          this.pump();
        });
    }
  }
}

/** The document of `id` from its row's text: SNAPSHOT_CORRUPT when there is no row or it does not parse. */
function parsed(partition: number, id: string, text: string | undefined): unknown {
  if (text === undefined) throw noRow(partition, [id]);
  try {
    return parseDoc(id, text);
  } catch (err) {
    throw new WfxError('SNAPSHOT_CORRUPT', `partition ${partition}: ${(err as Error).message}`, { cause: err });
  }
}

/** Resolves every one of `waiters` with what `value` gives, or rejects them with what it throws. */
function settle(waiters: readonly Waiter[], value: () => unknown): void {
  let doc: unknown;
  try {
    doc = value();
  } catch (err) {
    for (const w of waiters) w.reject(err);
    return;
  }
  for (const w of waiters) w.resolve(doc);
}
