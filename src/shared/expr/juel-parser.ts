/**
 * The syntax half of the JUEL module: error type, AST, scanner and parser. Import from juel.ts,
 * which re-exports all of this together with the evaluator.
 *
 * Grammar is EL 2.2 (chapter 1): literals, identifiers, `.`/`[]` access, unary `- ! not empty`,
 * `* / div % mod`, `+ -`, `< > <= >= lt gt le ge`, `== != eq ne`, `&& and`, `|| or`, `? :`.
 * No JavaScript is ever evaluated. Chained binary operators are parsed in loops, so
 * `1 + 1 + ... + 1` of any length is safe; genuine nesting (parentheses, brackets, unary
 * operators, ternary branches) is capped at MAX_DEPTH levels and reported as an
 * ExpressionError, never as a stack overflow. Not supported (clear ExpressionError): function
 * and method calls, `instanceof`.
 */

import { memoByText } from '../memo.js';

/** Failure to parse or evaluate an expression. Match on `code`, never on the message. */
export class ExpressionError extends Error {
  readonly code = 'EXPRESSION_ERROR' as const;
  /** 0-based character offset in the expression source where the problem is, when known. */
  readonly position?: number;

  constructor(message: string, position?: number) {
    super(position === undefined ? message : `${message} (at position ${position})`);
    this.name = 'ExpressionError';
    if (position !== undefined) this.position = position;
  }
}

/** Binary operators, in their symbolic spelling (`and` parses as `&&`, `div` as `/`, ...). */
export type JuelBinaryOp = '+' | '-' | '*' | '/' | '%' | '<' | '>' | '<=' | '>=' | '==' | '!=' | '&&' | '||';
/** Unary operators (`not` parses as `!`). */
export type JuelUnaryOp = '-' | '!' | 'empty';

/** The JUEL abstract syntax tree. `pos` is the node's (or its operator's) offset in the source. */
export type JuelNode =
  | { readonly kind: 'literal'; readonly value: string | number | boolean | null; readonly pos: number }
  | { readonly kind: 'identifier'; readonly name: string; readonly pos: number }
  | { readonly kind: 'member'; readonly object: JuelNode; readonly property: JuelNode; readonly pos: number }
  | { readonly kind: 'unary'; readonly op: JuelUnaryOp; readonly operand: JuelNode; readonly pos: number }
  | {
      readonly kind: 'binary';
      readonly op: JuelBinaryOp;
      readonly left: JuelNode;
      readonly right: JuelNode;
      readonly pos: number;
    }
  | {
      readonly kind: 'conditional';
      readonly test: JuelNode;
      readonly consequent: JuelNode;
      readonly alternate: JuelNode;
      readonly pos: number;
    };

/** Deepest nesting of parentheses, brackets, unary operators and ternary branches accepted. */
const MAX_DEPTH = 200;

// ---------------------------------------------------------------------------------------------
// Scanner

interface Token {
  readonly t: 'lit' | 'id' | 'op' | 'eof';
  readonly v: string | number | boolean | null;
  readonly pos: number;
}

const WORD_OPS = new Map<string, string>([
  ['and', '&&'],
  ['or', '||'],
  ['not', '!'],
  ['eq', '=='],
  ['ne', '!='],
  ['lt', '<'],
  ['gt', '>'],
  ['le', '<='],
  ['ge', '>='],
  ['div', '/'],
  ['mod', '%'],
  ['empty', 'empty'],
]);
const TWO_CHAR_OPS = new Set(['>=', '<=', '==', '!=', '&&', '||']);
const ONE_CHAR_OPS = new Set(['+', '-', '*', '/', '%', '<', '>', '!', '(', ')', '[', ']', '.', '?', ':']);
const isDigit = (c: string): boolean => c >= '0' && c <= '9';
const isIdStart = (c: string): boolean => /^[A-Za-z_$]$/.test(c);
const isIdPart = (c: string): boolean => /^[A-Za-z0-9_$]$/.test(c);

