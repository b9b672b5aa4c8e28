/* Durable memory of memoryAction and aiTask's chat memory, read and removed by admins (/admin/memory). Answers are types only. */
import { Type, type Static } from './schema.js';
import { Name, PageFields } from './common.js';

/** The longest namespace or key, in characters (the daemon's MEMORY_MAX_NAME_LENGTH). */
export const MEMORY_NAME_MAX = 512;

const memoryName = Type.String({ minLength: 1, maxLength: MEMORY_NAME_MAX });

/** Querystring of GET /admin/memory: one namespace or all, keys starting with `prefix`, a page. */
export const MemoryListQuery = Type.Object(
  {
    namespace: Type.Optional(memoryName),
    prefix: Type.Optional(Type.String({ maxLength: MEMORY_NAME_MAX })),
    ...PageFields(1000, 100, 2400),
    organization: Type.Optional(Name),
  },
  { additionalProperties: false },
);
export type MemoryListQuery = Static<typeof MemoryListQuery>;

/** Path parameters of /admin/memory/{namespace}/{key}. */
export const MemoryParams = Type.Object({ namespace: memoryName, key: memoryName });
export type MemoryParams = Static<typeof MemoryParams>;

/** One live entry as GET /admin/memory lists it: where it is and how big, not its value. */
export interface MemoryItem {
  readonly namespace: string;
  readonly key: string;
  /** Bytes of the value's JSON (UTF-8). */
  readonly size: number;
  readonly updatedAt: string;
  /** When it stops being read (its TTL); null: kept until deleted. */
  readonly expiresAt: string | null;
}

/** Answer of GET /admin/memory: a page, ordered by namespace then key; `nextCursor` null on the last. */
export interface MemoryPage {
  readonly items: readonly MemoryItem[];
  readonly nextCursor: string | null;
}

/** One namespace as GET /admin/memory/namespaces lists it: how many live entries, and their bytes. */
export interface MemoryNamespace {
  readonly namespace: string;
  /** Live entries (past their TTL: not counted). */
  readonly entries: number;
  /** Bytes of their values' JSON (UTF-8), summed. */
  readonly bytes: number;
}

/** Answer of GET /admin/memory/namespaces: by namespace (code-unit order). */
export interface MemoryNamespaces {
  readonly items: readonly MemoryNamespace[];
}

/** Answer of GET /admin/memory/{namespace}/{key}. */
export interface MemoryEntryView {
  readonly namespace: string;
  readonly key: string;
  readonly value: unknown;
  readonly updatedAt: string;
  readonly expiresAt: string | null;
}

/** Answer of DELETE /admin/memory/{namespace}/{key}. */
export interface MemoryDeleted {
  readonly namespace: string;
  readonly key: string;
  readonly deleted: true;
}
