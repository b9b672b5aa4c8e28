import { createRequire } from 'node:module';
import type * as Yaml from 'yaml';
import { FLOW_LIMITS, type LimitProblemCode } from './limits.js';
import { errorMessage } from '../errors.js';

/**
 * The yaml package, loaded on the first parse: a daemon parses flow text only when a flow is
 * published as source, and loading it slowed every start (docs/decisions/019-restart-path.md;
 * a CommonJS package, so the require shares the one instance an import would give).
 */
let yamlModule: typeof Yaml | null = null;
const yaml = (): typeof Yaml => (yamlModule ??= createRequire(import.meta.url)('yaml') as typeof Yaml);

/** A position in a flow file (1-based). */
export interface SourcePosition {
  readonly line: number;
  readonly column: number;
}

/** A problem of a flow file's text: bad YAML/JSON, a duplicate key, or a limit passed. */
export interface SourceProblem {
  /** SYNTAX when absent. */
  readonly code?: LimitProblemCode;
  readonly message: string;
  /** Absent for the whole file (its size). */
  readonly position?: SourcePosition;
}

/** A parsed flow file: its value and where each part of it stands in the text. */
export interface ParsedSource {
  readonly value: unknown;
  /** Syntax errors (bad YAML/JSON, duplicate keys) and limits passed, with positions. */
  readonly syntaxErrors: readonly SourceProblem[];
  /**
   * Where the value at `path` stands; for a path that does not exist, the nearest existing
   * parent (a missing property is reported at the object that lacks it).
   */
  positionOf(path: readonly (string | number)[]): SourcePosition | undefined;
  /**
   * Where the key of the property at `path` (its last element) stands: where an unknown key is
   * reported. As positionOf for a path whose last element is no key of a mapping.
   */
  keyPositionOf(path: readonly (string | number)[]): SourcePosition | undefined;
  /**
   * Where `line`:`column` (1-based) of the text of the scalar at `path` stands in the file (a
   * script's syntax error, say); undefined when `path` is no scalar.
   */
  positionInScalar(path: readonly (string | number)[], line: number, column: number): SourcePosition | undefined;
}

/**
 * Parses a flow file's text, YAML or JSON (JSON is read as YAML 1.2, which accepts it), keeping
 * source positions for messages. Pure; never throws: syntax problems are returned. Linear in the
 * text: its size and nesting are checked (FLOW_LIMITS) before a document is built, and keys are
 * compared once each.
 */