/** Tokens of `src.slice(start, end)`, positions relative to the whole of `src`. */
function scan(src: string, start: number, end: number): Token[] {
  const at = (k: number): string => (k < end ? src.charAt(k) : '');
  const out: Token[] = [];
  let i = start;
  while (i < end) {
    const c = at(i);
    const pos = i;
    if (/\s/.test(c)) {
      i++;
    } else if (isDigit(c) || (c === '.' && isDigit(at(i + 1)))) {
      while (isDigit(at(i))) i++;
      if (at(i) === '.') for (i++; isDigit(at(i));) i++;
      if (at(i) === 'e' || at(i) === 'E') {
        let k = i + 1;
        if (at(k) === '+' || at(k) === '-') k++;
        if (isDigit(at(k))) for (i = k; isDigit(at(i));) i++;
      }
      out.push({ t: 'lit', v: Number(src.slice(pos, i)), pos });
    } else if (isIdStart(c)) {
      while (isIdPart(at(i))) i++;
      const word = src.slice(pos, i);
      if (word === 'instanceof') throw new ExpressionError('the instanceof operator is not supported', pos);
      const op = WORD_OPS.get(word);
      if (op !== undefined) out.push({ t: 'op', v: op, pos });
      else if (word === 'true' || word === 'false') out.push({ t: 'lit', v: word === 'true', pos });
      else if (word === 'null') out.push({ t: 'lit', v: null, pos });
      else out.push({ t: 'id', v: word, pos });
    } else if (c === "'" || c === '"') {
      const parts: string[] = [];
      for (i++; ;) {
        if (i >= end) throw new ExpressionError('unterminated string literal', pos);
        const ch = at(i);
        if (ch === c) break;
        if (ch === '\\') {
          const next = at(i + 1);
          if (next === '') throw new ExpressionError('unterminated string literal', pos);
          if (next !== '\\' && next !== "'" && next !== '"') {
            throw new ExpressionError('invalid escape in string literal (only \\\\, \\\' and \\" are allowed)', i);
          }
          parts.push(next);
          i += 2;
        } else {
          parts.push(ch);
          i++;
        }
      }
      i++;
      out.push({ t: 'lit', v: parts.join(''), pos });
    } else if (TWO_CHAR_OPS.has(c + at(i + 1))) {
      out.push({ t: 'op', v: c + at(i + 1), pos });
      i += 2;
    } else if (ONE_CHAR_OPS.has(c)) {
      out.push({ t: 'op', v: c, pos });
      i++;
    } else {
      throw new ExpressionError(`unexpected character ${JSON.stringify(c)}`, pos);
    }
  }
  out.push({ t: 'eof', v: null, pos: end });
  return out;
}

// ---------------------------------------------------------------------------------------------
// Parser

/** Binary precedence levels, loosest first. */
const LEVELS: readonly (readonly string[])[] = [
  ['||'],
  ['&&'],
  ['==', '!='],
  ['<', '>', '<=', '>='],
  ['+', '-'],
  ['*', '/', '%'],
];

class Parser {
  private i = 0;
  private depth = 0;
  constructor(private readonly toks: readonly Token[]) {}

  private peek(ahead = 0): Token {
    return this.toks[Math.min(this.i + ahead, this.toks.length - 1)]!;
  }
  private isOp(v: string, ahead = 0): boolean {
    const tk = this.peek(ahead);
    return tk.t === 'op' && tk.v === v;
  }
  private fail(expected: string): never {
    const tk = this.peek();
    const found = tk.t === 'eof' ? 'end of expression' : tk.t === 'lit' ? JSON.stringify(tk.v) : `'${String(tk.v)}'`;
    throw new ExpressionError(`expected ${expected}, found ${found}`, tk.pos);
  }
  private expect(v: string): void {
    if (!this.isOp(v)) this.fail(`'${v}'`);
    this.i++;
  }
  private enter(pos: number): void {
    if (++this.depth > MAX_DEPTH) throw new ExpressionError(`expression nested deeper than ${MAX_DEPTH} levels`, pos);
  }

  parse(): JuelNode {
    const node = this.expression();
    if (this.peek().t !== 'eof') this.fail('an operator or end of expression');
    return node;
  }

  /** `or ('?' expression ':' expression)?`, right-associative; the else-chain is a loop. */
  private expression(): JuelNode {
    const heads: { test: JuelNode; consequent: JuelNode; pos: number }[] = [];
    let alternate: JuelNode;
    for (;;) {
      const test = this.binary(0);
      if (!this.isOp('?')) {
        alternate = test;
        break;
      }
      const pos = this.peek().pos;
      this.i++;
      this.enter(pos);
      const consequent = this.expression();
      this.depth--;
      this.expect(':');
      heads.push({ test, consequent, pos });
    }
    for (let k = heads.length - 1; k >= 0; k--) alternate = { kind: 'conditional', ...heads[k]!, alternate };
    return alternate;
  }

