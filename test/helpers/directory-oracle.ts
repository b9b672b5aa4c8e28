/**
 * A naive resident directory (plain Maps and arrays, every answer by a scan) and a seeded
 * random mix of executions, for the directory's tests to compare answers with.
 */
import { uuidv7 } from '../../src/daemon/state/ids.js';
import type { ExecutionSummary, WaitSummary } from '../../src/daemon/state/execution-summary.js';
import type { Location, ListQuery } from '../../src/daemon/state/execution-index/execution-index.js';

/** A seeded PRNG (mulberry32): [0, 1). */
export { prng as random } from './prng.js';

export const ORGS = ['acme', 'globex'];
export const FLOWS = ['orders', 'billing', 'ship'];
export const REFS = ['paid', 'shipped'];
export const KEYS = ['k1', 'k2', 'k3', null];
export const DOMAINS = [
  ['mail', 'send'],
  ['mail', 'bounce'],
  ['pay', 'charge'],
] as const;

/** What the oracle holds of one execution. */
export interface Held {
  summary: ExecutionSummary;
  location: Location;
  due: number | null;
}

/** The naive directory. */
export class Oracle {
  readonly all = new Map<string, Held>();

  put(summary: ExecutionSummary, location: Location): void {
    this.all.set(summary.id, { summary, location, due: summary.dueMs });
  }

  /** The ids with every pair of `where`, sorted. */
  withSearch(where: ReadonlyArray<readonly [string, string]>): string[] {
    return [...this.all.values()]
      .filter((h) => where.every(([name, value]) => h.summary.search?.[name] === value))
      .map((h) => h.summary.id)
      .sort();
  }

  tree(root: string): string[] {
    return [...this.all.values()]
      .filter((h) => h.summary.id === root || h.summary.root === root)
      .map((h) => h.summary.id)
      .sort();
  }

  subscribers(organization: string, ref: string, key: string | null): string[] {
    const out: string[] = [];
    for (const h of this.all.values()) {
      if (h.summary.organization !== organization) continue;
      for (const w of h.summary.waits) {
        if (w.kind !== 'event' || w.ref !== ref) continue;
        if (w.eventType === 'signal' || w.key === key) out.push(`${w.eventType}|${h.summary.id}|${w.node}`);
      }
    }
    return out.sort();
  }

  tasks(
    organization: string,
    processId: string,
  ): Array<{ id: string; node: string; since: number; assignee: string | null }> {
    const out = [];
    for (const h of this.all.values()) {
      if (h.summary.organization !== organization || h.summary.processId !== processId) continue;
      for (const w of h.summary.waits)
        if (w.kind === 'input') out.push({ id: h.summary.id, node: w.node, since: w.since, assignee: w.assignee });
    }
    return out.sort((a, b) => a.since - b.since || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  }

  jobs(organization: string, domain: string, action: string): string[] {
    const out: string[] = [];
    for (const h of this.all.values()) {
      if (h.summary.organization !== organization) continue;
      for (const w of h.summary.waits)
        if (w.kind === 'job' && w.domain === domain && w.action === action)
          out.push(`${h.summary.id}|${w.node}|${w.notBefore}|${w.lockedUntil}`);
    }
    return out.sort();
  }

  counts(organization: string, processId: string): { running: number; waitingOnly: number } {
    let running = 0;
    let waitingOnly = 0;
    for (const { summary: s } of this.all.values()) {
      if (s.organization !== organization || s.processId !== processId || s.stateCd !== 0) continue;
      running++;
      if (s.active === 0 && s.waits.length > 0) waitingOnly++;
    }
    return { running, waitingOnly };
  }

  list(q: ListQuery): string[] {
    return [...this.all.values()]
      .map((h) => h.summary)
      .filter((s) => q.after == null || s.id < q.after)
      .filter((s) => q.organization === undefined || s.organization === q.organization)
      .filter((s) => q.processId === undefined || s.processId === q.processId)
      .filter((s) => q.stateCd === undefined || s.stateCd === q.stateCd)
      .map((s) => s.id)
      .sort()
      .reverse()
      .slice(0, q.limit);
  }

  nextDue(): number | null {
    let min: number | null = null;
    for (const h of this.all.values()) if (h.due !== null && (min === null || h.due < min)) min = h.due;
    return min;
  }

  takeDue(nowMs: number, max: number): string[] {
    const due = [...this.all.values()]
      .filter((h) => h.due !== null && h.due <= nowMs)
      .sort((a, b) => a.due! - b.due! || (a.summary.id < b.summary.id ? -1 : 1))
      .slice(0, max);
    for (const h of due) h.due = null;
    return due.map((h) => h.summary.id);
  }
}

let since = 0;

/** A random wait of node `node`. */
function randomWait(rnd: () => number, node: string): WaitSummary {
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)]!;
  const r = rnd();
  if (r < 0.3)
    return { kind: 'input', node, since: Math.floor(rnd() * 50) * 1e6 + since++, assignee: pick(['ann', 'bob', null]) };
  if (r < 0.7)
    return {
      kind: 'event',
      node,
      eventType: rnd() < 0.7 ? 'message' : 'signal',
      nodeId: `on-${pick(REFS)}`,
      ref: pick(REFS),
      key: pick(KEYS),
    };
  if (r < 0.9) {
    const [domain, action] = pick(DOMAINS);
    return {
      kind: 'job',
      node,
      domain,
      action,
      notBefore: rnd() < 0.5 ? null : 1000 + Math.floor(rnd() * 9),
      lockedUntil: rnd() < 0.5 ? null : 77,
    };
  }
  return { kind: pick(['timer', 'child', 'loop', 'tools'] as const), node };
}

