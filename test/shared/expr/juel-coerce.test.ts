import t from 'tap';
import {
  coerceToBoolean,
  coerceToNumber,
  coerceToString,
  compileCondition,
  evaluateCondition,
  evaluateJuel,
  parseJuel,
} from '../../../src/shared/expr/juel.js';

const vars = {
  items: [10, 20, 30],
  none: [],
  formData: { approve: true },
  order: { total: 999 },
};

const ev = (source: string, v: Record<string, unknown>): unknown => evaluateJuel(parseJuel(source), v);

t.test('coerceToNumber', async (t) => {
  const ok: [unknown, number][] = [
    [null, 0],
    [undefined, 0],
    ['', 0],
    [5, 5],
    [-1.5, -1.5],
    ['12', 12],
    ['-3', -3],
    ['+4', 4],
    ['1.5', 1.5],
    ['.5', 0.5],
    ['1e3', 1000],
    ['1.5E-2', 0.015],
  ];
  for (const [input, expected] of ok) t.equal(coerceToNumber(input), expected, JSON.stringify(input));
  for (const bad of [true, false, 'abc', ' 12 ', '12 ', '0x10', 'Infinity', 'NaN', '1_000', '1,5', {}, [], [1]]) {
    t.throws(() => coerceToNumber(bad), { code: 'EXPRESSION_ERROR' }, JSON.stringify(bad));
  }
});

t.test('coerceToBoolean', async (t) => {
  const ok: [unknown, boolean][] = [
    [null, false],
    [undefined, false],
    ['', false],
    [true, true],
    [false, false],
    ['true', true],
    ['TRUE', true],
    ['True', true],
    ['false', false],
    ['yes', false],
    ['1', false],
    [' true', false],
  ];
  for (const [input, expected] of ok) t.equal(coerceToBoolean(input), expected, JSON.stringify(input));
  for (const bad of [0, 1, Number.NaN, {}, [], { a: 1 }]) {
    t.throws(() => coerceToBoolean(bad), { code: 'EXPRESSION_ERROR' }, String(bad));
  }
});

t.test('coerceToString', async (t) => {
  const rows: [unknown, string][] = [
    [null, ''],
    [undefined, ''],
    ['x', 'x'],
    [true, 'true'],
    [false, 'false'],
    [3, '3'],
    [-0, '0'],
    [2.5, '2.5'],
    [1e21, '1e+21'],
    [{ a: [1, 'b'] }, '{"a":[1,"b"]}'],
    [[1, null], '[1,null]'],
  ];
  for (const [input, expected] of rows) t.equal(coerceToString(input), expected, String(expected));
  const cyclic: Record<string, unknown> = {};
  cyclic.self = cyclic;
  t.throws(() => coerceToString(cyclic), { code: 'EXPRESSION_ERROR' });
});

t.test('evaluateCondition coerces the result with EL rules', async (t) => {
  t.equal(evaluateCondition('${formData.approve == true && order.total < 1000}', vars), true);
  t.equal(evaluateCondition('${empty items}', vars), false);
  t.equal(evaluateCondition('${empty none}', vars), true);
  t.equal(evaluateCondition("${x == 'true'}", { x: true }), true);
  t.equal(evaluateCondition("${x == 'true'}", { x: false }), false);
  t.equal(evaluateCondition('${x}', { x: 'TRUE' }), true);
  t.equal(evaluateCondition('${x}', { x: 'yes' }), false);
  t.equal(evaluateCondition('${x}', { x: null }), false);
  t.equal(evaluateCondition('x', { x: true }), true, 'bare expression');
  t.equal(evaluateCondition(compileCondition('${x > 1}'), { x: 2 }), true, 'a compiled node');
  t.throws(() => evaluateCondition('${x}', { x: 1 }), { code: 'EXPRESSION_ERROR' }, 'a number is not a boolean');
  t.throws(() => evaluateCondition('${x}', { x: {} }), { code: 'EXPRESSION_ERROR' });
  t.throws(() => evaluateCondition('${y}', { x: true }), { code: 'EXPRESSION_ERROR' }, 'unknown variable');
  t.throws(() => evaluateCondition('${x ==}', { x: true }), { code: 'EXPRESSION_ERROR' });
});

t.test('evaluation never mutates vars', async (t) => {
  const input = { a: { b: [1, 2] }, c: 'x' };
  const before = JSON.stringify(input);
  ev('a.b[0] + a.b[1] == 3 && c == "x" && empty a.z', input);
  t.equal(JSON.stringify(input), before);
});