  /** Left-associative operators of one precedence level, folded in a loop. */
  private binary(level: number): JuelNode {
    const ops = LEVELS[level];
    if (ops === undefined) return this.unary();
    let left = this.binary(level + 1);
    for (let tk = this.peek(); tk.t === 'op' && ops.includes(tk.v as string); tk = this.peek()) {
      this.i++;
      const right = this.binary(level + 1);
      left = { kind: 'binary', op: tk.v as JuelBinaryOp, left, right, pos: tk.pos };
    }
    return left;
  }

  private unary(): JuelNode {
    const ops: Token[] = [];
    while (this.isOp('-') || this.isOp('!') || this.isOp('empty')) {
      this.enter(this.peek().pos);
      ops.push(this.toks[this.i++]!);
    }
    let node = this.postfix();
    for (let k = ops.length - 1; k >= 0; k--) {
      node = { kind: 'unary', op: ops[k]!.v as JuelUnaryOp, operand: node, pos: ops[k]!.pos };
    }
    this.depth -= ops.length;
    return node;
  }

  private postfix(): JuelNode {
    let node = this.primary();
    for (;;) {
      const pos = this.peek().pos;
      if (this.isOp('.')) {
        this.i++;
        const name = this.peek();
        if (name.t !== 'id') this.fail('a property name after .');
        this.i++;
        node = {
          kind: 'member',
          object: node,
          property: { kind: 'literal', value: name.v as string, pos: name.pos },
          pos,
        };
      } else if (this.isOp('[')) {
        this.i++;
        this.enter(pos);
        const property = this.expression();
        this.depth--;
        this.expect(']');
        node = { kind: 'member', object: node, property, pos };
      } else if (this.isOp('(')) {
        throw new ExpressionError('method calls are not supported', pos);
      } else {
        return node;
      }
    }
  }

  private primary(): JuelNode {
    const tk = this.peek();
    if (tk.t === 'lit') {
      this.i++;
      return { kind: 'literal', value: tk.v, pos: tk.pos };
    }
    if (tk.t === 'id') {
      if (this.isOp('(', 1) || (this.isOp(':', 1) && this.peek(2).t === 'id' && this.isOp('(', 3))) {
        throw new ExpressionError('function calls are not supported', tk.pos);
      }
      this.i++;
      return { kind: 'identifier', name: tk.v as string, pos: tk.pos };
    }
    if (this.isOp('(')) {
      this.i++;
      this.enter(tk.pos);
      const inner = this.expression();
      this.depth--;
      this.expect(')');
      return inner;
    }
    return this.fail('an expression');
  }
}

/** Parses `src.slice(start, end)`; error positions are offsets in `src`. Pure. @throws ExpressionError */
function parseRange(src: string, start: number, end: number): JuelNode {
  try {
    return new Parser(scan(src, start, end)).parse();
  } catch (err) {
    throw err instanceof RangeError ? new ExpressionError('expression too complex') : err; // stack backstop
  }
}

/**
 * Parses a JUEL expression body (without the `${` and `}`). Pure.
 * @throws ExpressionError on any syntax error, with `position` set.
 */
export function parseJuel(source: string): JuelNode {
  return parseRange(source, 0, source.length);
}

/**
 * Parses a flow condition: either exactly one `${...}` (after trimming; nothing before or after
 * it) or a bare expression. Positions in errors are offsets in `text`. Pure.
 * @throws ExpressionError when the text does not parse.
 */
export const compileCondition: (text: string) => JuelNode = memoByText(compileConditionText);

function compileConditionText(text: string): JuelNode {
  const trimmed = text.trim();
  if (!trimmed.startsWith('${')) return parseRange(text, 0, text.length);
  const start = text.length - text.trimStart().length;
  if (trimmed.length < 3 || !trimmed.endsWith('}')) {
    throw new ExpressionError('missing closing } of ${...}', start + trimmed.length);
  }
  return parseRange(text, start + 2, start + trimmed.length - 1);
}
