/**
 * The shape limit on untrusted JSON: how deep objects and arrays may nest. A value nested
 * thousands deep parses fine (V8's JSON.parse is iterative) but overflows the stack of
 * everything recursive after it (JSON.stringify of the journal record, template resolution,
 * copies), so it is refused where it enters the daemon: request bodies, task and event data,
 * webhook payloads, work results, and the variables a node sets.
 */

/** The depth limit when none is configured (DaemonOptions.maxJsonDepth, `--max-json-depth`). */
export const DEFAULT_MAX_JSON_DEPTH = 64;

/** Where a value passed the depth limit: the path to the first container too deep, and the limit. */
export interface DepthExcess {
  /** Keys and indexes from the root to the first object or array at depth `maxDepth + 1`. */
  readonly path: readonly (string | number)[];
  readonly maxDepth: number;
}

/**
 * Checks that `value` nests objects and arrays at most `maxDepth` deep (a scalar is depth 0,
 * `{}` and `[]` are 1, `{a: []}` is 2). Returns null when it fits, else where it passed the
 * limit. Pure, iterative (it survives any depth itself), one pass that stops at the first
 * excess; it allocates only for containers, so a flat body costs a few pushes.
 */
export function jsonDepthExcess(value: unknown, maxDepth: number): DepthExcess | null {
  if (typeof value !== 'object' || value === null) return null;
  // Containers to visit with their depth; parents are kept only to rebuild the path of an excess.
  const stack: Array<{ value: object; depth: number; parent: Frame | null; key: string | number | null }> = [
    { value, depth: 1, parent: null, key: null },
  ];
  type Frame = (typeof stack)[number];
  while (stack.length > 0) {
    const frame = stack.pop()!;
    if (frame.depth > maxDepth) return { path: pathOf(frame), maxDepth };
    const v = frame.value;
    if (Array.isArray(v)) {
      for (let i = 0; i < v.length; i++) {
        const child: unknown = v[i];
        if (typeof child === 'object' && child !== null)
          stack.push({ value: child, depth: frame.depth + 1, parent: frame, key: i });
      }
    } else {
      for (const key in v) {
        if (!Object.hasOwn(v, key)) continue;
        const child: unknown = (v as Record<string, unknown>)[key];
        if (typeof child === 'object' && child !== null)
          stack.push({ value: child, depth: frame.depth + 1, parent: frame, key });
      }
    }
  }
  return null;
}

/** The keys from the root to `frame`. */
function pathOf(frame: { parent: unknown; key: string | number | null }): (string | number)[] {
  const path: (string | number)[] = [];
  for (let f: typeof frame | null = frame; f !== null && f.key !== null; f = f.parent as typeof frame | null)
    path.push(f.key);
  return path.reverse();
}

/**
 * A JSON Pointer (RFC 6901, as Ajv's `instancePath`: `/a/0/b~1c`) as a path of property names
 * and array indexes (`['a', 0, 'b/c']`); '' is the root ([]). Pure.
 */
export function jsonPointerPath(pointer: string): (string | number)[] {
  if (pointer === '') return [];
  return pointer
    .slice(1)
    .split('/')
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'))
    .map((s) => (/^\d+$/.test(s) ? Number(s) : s));
}

/** A path as text for messages: `data.more.a[3].b` (the root alone is `(root)`). */
export function formatJsonPath(path: readonly (string | number)[], root = ''): string {
  let out = root;
  for (const key of path) out += typeof key === 'number' ? `[${key}]` : out === '' ? key : `.${key}`;
  return out === '' ? '(root)' : out;
}

/** A one-line description of an excess, for errors and node failure messages. */
export function describeDepthExcess(excess: DepthExcess, root = ''): string {
  return `nested deeper than ${excess.maxDepth} levels at ${formatJsonPath(excess.path, root)}`;
}
