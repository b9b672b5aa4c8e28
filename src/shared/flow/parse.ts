import { createRequire } from 'node:module';
import type * as Yaml from 'yaml';

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

/** A parsed flow file: its value and where each part of it stands in the text. */
export interface ParsedSource {
  readonly value: unknown;
  /** Syntax errors (bad YAML/JSON, duplicate keys), with positions. */
  readonly syntaxErrors: ReadonlyArray<{ message: string; position: SourcePosition }>;
  /**
   * Where the value at `path` stands; for a path that does not exist, the nearest existing
   * parent (a missing property is reported at the object that lacks it).
   */
  positionOf(path: readonly (string | number)[]): SourcePosition | undefined;
  /**
   * Where `line`:`column` (1-based) of the text of the scalar at `path` stands in the file (a
   * script's syntax error, say); undefined when `path` is no scalar.
   */
  positionInScalar(path: readonly (string | number)[], line: number, column: number): SourcePosition | undefined;
}

/**
 * Parses a flow file's text, YAML or JSON (JSON is read as YAML 1.2, which accepts it), keeping
 * source positions for messages. Pure; never throws: syntax problems are returned.
 */
export function parseFlowSource(text: string): ParsedSource {
  const { isAlias, isMap, isScalar, isSeq, LineCounter, parseDocument, visit } = yaml();
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter, uniqueKeys: true, prettyErrors: false, strict: true });
  const pos = (offset: number): SourcePosition => {
    const p = lineCounter.linePos(offset);
    return { line: p.line, column: p.col };
  };
  const syntaxErrors = doc.errors.map((e) => ({ message: e.message.split('\n')[0]!, position: pos(e.pos[0]) }));
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
      value = doc.toJS({ maxAliasCount: 100 });
    } catch (err) {
      // Named at the first alias, where the expansion begins (else at the top of the file).
      let at = 0;
      visit(doc, {
        Alias(_key, node) {
          if (isAlias(node) && node.range) at = node.range[0];
          return visit.BREAK;
        },
      });
      const why =
        err instanceof ReferenceError
          ? 'the aliases expand to too much data (more than 100 alias uses)'
          : `the document cannot be read: ${err instanceof Error ? err.message : String(err)}`;
      syntaxErrors.push({ message: why, position: pos(at) });
    }
  }
  return {
    value,
    syntaxErrors,
    positionOf(path) {
      const best = nearest(path);
      return best?.range ? pos(best.range[0]) : undefined;
    },
    positionInScalar(path, line, column) {
      const node = nearest(path);
      if (!isScalar(node) || !node.range) return undefined;
      const start = pos(node.range[0]);
      if (node.type === 'BLOCK_LITERAL' || node.type === 'BLOCK_FOLDED') {
        // The content starts on the line after the `|` header, at the block's indentation.
        const lines = text.split('\n');
        const first = lines[start.line] ?? '';
        const indent = first.length - first.trimStart().length;
        return { line: start.line + line, column: indent + column };
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
    let node: unknown = doc.contents;
    let best: Yaml.Node | undefined = node as Yaml.Node | undefined;
    for (const key of path) {
      if (isMap(node)) {
        const pair = node.items.find((p) => (isScalar(p.key) ? p.key.value : p.key) === key);
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