export function parseFlowSource(text: string): ParsedSource {
  const { Composer, isAlias, isMap, isScalar, isSeq, LineCounter, Parser, visit, YAMLParseError } = yaml();
  const bytes = Buffer.byteLength(text, 'utf8');
  if (bytes > FLOW_LIMITS.sourceBytes) {
    const message = `the flow source is ${bytes} bytes, more than ${FLOW_LIMITS.sourceBytes}`;
    return refused([{ code: 'TOO_LARGE', message }]);
  }
  const lineCounter = new LineCounter();
  const pos = (offset: number): SourcePosition => {
    const p = lineCounter.linePos(offset);
    return { line: p.line, column: p.col };
  };
  // The concrete syntax tree is built without recursion; the document from it is not.
  const tokens = Array.from(new Parser(lineCounter.addNewLine).parse(text));
  const deep = firstTooDeep(tokens, FLOW_LIMITS.depth);
  if (deep !== undefined) {
    const message = `mappings and lists nest more than ${FLOW_LIMITS.depth} deep here`;
    return refused([{ code: 'TOO_DEEP', message, position: pos(deep) }]);
  }
  // yaml's own uniqueKeys compares every pair of keys of a mapping: duplicates are found below.
  let doc: Yaml.Document.Parsed | undefined;
  for (const next of new Composer({ uniqueKeys: false, strict: true }).compose(tokens, true, text.length)) {
    if (doc) {
      const why = 'the file holds more than one document (one flow per file)';
      doc.errors.push(new YAMLParseError([next.range[0], next.range[1]], 'MULTIPLE_DOCS', why));
      break;
    }
    doc = next;
  }
  const composed = doc!;
  const syntaxErrors: SourceProblem[] = composed.errors.map((e) => ({
    message: e.message.split('\n')[0]!,
    position: pos(e.pos[0]),
  }));
  syntaxErrors.push(...duplicateKeys(composed.contents).map((d) => ({ message: d.message, position: pos(d.at) })));
  // Text that opens with `{` and is neither YAML nor JSON is a broken JSON file: say what JSON
  // finds wrong, not what YAML does (YAML would read valid JSON, but not every broken one).
  if (syntaxErrors.length > 0 && /^\s*\{/.test(text)) {
    const json = jsonSyntaxError(text);
    if (json)
      syntaxErrors.splice(0, syntaxErrors.length, {
        message: `not valid JSON: ${json.message}`,
        position: json.offset === undefined ? syntaxErrors[0]!.position : pos(json.offset),
      });
  }
  let value: unknown;
  if (syntaxErrors.length === 0) {
    try {
      // maxAliasCount stops an alias bomb (aliases of aliases) before it expands: toJS throws.
      value = composed.toJS({ maxAliasCount: 100 });
    } catch (err) {
      // Named at the first alias, where the expansion begins (else at the top of the file).
      let at = 0;
      visit(composed, {
        Alias(_key, node) {
          if (isAlias(node) && node.range) at = node.range[0];
          return visit.BREAK;
        },
      });
      const why =
        err instanceof ReferenceError
          ? 'the aliases expand to too much data (more than 100 alias uses)'
          : `the document cannot be read: ${errorMessage(err)}`;
      syntaxErrors.push({ message: why, position: pos(at) });
    }
  }
  /** The pairs of each mapping by key, made when a position is first asked in it. */
  const indexes = new Map<Yaml.YAMLMap, Map<string, Yaml.Pair>>();
  return {
    value,
    syntaxErrors,
    positionOf(path) {
      const best = nearest(path);
      return best?.range ? pos(best.range[0]) : undefined;
    },
    keyPositionOf(path) {
      const parent = path.length > 0 ? nearest(path.slice(0, -1)) : undefined;
      const key = isMap(parent) ? (indexOf(parent).get(String(path.at(-1)))?.key as Yaml.Node | null) : null;
      if (key?.range) return pos(key.range[0]);
      return this.positionOf(path);
    },
    positionInScalar(path, line, column) {
      const node = nearest(path);
      if (!isScalar(node) || !node.range) return undefined;
      const start = pos(node.range[0]);
      if (node.type === 'BLOCK_LITERAL' || node.type === 'BLOCK_FOLDED') {
        // The content starts on the line after the `|` header, at the block's indentation.
        const from = lineCounter.lineStarts[start.line] ?? text.length;
        let to = from;
        while (text[to] === ' ') to++;
        return { line: start.line + line, column: to - from + column };
      }
      // A scalar on the key's line: its text starts after the opening quote, if any.
      const quote = node.type === 'QUOTE_DOUBLE' || node.type === 'QUOTE_SINGLE' ? 1 : 0;
      return line === 1
        ? { line: start.line, column: start.column + quote + column - 1 }
        : { line: start.line + line - 1, column };
    },
  };

  /** The node at `path`, or the nearest existing parent (see positionOf). */
  function nearest(path: readonly (string | number)[]): Yaml.Node | undefined {
    let node: unknown = composed.contents;
    let best: Yaml.Node | undefined = node as Yaml.Node | undefined;
    for (const key of path) {
      if (isMap(node)) {
        const pair = indexOf(node).get(String(key));
        if (!pair) break;
        // Point at the value, or at the key when the value is empty.
        node = pair.value ?? pair.key;
        best = (pair.value ?? pair.key) as Yaml.Node;
      } else if (isSeq(node) && typeof key === 'number') {
        node = node.items[key];
        if (!node) break;
        best = node as Yaml.Node;
      } else break;
    }
    return best;
  }

  function indexOf(map: Yaml.YAMLMap): Map<string, Yaml.Pair> {
    let index = indexes.get(map);
    if (!index) {
      index = new Map();
      for (const pair of map.items) {
        const key = keyName(pair.key);
        if (key !== undefined && !index.has(key)) index.set(key, pair);
      }
      indexes.set(map, index);
    }
    return index;
  }

  /** A parse refused before any document was built: no value, no positions. */
  function refused(problems: SourceProblem[]): ParsedSource {
    return {
      value: undefined,
      syntaxErrors: problems,
      positionOf: () => undefined,
      keyPositionOf: () => undefined,
      positionInScalar: () => undefined,
    };
  }

  /**
   * Keys given twice in one mapping, in file order: each mapping's keys go through one Set, as
   * the property names they become (`1` and `"1"` are one property of the flow).
   */
  function duplicateKeys(root: unknown): Array<{ message: string; at: number }> {
    const found: Array<{ message: string; at: number }> = [];
    const stack: unknown[] = [root];
    while (stack.length > 0) {
      const node = stack.pop();
      if (isMap(node)) {
        const seen = new Map<string, number>();
        for (const pair of node.items) {
          const key = keyName(pair.key);
          const at = (pair.key as Yaml.Node | null)?.range?.[0];
          if (key !== undefined && at !== undefined) {
            const first = seen.get(key);
            if (first === undefined) seen.set(key, at);
            else found.push({ message: `key "${key}" is given twice (first on line ${pos(first).line})`, at });
          } else if (pair.key) stack.push(pair.key);
          stack.push(pair.value);
        }
      } else if (isSeq(node)) {
        for (const item of node.items) stack.push(item);
      }
    }
    return found.sort((a, b) => a.at - b.at);
  }

  /** The property name a scalar key becomes; undefined for any other key. */
  function keyName(key: unknown): string | undefined {
    return isScalar(key) ? String(key.value) : undefined;
  }
}

/**
 * The offset of the first mapping or list nested deeper than `max` in the syntax tree, or
 * undefined. Iterative: the tree may be nested as deep as the text allows.
 */
function firstTooDeep(tokens: readonly Yaml.CST.Token[], max: number): number | undefined {
  const stack = tokens.map((token) => ({ token, depth: 0 }));
  let first: number | undefined;
  while (stack.length > 0) {
    const { token, depth } = stack.pop()!;
    if (token.type === 'document') {
      if (token.value) stack.push({ token: token.value, depth });
    } else if (token.type === 'block-map' || token.type === 'block-seq' || token.type === 'flow-collection') {
      if (depth + 1 > max) {
        if (first === undefined || token.offset < first) first = token.offset;
        continue;
      }
      for (const item of token.items) {
        if (item.key) stack.push({ token: item.key, depth: depth + 1 });
        if (item.value) stack.push({ token: item.value, depth: depth + 1 });
      }
    }
  }
  return first;
}

/** Why `text` is not JSON, and where when the engine says (`at position N`); null when it is. */
function jsonSyntaxError(text: string): { message: string; offset?: number } | null {
  try {
    JSON.parse(text);
    return null;
  } catch (err) {
    const message = (err as Error).message;
    const at = / in JSON at position (\d+)/.exec(message);
    return at ? { message: message.slice(0, at.index), offset: Number(at[1]) } : { message };
  }
}
