/**
 * How daemons sharing one database split its partitions (decision 041): each live daemon holds
 * a fair share of the execution partitions (1 to count-1), and partition 0 (the directory,
 * triggers) stays with whichever daemon holds it. No daemon decides for another: each reads who
 * is live and who holds what, and moves only its own partitions, giving up what it holds beyond
 * its share and taking free ones up to it. Shares differ by one at most; a daemon keeps what it
 * holds while that is within its share (moves are costly: a partition's executions pause while
 * they load elsewhere), so a daemon that joins or leaves moves only the partitions it must.
 */

/** Who is live and who holds what, as one daemon read it. */
export interface ShareView {
  /** How many partitions the database has. */
  readonly count: number;
  /** The ids of the daemons that share the partitions and were seen within a lease. */
  readonly members: readonly string[];
  /** The holder of each partition whose lease runs; a partition absent here is free. */
  readonly holders: ReadonlyMap<number, string>;
}

/** What one daemon does next: the execution partitions it gives up and those it takes, and whether it takes partition 0. */
export interface SharePlan {
  readonly drop: readonly number[];
  readonly take: readonly number[];
  readonly takeCatalogue: boolean;
}

/**
 * Daemon `self`'s next moves in `view`. With E execution partitions and n daemons, shares are
 * floor(E/n) or ceil(E/n). A daemon holds up to ceil(E/n), but gives up down to floor(E/n)
 * while the others short of floor(E/n) need more than is free: the first to give up its surplus
 * makes room for those. It takes free partitions, in order, up to what it is short of floor(E/n)
 * and then, up to ceil(E/n), what the others short of it do not need.
 */
export function planShare(self: string, view: ShareView): SharePlan {
  const members = view.members.includes(self) ? view.members : [...view.members, self];
  const executions = view.count - 1;
  const n = members.length;
  const floor = Math.floor(executions / n);
  const ceil = Math.ceil(executions / n);
  const heldBy = new Map<string, number[]>(members.map((m) => [m, []]));
  const free: number[] = [];
  for (let p = 1; p < view.count; p++) {
    const holder = view.holders.get(p);
    if (holder === undefined) free.push(p);
    else heldBy.get(holder)?.push(p);
  }
  const mine = heldBy.get(self)!;
  let othersShort = 0;
  for (const m of members) if (m !== self) othersShort += Math.max(0, floor - heldBy.get(m)!.length);
  const bound = othersShort > free.length ? floor : ceil;
  const drop = mine.length > bound ? mine.slice(bound) : [];
  const need = Math.max(0, floor - mine.length);
  const spare = Math.max(0, free.length - othersShort - need);
  const take = free.slice(0, Math.max(0, Math.min(ceil - mine.length, need + spare)));
  return { drop, take, takeCatalogue: !view.holders.has(0) };
}

/**
 * The partitions daemon `self` holds when it starts in `view`: those it held before (a restart
 * under the same id finds its lease still running) within its share, partition 0 if free or
 * its own, and free execution partitions up to its share. Empty: nothing is free for it yet.
 */
export function joinShare(self: string, view: ShareView): number[] {
  const plan = planShare(self, view);
  const held: number[] = [];
  for (const [p, owner] of view.holders) if (owner === self && !plan.drop.includes(p)) held.push(p);
  if (plan.takeCatalogue) held.push(0);
  held.push(...plan.take);
  return held.sort((a, b) => a - b);
}
