/**
 * JUEL (Jakarta/Java Unified Expression Language, EL 2.2) for flow conditions such as
 * `${formData.approve == true && order.total < 1000}`: parse (juel-parser.ts, re-exported here),
 * evaluate and coerce, following the EL 2.2 specification chapter 1 (operators 1.7–1.10,
 * coercions 1.18) with JS numbers in place of Long/Double. No JavaScript is ever evaluated.
 * Evaluation walks chains of binary operators and property accesses in a loop (no recursion
 * per operand), and reads own properties only, never the prototype chain.
 */
import { ExpressionError, compileCondition, type JuelBinaryOp, type JuelNode } from './juel-parser.js';

export {
  ExpressionError,
  compileCondition,
  parseJuel,
  type JuelBinaryOp,
  type JuelNode,
  type JuelUnaryOp,
} from './juel-parser.js';

type Vars = Readonly<Record<string, unknown>>;

// ---------------------------------------------------------------------------------------------
// Coercions (EL 2.2 section 1.18)

const NUMERIC = /^[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?$/;

function typeName(v: unknown): string {
  return v === null || v === undefined ? 'null' : Array.isArray(v) ? 'array' : typeof v;
}

function toNumber(v: unknown, pos: number | undefined): number {
  if (v === null || v === undefined || v === '') return 0;
  if (typeof v === 'number') return v;
  if (typeof v === 'string') {
    if (NUMERIC.test(v)) return Number(v);
    throw new ExpressionError(`cannot coerce string ${JSON.stringify(v.slice(0, 40))} to a number`, pos);
  }
  throw new ExpressionError(`cannot coerce ${typeName(v)} to a number`, pos);
}

function toBoolean(v: unknown, pos: number | undefined): boolean {
  if (v === null || v === undefined) return false;
  if (typeof v === 'boolean') return v;
  if (typeof v === 'string') return v.toLowerCase() === 'true';
  throw new ExpressionError(`cannot coerce ${typeName(v)} to a boolean`, pos);
}

/**
 * EL coercion to a number: null and "" → 0; a number as is; a string in Java's decimal syntax
 * (optional sign, digits, optional fraction and exponent; no spaces, hex, Infinity or NaN) →
 * its value. Pure. @throws ExpressionError for booleans, objects, arrays and other strings.
 */
export function coerceToNumber(value: unknown): number {
  return toNumber(value, undefined);
}

/**
 * EL coercion to a boolean: null → false; a boolean as is; a string → true iff it equals "true"
 * ignoring case. Pure. @throws ExpressionError for numbers, objects and arrays.
 */
export function coerceToBoolean(value: unknown): boolean {
  return toBoolean(value, undefined);
}

/**
 * EL coercion to a string: null → ""; strings as is; booleans → "true"/"false"; numbers via
 * String() (so integer values have no decimal point, and -0 is "0"); objects and arrays as JSON.
 * Pure. @throws ExpressionError when an object cannot be serialised (a cycle).
 */
export function coerceToString(value: unknown): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'string') return value;
  if (typeof value === 'number') return Object.is(value, -0) ? '0' : String(value);
  if (typeof value !== 'object') return String(value);
  try {
    return JSON.stringify(value);
  } catch (err) {
    throw new ExpressionError(`cannot coerce ${typeName(value)} to a string: ${(err as Error).message}`);
  }
}

// ---------------------------------------------------------------------------------------------
// Evaluator

/** Whether EL would use Long (rather than Double) arithmetic for these operands. */
const isIntegral = (v: unknown): boolean =>
  typeof v === 'number' ? Number.isInteger(v) : typeof v !== 'string' || !/[.eE]/.test(v);

function arithmetic(op: JuelBinaryOp, a: unknown, b: unknown, pos: number): number {
  if (a === null && b === null) return 0;
  const x = toNumber(a, pos);
  const y = toNumber(b, pos);
  if (op === '/') return x / y;
  const integral = isIntegral(a) && isIntegral(b);
  if (op === '%' && integral && y === 0) throw new ExpressionError('integer modulo by zero', pos);
  const r = op === '+' ? x + y : op === '-' ? x - y : op === '*' ? x * y : x % y;
  return integral && r === 0 ? 0 : r; // a Long has no -0
}

function compare(op: JuelBinaryOp, a: unknown, b: unknown, pos: number): boolean {
  if (a === null && b === null) return op === '<=' || op === '>='; // EL: A == B first
  if (a === null || b === null) return false;
  let x: number | string;
  let y: number | string;
  if (typeof a === 'boolean' || typeof b === 'boolean') {
    throw new ExpressionError('booleans cannot be compared with < > <= >=', pos);
  } else if (typeof a === 'number' || typeof b === 'number') {
    [x, y] = [toNumber(a, pos), toNumber(b, pos)];
  } else if (typeof a === 'string' && typeof b === 'string') {
    [x, y] = [a, b]; // JS string order is UTF-16 code unit order, like Java's compareTo
  } else {
    throw new ExpressionError(`cannot compare ${typeName(a)} with ${typeName(b)}`, pos);
  }
  return op === '<' ? x < y : op === '>' ? x > y : op === '<=' ? x <= y : x >= y;
}

