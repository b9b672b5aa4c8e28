/**
 * Flow files that share a `processId`: published one after the other, each would replace the
 * other's active version, so the flow would silently be whichever file was published last. Such
 * files are refused, each naming the others (`wfx flow publish`, `--flows` at start, `wfx dev`).
 */
import type { FlowProblem } from './problems.js';

/** The problem of `file`, whose processId `processId` the files `others` have too. */
export function duplicateProcessId(processId: string, others: readonly string[], source: string | null): FlowProblem {
  const named = others.map((f) => f.slice(Math.max(f.lastIndexOf('/'), f.lastIndexOf('\\')) + 1)).join(', ');
  return {
    code: 'DUPLICATE_PROCESS_ID',
    property: 'processId',
    message: `processId ${processId} is also the processId of ${named}: each flow file needs a processId of its own (any new UUID), or publishing one replaces the other`,
    ...(source !== null && processIdPlace(source)),
  };
}

/**
 * The items of `items` whose flow's processId another item's flow has too, each with the files
 * of those others (items with no flow are left out). Pure.
 */
export function sharedProcessIds<T>(
  items: readonly T[],
  processIdOf: (item: T) => string | null,
  fileOf: (item: T) => string,
): Map<T, { readonly processId: string; readonly others: string[] }> {
  const byId = new Map<string, T[]>();
  for (const item of items) {
    const id = processIdOf(item);
    if (id !== null) byId.set(id, [...(byId.get(id) ?? []), item]);
  }
  const out = new Map<T, { readonly processId: string; readonly others: string[] }>();
  for (const [processId, group] of byId)
    if (group.length > 1)
      for (const item of group) out.set(item, { processId, others: group.filter((o) => o !== item).map(fileOf) });
  return out;
}

/** Where a flow source's top-level processId is (YAML `processId:` unindented, JSON `"processId":` indented 2 at most), 1-based; {} when not found. */
function processIdPlace(source: string): { line?: number; column?: number } {
  const lines = source.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const m = /^(?:processId\s*:|( {0,2}|\{\s*)"processId"\s*:)/.exec(lines[i]!);
    if (m) return { line: i + 1, column: (m[1]?.length ?? 0) + 1 };
  }
  return {};
}
