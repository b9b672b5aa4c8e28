/**
 * The replay window of webhook deliveries (SeenIds): which ids a registration's deliveries
 * carried, each remembered until its window ends. Pure functions of the state and a record's
 * times, so the reducer replays them deterministically.
 */

/** A delivery's ids are remembered this long by default: longer than any provider retries (GitHub, Stripe: 3 days). */
export const DEFAULT_REPLAY_WINDOW_MS = 72 * 60 * 60 * 1000;
/**
 * Ids remembered per registration at most, whatever the window: a flood of deliveries cannot
 * grow memory without bound; past it the oldest are forgotten first (the receiver warns).
 */
export const WEBHOOK_SEEN_IDS_MAX = 200_000;

/**
 * The ids (event ids, body hashes) a registration's deliveries carried, each with the instant
 * until which it is remembered. `until` is the lookup (O(1)); `order` lists the same entries in
 * the order remembered, oldest first, from `head` on, so expiry and the cap drop from the front
 * without scanning. An entry of `order` whose time differs from `until[id]` is stale (the id
 * was remembered again later) and drops nothing.
 */
export interface SeenIds {
  /** id -> ISO instant until which a delivery carrying it is a duplicate. */
  readonly until: Record<string, string>;
  /** [id, until] in the order remembered; entries before `head` are gone. */
  order: Array<[string, string]>;
  head: number;
}

/** Entries dropped from the front of `order` before it is copied without them. */
const COMPACT_AFTER = 1024;

/** The instant until which `id` is remembered, or undefined. An own key only: ids are the provider's text. */
function untilOf(seen: SeenIds, id: string): string | undefined {
  return Object.hasOwn(seen.until, id) ? seen.until[id] : undefined;
}

/**
 * True when `id` was seen and is still remembered at `at` (an ISO instant). `seen` may be the
 * list of an earlier version's snapshot (every id in it counts as seen). O(1) but for that list.
 */
export function isSeen(seen: SeenIds | readonly string[] | undefined, id: string, at: string): boolean {
  if (seen === undefined) return false;
  if (Array.isArray(seen)) return seen.includes(id);
  const until = untilOf(seen as SeenIds, id);
  return until !== undefined && until > at;
}

/** How many entries `seen` holds (an upper bound: stale entries count until they drop). */
export function seenCount(seen: SeenIds | readonly string[] | undefined): number {
  if (seen === undefined) return 0;
  return Array.isArray(seen) ? seen.length : (seen as SeenIds).order.length - (seen as SeenIds).head;
}

/**
 * Remembers `ids` in `byWebhook[webhookId]` until `until`, as of `at`: first forgets what
 * expired by `at` (from the front, stopping at the first entry still live) and, past
 * WEBHOOK_SEEN_IDS_MAX, the oldest. An id still remembered keeps its time (a duplicate does not
 * extend its window). A list from an earlier version's snapshot becomes SeenIds, its ids
 * remembered for the default window from `at` (when they were seen is unknown). Deterministic.
 */
export function rememberIds(
  byWebhook: Record<string, SeenIds | string[]>,
  webhookId: string,
  ids: ReadonlyArray<string | null | undefined>,
  at: string,
  until: string,
): void {
  let seen = byWebhook[webhookId];
  if (seen === undefined || Array.isArray(seen)) {
    const legacy = seen ?? [];
    seen = { until: {}, order: [], head: 0 };
    const legacyUntil = new Date(Date.parse(at) + DEFAULT_REPLAY_WINDOW_MS).toISOString();
    for (const id of legacy) add(seen, id, legacyUntil);
    byWebhook[webhookId] = seen;
  }
  const order = seen.order;
  while (seen.head < order.length && order[seen.head]![1] <= at) drop(seen);
  for (const id of ids) {
    if (!id) continue;
    const was = untilOf(seen, id);
    if (was !== undefined && was > at) continue;
    add(seen, id, until);
  }
  while (order.length - seen.head > WEBHOOK_SEEN_IDS_MAX) drop(seen);
  if (seen.head > COMPACT_AFTER && seen.head * 2 > order.length) {
    seen.order = order.slice(seen.head);
    seen.head = 0;
  }
}

function add(seen: SeenIds, id: string, until: string): void {
  // An id "__proto__" is a key like any other (an assignment would not make it one).
  if (id === '__proto__')
    Object.defineProperty(seen.until, id, { value: until, enumerable: true, writable: true, configurable: true });
  else (seen.until as Record<string, string>)[id] = until;
  seen.order.push([id, until]);
}

/** Drops the front entry of `order`, and its id unless it was remembered again since. */
function drop(seen: SeenIds): void {
  const [id, until] = seen.order[seen.head]!;
  if (untilOf(seen, id) === until) delete (seen.until as Record<string, string>)[id];
  seen.head++;
}