function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b || ((a ?? null) === null && (b ?? null) === null)) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) || Array.isArray(b)) {
    return Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((v, k) => deepEqual(v, b[k]));
  }
  const ka = Object.keys(a);
  const rb = b as Record<string, unknown>;
  if (ka.length !== Object.keys(b).length) return false;
  return ka.every((k) => Object.hasOwn(b, k) && deepEqual((a as Record<string, unknown>)[k], rb[k]));
}

function equals(a: unknown, b: unknown, pos: number): boolean {
  if (a === b) return true;
  if (a === null || b === null) return false;
  if (typeof a === 'number' || typeof b === 'number') return toNumber(a, pos) === toNumber(b, pos);
  if (typeof a === 'boolean' || typeof b === 'boolean') return toBoolean(a, pos) === toBoolean(b, pos);
  if (typeof a === 'string' || typeof b === 'string') return coerceToString(a) === coerceToString(b);
  return deepEqual(a, b);
}

function isEmpty(v: unknown): boolean {
  if (v === null || v === undefined || v === '') return true;
  if (Array.isArray(v)) return v.length === 0;
  return typeof v === 'object' && Object.keys(v).length === 0;
}

/** `base[key]` with EL semantics, following own properties only. `base` is not null. */
function property(base: unknown, key: unknown, pos: number): unknown {
  if (key === null) return null;
  if (Array.isArray(base)) {
    let index: number;
    if (typeof key === 'number' && Number.isFinite(key)) index = Math.trunc(key);
    else if (typeof key === 'string' && /^[+-]?\d+$/.test(key)) index = Number(key);
    else
      throw new ExpressionError(
        `cannot use ${typeName(key)} ${coerceToString(key).slice(0, 40)} as an array index`,
        pos,
      );
    return index >= 0 && index < base.length ? (base[index] ?? null) : null;
  }
  if (typeof base === 'object' && base !== null) {
    const k = coerceToString(key);
    return Object.hasOwn(base, k) ? ((base as Record<string, unknown>)[k] ?? null) : null;
  }
  throw new ExpressionError(`cannot read a property of a ${typeName(base)}`, pos);
}

function leaf(node: JuelNode, vars: Vars): unknown {
  switch (node.kind) {
    case 'literal':
      return node.value;
    case 'identifier':
      if (!Object.hasOwn(vars, node.name)) throw new ExpressionError(`unknown variable '${node.name}'`, node.pos);
      return vars[node.name] ?? null;
    case 'unary': {
      const v = evaluate(node.operand, vars);
      if (node.op === 'empty') return isEmpty(v);
      if (node.op === '!') return !toBoolean(v, node.pos);
      if (v === null) return 0;
      const r = -toNumber(v, node.pos);
      return isIntegral(v) && r === 0 ? 0 : r;
    }
    default:
      return evaluate(node, vars);
  }
}

function evaluate(root: JuelNode, vars: Vars): unknown {
  let node = root;
  while (node.kind === 'conditional') {
    node = toBoolean(evaluate(node.test, vars), node.pos) ? node.consequent : node.alternate;
  }
  // Walk down the left spine of binary operators and property accesses, then fold back up.
  const spine: JuelNode[] = [];
  while (node.kind === 'binary' || node.kind === 'member') {
    spine.push(node);
    node = node.kind === 'binary' ? node.left : node.object;
  }
  let value = leaf(node, vars);
  for (let k = spine.length - 1; k >= 0; k--) {
    const s = spine[k]!;
    if (s.kind === 'member') {
      value = value === null ? null : property(value, evaluate(s.property, vars), s.pos);
    } else if (s.kind === 'binary') {
      const { op, pos } = s;
      if (op === '&&' || op === '||') {
        const lhs = toBoolean(value, pos);
        value =
          op === '&&' ? lhs && toBoolean(evaluate(s.right, vars), pos) : lhs || toBoolean(evaluate(s.right, vars), pos);
        continue;
      }
      const right = evaluate(s.right, vars);
      if (op === '==' || op === '!=') value = equals(value, right, pos) === (op === '==');
      else if (op === '<' || op === '>' || op === '<=' || op === '>=') value = compare(op, value, right, pos);
      else value = arithmetic(op, value, right, pos);
    }
  }
  return value;
}

/**
 * Evaluates a parsed expression against `vars` (own keys only; a key whose value is undefined
 * reads as null). Pure: never mutates `vars`. Objects and arrays in the result are those in `vars`.
 * @throws ExpressionError for an unknown variable, a failed coercion, a property of a non-object,
 * or integer modulo by zero.
 */
export function evaluateJuel(ast: JuelNode, vars: Vars): unknown {
  try {
    return evaluate(ast, vars);
  } catch (err) {
    throw err instanceof RangeError ? new ExpressionError('expression too complex to evaluate') : err;
  }
}

/**
 * Evaluates a condition (text as accepted by compileCondition, or an already compiled node) and
 * coerces the result to a boolean with EL's rules (null → false, "true" in any case → true).
 * Pure. @throws ExpressionError when it does not parse or evaluate, or the result is a number or
 * an object.
 */
export function evaluateCondition(text: string | JuelNode, vars: Vars): boolean {
  const node = typeof text === 'string' ? compileCondition(text) : text;
  return toBoolean(evaluateJuel(node, vars), undefined);
}
