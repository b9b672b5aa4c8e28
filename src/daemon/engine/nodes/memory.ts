import { parseDuration } from '../../../shared/duration.js';
import type { MemoryActionNode } from '../../../shared/flow/types.js';
import { MEMORY_MAX_ITEMS, MEMORY_MAX_NAME_LENGTH, type MemoryEntry } from '../../state/memory.js';
import { asText, type NodeHandler, type NodeScope, type Outcome } from './handler.js';

/**
 * A namespace or key resolved to text, or the node's failure (MEMORY_KEY_INVALID) when a
 * reference in it is missing (it would name another entry, shared by every execution that
 * lacks the variable) or it is empty or too long. Besides the variables, `{correlationKey}`
 * reads the execution's correlation key (a variable of that name wins).
 */
export function memoryName(scope: NodeScope, template: string, what: 'namespace' | 'key'): string | Outcome {
  const correlationKey = scope.instance.correlationKey;
  const r = scope.resolveChecked(template, correlationKey === null ? undefined : { correlationKey });
  const name = asText(r.value ?? '');
  const fail = (why: string): Outcome => ({
    kind: 'fail',
    code: 'MEMORY_KEY_INVALID',
    message: `the ${what} "${template}" ${why}`,
  });
  if (r.missing.length > 0) return fail(`references {${r.missing[0]}}, which is missing`);
  if (name.length === 0) return fail('resolves to empty text');
  if (name.length > MEMORY_MAX_NAME_LENGTH)
    return fail(`resolves to ${name.length} characters, more than ${MEMORY_MAX_NAME_LENGTH}`);
  return name;
}

/** The failure of a list operation on a value that is not a list. */
export const notAList = (namespace: string, key: string): Outcome => ({
  kind: 'fail',
  code: 'MEMORY_NOT_A_LIST',
  message: `memory ${namespace}/${key} holds a value that is not a list`,
});

/** The last `n` items of `list` (all of them when it has fewer). Pure. */
export const lastItems = <T>(list: readonly T[], n: number): T[] => list.slice(Math.max(0, list.length - n));

/**
 * memoryAction: reads or writes the organization's durable memory in one step (no work). Its
 * writes are journaled with the node's completion, so each happens exactly once with it.
 * Results (in `resultVariable`, default the node id): store `{updatedAt, expiresAt}`; retrieve
 * the value (with `window`, the last N items of a list; a missing key `default`, else null);
 * append `{length, updatedAt, expiresAt}`; delete `{deleted}`; list `[{key, updatedAt,
 * expiresAt}]` by key.
 */
export const memoryAction: NodeHandler<MemoryActionNode> = {
  run: (node, scope) => {
    const namespace = memoryName(scope, node.namespace, 'namespace');
    if (typeof namespace !== 'string') return namespace;
    const variable = node.resultVariable ?? scope.nodeId;
    if (node.action === 'list') {
      const keys = scope
        .memoryEntries(namespace)
        .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
        .map(([key, e]) => ({ key, updatedAt: e.updatedAt, expiresAt: e.expiresAt }));
      return { kind: 'next', variables: { [variable]: keys } };
    }
    const key = memoryName(scope, node.key ?? '', 'key');
    if (typeof key !== 'string') return key;
    const live = scope.memory(namespace, key);
    const updatedAt = scope.now.toISOString();
    const expires = (fallback: string | null) =>
      node.ttl === undefined ? fallback : new Date(scope.now.getTime() + parseDuration(node.ttl)).toISOString();
    switch (node.action) {
      case 'retrieve': {
        if (!live) return { kind: 'next', variables: { [variable]: scope.resolve(node.default ?? null) ?? null } };
        if (node.window === undefined) return { kind: 'next', variables: { [variable]: live.value } };
        if (!Array.isArray(live.value)) return notAList(namespace, key);
        return {
          kind: 'next',
          variables: { [variable]: lastItems(live.value, Math.min(node.window, MEMORY_MAX_ITEMS)) },
        };
      }
      case 'store': {
        const entry: MemoryEntry = { value: scope.resolve(node.value) ?? null, updatedAt, expiresAt: expires(null) };
        return {
          kind: 'next',
          variables: { [variable]: { updatedAt, expiresAt: entry.expiresAt } },
          memory: [{ namespace, key, entry }],
        };
      }
      case 'append': {
        if (live && !Array.isArray(live.value)) return notAList(namespace, key);
        const max = Math.min(node.maxItems ?? MEMORY_MAX_ITEMS, MEMORY_MAX_ITEMS);
        const list = lastItems(
          [...((live?.value as unknown[] | undefined) ?? []), scope.resolve(node.value) ?? null],
          max,
        );
        // Without a ttl an append keeps the list's expiry: a list made with one stays bounded in time.
        const entry: MemoryEntry = { value: list, updatedAt, expiresAt: expires(live?.expiresAt ?? null) };
        return {
          kind: 'next',
          variables: { [variable]: { length: list.length, updatedAt, expiresAt: entry.expiresAt } },
          memory: [{ namespace, key, entry }],
        };
      }
      case 'delete':
        return {
          kind: 'next',
          variables: { [variable]: { deleted: live !== undefined } },
          ...(live && { memory: [{ namespace, key, entry: null }] }),
        };
    }
  },
};
