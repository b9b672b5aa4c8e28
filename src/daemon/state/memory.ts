/**
 * Durable memory (memoryAction, aiTask's chat memory): values by organization, namespace and
 * key. Written only by `memory.written` records, each emitted in the same step as the node
 * completion that made it, so a write happens exactly once with respect to its node.
 */

/** One remembered value. A list (append) is a JSON array; `expiresAt` null lives until deleted. */
export interface MemoryEntry {
  readonly value: unknown;
  readonly updatedAt: string;
  /** ISO instant after which the entry reads as missing (and the expiry sweep removes it); null: no TTL. */
  readonly expiresAt: string | null;
}

/** Memory of every organization: organization -> namespace -> key -> entry. Nested, so no key is built from parts and split again. */
export type MemoryStore = Record<string, Record<string, Record<string, MemoryEntry>>>;

/** Where an entry lives. */
export interface MemoryAddress {
  readonly organization: string;
  readonly namespace: string;
  readonly key: string;
}

/** The largest value (its JSON, in bytes) one entry may hold: MEMORY_TOO_LARGE above it. */
export const MEMORY_MAX_ENTRY_BYTES = 256 * 1024;
/** The most items a list may keep (append's `maxItems` is capped by it). */
export const MEMORY_MAX_ITEMS = 10_000;
/** The longest namespace or key, in characters. */
export const MEMORY_MAX_NAME_LENGTH = 512;

/** The entry at `at`, or undefined when there is none or it expired by `now`. Pure. */
export function memoryEntry(memory: MemoryStore, at: MemoryAddress, now: Date): MemoryEntry | undefined {
  const entry = memory[at.organization]?.[at.namespace]?.[at.key];
  if (!entry || !Object.hasOwn(memory[at.organization]![at.namespace]!, at.key)) return undefined;
  return entry.expiresAt !== null && Date.parse(entry.expiresAt) <= now.getTime() ? undefined : entry;
}

/** Sets (entry) or removes (null) the entry at `at`, dropping containers left empty. The reducer's helper. */
export function writeMemory(memory: MemoryStore, at: MemoryAddress, entry: MemoryEntry | null): void {
  if (entry) {
    const org = Object.hasOwn(memory, at.organization) ? memory[at.organization]! : (memory[at.organization] = {});
    const ns = Object.hasOwn(org, at.namespace) ? org[at.namespace]! : (org[at.namespace] = {});
    ns[at.key] = entry;
    return;
  }
  const org = Object.hasOwn(memory, at.organization) ? memory[at.organization] : undefined;
  const ns = org && Object.hasOwn(org, at.namespace) ? org[at.namespace] : undefined;
  if (!ns || !Object.hasOwn(ns, at.key)) return;
  delete ns[at.key];
  if (Object.keys(ns).length === 0) delete org![at.namespace];
  if (Object.keys(org!).length === 0) delete memory[at.organization];
}

/**
 * Up to `limit` entries whose `expiresAt` is at or before `nowIso` (ISO instants compare as
 * text), for the expiry sweep to remove; the scan stops once it has found them. Pure.
 */
export function expiredMemoryEntries(memory: MemoryStore, nowIso: string, limit: number): MemoryAddress[] {
  const found: MemoryAddress[] = [];
  for (const organization in memory) {
    const org = memory[organization]!;
    for (const namespace in org) {
      const ns = org[namespace]!;
      for (const key in ns) {
        const expiresAt = ns[key]!.expiresAt;
        if (expiresAt === null || expiresAt > nowIso) continue;
        found.push({ organization, namespace, key });
        if (found.length >= limit) return found;
      }
    }
  }
  return found;
}
