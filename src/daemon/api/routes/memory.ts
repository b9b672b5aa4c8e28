import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type {} from '@fastify/swagger'; // schema.tags, schema.summary
import {
  type MEMORY_NAME_MAX,
  MemoryListQuery,
  MemoryParams,
  OrganizationQuery,
  type MemoryDeleted,
  type MemoryEntryView,
  type MemoryItem,
  type MemoryNamespace,
  type MemoryNamespaces,
  type MemoryPage,
  type WithDefaults,
} from '../../../shared/api/index.js';
import { namedEntrySchema } from '../route-schemas.js';
import { WfxError } from '../../../shared/errors.js';
import { type MEMORY_MAX_NAME_LENGTH, memoryEntry, type MemoryEntry } from '../../state/memory.js';
import type { WfxRecord } from '../../state/records.js';
import type { WfxState } from '../../state/state.js';
import type { DurableStore } from '../../store/store.js';
import { actingOrganization } from '../organization.js';
import type { Catalogue } from '../../catalogue/catalogue.js';

/** The wire's limit on names is the store's. */
const SAME_LIMIT: typeof MEMORY_NAME_MAX extends typeof MEMORY_MAX_NAME_LENGTH ? true : never = true;
void SAME_LIMIT;

export interface MemoryRouteDeps {
  readonly store: DurableStore<WfxState, WfxRecord>;
  /** Where the changes this route makes are written (catalogue/catalogue.ts). */
  readonly catalogue: Catalogue;
  /** The clock entries expire by. */
  readonly now?: () => Date;
}

/** Where a page ends: the last (namespace, key) it held. Opaque to callers. */
interface Cursor {
  readonly n: string;
  readonly k: string;
}

function encodeCursor(c: Cursor): string {
  return Buffer.from(JSON.stringify([c.n, c.k])).toString('base64url');
}

/** The cursor's position; VALIDATION_ERROR for one this route did not make. */
function decodeCursor(text: string): Cursor {
  try {
    const parsed = JSON.parse(Buffer.from(text, 'base64url').toString('utf8')) as unknown;
    if (Array.isArray(parsed) && parsed.length === 2 && parsed.every((x) => typeof x === 'string'))
      return { n: parsed[0] as string, k: parsed[1] as string };
  } catch {
    // refused below
  }
  throw new WfxError('VALIDATION_ERROR', 'cursor is not one this list gave');
}

/** Code-unit order: the same on every machine and locale, so cursors stay valid. */
const byCodeUnit = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** The bytes of a value's JSON (UTF-8). */
/** Each entry's JSON size, computed once: entries are replaced, never changed, by a write. */
const sizes = new WeakMap<MemoryEntry, number>();
/** The bytes of `entry`'s value as JSON. */
function sizeOf(entry: MemoryEntry): number {
  let n = sizes.get(entry);
  if (n === undefined) {
    n = Buffer.byteLength(JSON.stringify(entry.value) ?? 'null');
    sizes.set(entry, n);
  }
  return n;
}

/**
 * /admin/memory: what memoryActions and aiTasks' chat memory remember, per organization
 * (permission ADMIN). Entries past their TTL read as missing, as they do to a flow.
 */
export function memoryRoutes(fastify: FastifyInstance, deps: MemoryRouteDeps): void {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const { store, catalogue } = deps;
  const now = deps.now ?? (() => new Date());
  const admin = { auth: { permission: 'ADMIN' as const } };
  const tags = ['memory'];
  const live = (organization: string, namespace: string, key: string): MemoryEntry => {
    const entry = memoryEntry(store.state.memory, { organization, namespace, key }, now());
    if (!entry) throw new WfxError('NOT_FOUND', `no memory entry ${key} in namespace ${namespace}`);
    return entry;
  };

  app.get('/admin/memory', {
    config: admin,
    schema: {
      tags,
      summary: 'Live memory entries (no values), by namespace then key, a page at a time',
      querystring: MemoryListQuery,
    },
    handler: async (request): Promise<MemoryPage> => {
      const q = request.query as WithDefaults<MemoryListQuery, 'limit'>;
      const organization = actingOrganization(request.caller!, q.organization);
      const after = q.cursor === undefined ? null : decodeCursor(q.cursor);
      const org = Object.hasOwn(store.state.memory, organization) ? store.state.memory[organization]! : {};
      const namespaces =
        q.namespace === undefined
          ? Object.keys(org).sort(byCodeUnit)
          : Object.hasOwn(org, q.namespace)
            ? [q.namespace]
            : [];
      const at = now();
      const items: MemoryItem[] = [];
      for (const namespace of namespaces) {
        if (after && namespace < after.n) continue;
        const keys = Object.keys(org[namespace]!)
          .filter(
            (k) =>
              (q.prefix === undefined || k.startsWith(q.prefix)) && !(after && namespace === after.n && k <= after.k),
          )
          .sort(byCodeUnit);
        for (const key of keys) {
          const entry = memoryEntry(store.state.memory, { organization, namespace, key }, at);
          if (!entry) continue;
          if (items.length === q.limit)
            return { items, nextCursor: encodeCursor({ n: items.at(-1)!.namespace, k: items.at(-1)!.key }) };
          items.push({
            namespace,
            key,
            size: sizeOf(entry),
            updatedAt: entry.updatedAt,
            expiresAt: entry.expiresAt,
          });
        }
      }
      return { items, nextCursor: null };
    },
  });

  app.get('/admin/memory/namespaces', {
    config: admin,
    schema: {
      tags,
      summary: 'Namespaces with their live entries: how many, how many bytes',
      querystring: OrganizationQuery,
    },
    handler: async (request): Promise<MemoryNamespaces> => {
      const organization = actingOrganization(request.caller!, request.query.organization);
      const org = Object.hasOwn(store.state.memory, organization) ? store.state.memory[organization]! : {};
      const at = now();
      const items: MemoryNamespace[] = [];
      for (const namespace of Object.keys(org).sort(byCodeUnit)) {
        let entries = 0;
        let bytes = 0;
        for (const key of Object.keys(org[namespace]!)) {
          const entry = memoryEntry(store.state.memory, { organization, namespace, key }, at);
          if (!entry) continue;
          entries += 1;
          bytes += sizeOf(entry);
        }
        if (entries > 0) items.push({ namespace, entries, bytes });
      }
      return { items };
    },
  });

  app.get('/admin/memory/:namespace/:key', {
    config: admin,
    schema: namedEntrySchema(tags, 'One live memory entry and its value', MemoryParams),
    handler: async (request): Promise<MemoryEntryView> => {
      const { namespace, key } = request.params;
      const organization = actingOrganization(request.caller!, request.query.organization);
      const e = live(organization, namespace, key);
      return { namespace, key, value: e.value, updatedAt: e.updatedAt, expiresAt: e.expiresAt };
    },
  });

  app.delete('/admin/memory/:namespace/:key', {
    config: admin,
    schema: namedEntrySchema(tags, 'Forget a memory entry', MemoryParams),
    handler: async (request): Promise<MemoryDeleted> => {
      const { namespace, key } = request.params;
      const organization = actingOrganization(request.caller!, request.query.organization);
      live(organization, namespace, key);
      await catalogue.forgetMemory(organization, namespace, key);
      return { namespace, key, deleted: true };
    },
  });
}
