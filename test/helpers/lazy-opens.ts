/**
 * Opens of wfx's JSON store as the daemon makes them (lazy: the executions a checkpoint wrote left
 * unread), each one's `store: execution directory opened` line kept: whether it used the
 * directory image, and how many indexes it loaded.
 */
import { wfxJsonStore } from '../../src/daemon/engine/executions-at-rest.js';
import type { WfxRecord } from '../../src/daemon/state/records.js';
import type { WfxState } from '../../src/daemon/state/state.js';
import { Store } from '../../src/daemon/store/store.js';

export interface LazyOpens {
  /** The fields of each open's `store: execution directory opened` line, in order. */
  readonly opens: Array<Record<string, unknown>>;
  /** Opens the store of `dir`; `imageMin` as StoreOptions (1 unless given: any close leaves an image; null: the store's own). */
  open(dir: string, imageMin?: number | null): Promise<Store<WfxState, WfxRecord>>;
}

export function lazyOpens(): LazyOpens {
  const opens: Array<Record<string, unknown>> = [];
  const logger = {
    info: (o: object, msg: string) => void (msg === 'store: execution directory opened' && opens.push({ ...o })),
    warn: () => undefined,
    error: () => undefined,
  };
  return {
    opens,
    open: (dir, imageMin = 1) =>
      Store.open<WfxState, WfxRecord>({
        dir,
        ...wfxJsonStore(),
        lazy: true,
        ...(imageMin !== null && { imageMin }),
        logger,
      }),
  };
}