/** A random id: mostly UUIDv7 (a few ms apart, so some share a millisecond), some not UUIDs. */
export function randomId(rnd: () => number): string {
  const r = rnd();
  if (r < 0.1) return `legacy-${Math.floor(rnd() * 1e9)}`;
  if (r < 0.13) return uuidv7(new Date(1_700_000_000_000 + Math.floor(rnd() * 100))).toUpperCase();
  return uuidv7(new Date(1_700_000_000_000 + Math.floor(rnd() * 100)));
}

/** A random summary of execution `id`, its root among `roots` sometimes. */
export function randomSummary(rnd: () => number, id: string, roots: readonly string[]): ExecutionSummary {
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)]!;
  const waits: WaitSummary[] = [];
  const n = rnd() < 0.8 ? 1 : rnd() < 0.5 ? 0 : 3;
  for (let i = 0; i < n; i++) waits.push(randomWait(rnd, pick(['a', 'b', 'c', 'd'])));
  const picked = roots.length > 0 && rnd() < 0.15 ? pick(roots) : null;
  const root = picked === id ? null : picked;
  const correlationKey = rnd() < 0.5 ? null : `order-${Math.floor(rnd() * 1e9)}`;
  // Waits under their execution's own key, as most message waits are (an index writes them once).
  const own = (w: WaitSummary): WaitSummary =>
    w.kind === 'event' && w.key === KEYS[0] && correlationKey !== null ? { ...w, key: correlationKey } : w;
  const summary: ExecutionSummary = {
    id,
    organization: pick(ORGS),
    processId: pick(FLOWS),
    processVersion: pick(['1', '2']),
    environment: pick(['PRODUCTION', 'TEST']),
    stateCd: rnd() < 0.85 ? 0 : pick([1, 2, 3]),
    root,
    parent: root,
    startMs: 1_700_000_000_000 + Math.floor(rnd() * 1e6),
    triggered: rnd() < 0.1,
    child: root !== null && rnd() < 0.7,
    correlationKey,
    dueMs: rnd() < 0.4 ? null : Math.floor(rnd() * 20) * 1000,
    active: rnd() < 0.8 ? 0 : 2,
    waits: waits.map(own),
  };
  const search = searchOf(id);
  if (search !== undefined) (summary as { search?: typeof search }).search = search;
  return summary;
}

/** The search attribute values randomSummary gives (of the id: the seeded sequence stays as it was). */
export const TIERS = ['gold', 'silver', 'bronze'] as const;

/** The search attributes of a summary of `id`: most have none, some a tier and a region. */
function searchOf(id: string): Readonly<Record<string, string>> | undefined {
  const c = id.charCodeAt(id.length - 1);
  if (c % 3 === 0) return undefined;
  return { tier: TIERS[c % TIERS.length]!, ...(c % 2 === 0 && { region: `r${c % 5}` }) };
}
