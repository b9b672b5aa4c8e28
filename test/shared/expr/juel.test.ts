import t, { type Test } from 'tap';
import { evaluateJuel, parseJuel } from '../../../src/shared/expr/juel.js';

/** Marks a row whose expression must fail with EXPRESSION_ERROR. */
const ERR = Symbol('EXPRESSION_ERROR');
type Row = readonly [source: string, expected: unknown];

const ev = (source: string, vars: Record<string, unknown> = {}): unknown => evaluateJuel(parseJuel(source), vars);

function table(t: Test, rows: readonly Row[], vars: Record<string, unknown> = {}): void {
  for (const [source, expected] of rows) {
    if (expected === ERR) {
      t.throws(() => ev(source, vars), { code: 'EXPRESSION_ERROR' }, `${source} → error`);
    } else if (typeof expected === 'number' && Number.isNaN(expected)) {
      t.ok(Number.isNaN(ev(source, vars)), `${source} → NaN`);
    } else {
      t.strictSame(ev(source, vars), expected, `${source} → ${String(expected)}`);
    }
  }
}

const vars = {
  n: null,
  u: undefined,
  zero: 0,
  two: 2,
  half: 0.5,
  s: 'abc',
  num: '12',
  yes: true,
  no: false,
  items: [10, 20, 30],
  none: [],
  obj: { a: 1, b: { c: 'deep' }, nil: null, 'odd key': 7, list: [{ id: 'x' }] },
  blank: {},
  formData: { approve: true },
  order: { total: 999 },
};

t.test('identifiers and property access', async (t) => {
  table(
    t,
    [
      ['two', 2],
      ['n', null],
      ['u', null],
      ['$x', 'dollar'],
      ['_y1', 'underscore'],
      ['missing', ERR],
      ['obj.a', 1],
      ['obj.b.c', 'deep'],
      ["obj['b']['c']", 'deep'],
      ["obj['odd key']", 7],
      ['obj.zzz', null],
      ['obj.nil', null],
      ['obj.nil.more', null],
      ['n.anything', null],
      ['n[missing]', null],
      ['obj[n]', null],
      ['obj.list[0].id', 'x'],
      ['items[0]', 10],
      ['items[2]', 30],
      ['items[3]', null],
      ['items[-1]', null],
      ["items['1']", 20],
      ['items[1.9]', 20],
      ['items[two]', 30],
      ["items['x']", ERR],
      ['items[yes]', ERR],
      ['items.length', ERR],
      ['two.x', ERR],
      ['yes.x', ERR],
      ['s.length', ERR],
      ['two[0]', ERR],
    ],
    { ...vars, $x: 'dollar', _y1: 'underscore' },
  );
  t.equal(ev('a.b.c', { a: { b: null } }), null, 'a.b null → a.b.c null');
  t.equal(ev('obj', vars), vars.obj, 'objects are returned as they are in vars');
});

t.test('property access never reaches the prototype chain', async (t) => {
  const x = { own: 1 };
  table(
    t,
    [
      ['x.__proto__', null],
      ['x.constructor', null],
      ['x.prototype', null],
      ['x.toString', null],
      ['x.hasOwnProperty', null],
      ["x['__proto__']", null],
      ["x['constructor']['name']", null],
      ['items.constructor', ERR],
      ['constructor', ERR],
      ['toString', ERR],
      ['__proto__', ERR],
      ['hasOwnProperty', ERR],
    ],
    { x, items: [] },
  );
  const parsed = JSON.parse('{"__proto__": {"polluted": true}}') as Record<string, unknown>;
  t.strictSame(ev('p.__proto__.polluted', { p: parsed }), true, 'an own "__proto__" key (from JSON) is data');
  t.equal(ev('p.polluted', { p: parsed }), null);
});

t.test('arithmetic: + - * / div % mod and unary -', async (t) => {
  table(
    t,
    [
      ['1 + 2', 3],
      ['5 - 7', -2],
      ['6 * 7', 42],
      ['1.5 + 1', 2.5],
      ['7 / 2', 3.5],
      ['7 div 2', 3.5],
      ['8 / 2', 4],
      ['1 / 0', Infinity],
      ['-1 / 0', -Infinity],
      ['0 / 0', NaN],
      ['0 div 0', NaN],
      ['7 % 3', 1],
      ['7 mod 3', 1],
      ['-7 % 3', -1],
      ['7 % -3', 1],
      ['7.5 % 2', 1.5],
      ['7 % 0', ERR],
      ['7.5 % 0', NaN],
      ["'7.0' % 0", NaN],
      ['null + null', 0],
      ['null - null', 0],
      ['null * null', 0],
      ['null / null', 0],
      ['null % null', 0],
      ['null + 5', 5],
      ['n * 5', 0],
      ['"2" + 3', 5],
      ["'2' * '3'", 6],
      ["'1.5' + 1", 2.5],
      ["'1e2' + 1", 101],
      ["'' + 1", 1],
      ["'abc' + 1", ERR],
      ["' 12' + 1", ERR],
      ["'0x10' + 1", ERR],
      ["'Infinity' + 1", ERR],
      ['true + 1', ERR],
      ['1 - false', ERR],
      ['obj + 1', ERR],
      ['items * 2', ERR],
      ["'a' + 'b'", ERR],
      ['-2', -2],
      ['-two', -2],
      ["-'2'", -2],
      ["-'2.5'", -2.5],
      ['-n', 0],
      ['- -3', 3],
      ['--3', 3],
      ['-yes', ERR],
      ["-'x'", ERR],
      ['-0', 0],
      ['0 * -1', 0],
      ['half * 4', 2],
      ['10 - 2 - 3', 5],
      ['2 * 3 % 4', 2],
      ['100 / 10 / 5', 2],
    ],
    vars,
  );
});

t.test('relational: < > <= >= lt gt le ge', async (t) => {
  table(
    t,
    [
      ['1 < 2', true],
      ['2 lt 1', false],
      ['2 > 1', true],
      ['1 gt 2', false],
      ['2 <= 2', true],
      ['3 le 2', false],
      ['2 >= 2', true],
      ['1 ge 2', false],
      ['1.5 < 2', true],
      ['"10" > 9', true],
      ["'10' < 9", false],
      ["9 < '10'", true],
      ["'1.5' < 2", true],
      ["'b' > 'a'", true],
      ["'a' lt 'b'", true],
      ["'10' < '9'", true],
      ["'B' < 'a'", true],
      ["'abc' <= 'abc'", true],
      ["'ab' < 'abc'", true],
      ['null < 1', false],
      ['1 < null', false],
      ['null > 1', false],
      ['1 >= null', false],
      ['n <= 0', false],
      ['null < null', false],
      ['null > null', false],
      ['null <= null', true],
      ['null >= null', true],
      ["'abc' < 1", ERR],
      ["1 > 'x'", ERR],
      ['true < false', ERR],
      ['yes > 1', ERR],
      ["yes < 'true'", ERR],
      ['obj < 1', ERR],
      ['obj < obj', ERR],
      ["items > 'a'", ERR],
      ['0 / 0 < 1', false],
      ['1 < 1 / 0', true],
    ],
    vars,
  );
  t.strictSame(ev('a < b', { a: '\uffff', b: '\u{1F600}' }), false, 'UTF-16 code unit order, as Java compareTo');
});

t.test('equality: == != eq ne', async (t) => {
  table(
    t,
    [
      ['1 == 1', true],
      ['1 == 1.0', true],
      ['1 eq 2', false],
      ['1 != 2', true],
      ['1 ne 1', false],
      ['null == null', true],
      ['n == u', true],
      ['null != null', false],
      ['null == 0', false],
      ['0 == null', false],
      ["null == ''", false],
      ['null != 0', true],
      ['null == false', false],
      ["'1' == 1", true],
      ["1 == '1.0'", true],
      ["'' == 0", true],
      ["'a' == 1", ERR],
      ['true == 1', ERR],
      ['1 == obj', ERR],
      ['true == true', true],
      ['yes == true', true],
      ["yes == 'true'", true],
      ["yes == 'TRUE'", true],
      ["yes == 'yes'", false],
      ["no == 'anything'", true],
      ["no == ''", true],
      ['yes == obj', ERR],
      ["'abc' == 'abc'", true],
      ["'abc' == 'ABC'", false],
      ["s eq 'abc'", true],
      ["'abc' != 'abd'", true],
      ['obj == obj', true],
      ['items == same', true],
      ['items == other', false],
      ['obj.b == copy', true],
      ['blank == empty2', true],
      ['obj == items', false],
      ['obj.b == \'{"c":"deep"}\'', true],
      ['0 / 0 == 0 / 0', false],
      ['0 / 0 != 0 / 0', true],
    ],
    { ...vars, same: [10, 20, 30], other: [10, 20], copy: { c: 'deep' }, empty2: {} },
  );
});

t.test('logical: && and || or ! not', async (t) => {
  table(
    t,
    [
      ['true && true', true],
      ['true and false', false],
      ['false || true', true],
      ['false or false', false],
      ['!true', false],
      ['not false', true],
      ['! !yes', true],
      ['null && true', false],
      ['!null', true],
      ["'' || false", false],
      ["'true' && 'TRUE'", true],
      ["'TrUe' and true", true],
      ["'yes' || false", false],
      ['!s', true],
      ['1 && true', ERR],
      ['true && 1', ERR],
      ['!0', ERR],
      ['obj || true', ERR],
      ['!items', ERR],
      ['false && missing', false],
      ['true || missing', true],
      ['false && 1 / 0', false],
      ['true || obj', true],
      ['true && missing', ERR],
      ['false || missing', ERR],
      ['true && true && false', false],
      ['false || false || true', true],
    ],
    vars,
  );
  t.strictSame(
    ev('formData.approve == true && order.total < 1000', vars),
    true,
    'formData.approve == true && order.total < 1000',
  );
  t.strictSame(ev('formData.approve == true && order.total < 1000', { ...vars, order: { total: 1000 } }), false);
});

t.test('empty', async (t) => {
  table(
    t,
    [
      ['empty null', true],
      ['empty n', true],
      ['empty u', true],
      ["empty ''", true],
      ["empty 'x'", false],
      ['empty none', true],
      ['empty items', false],
      ['empty blank', true],
      ['empty obj', false],
      ['empty 0', false],
      ['empty false', false],
      ['empty obj.zzz', true],
      ['empty obj.b.c', false],
      ['not empty items', true],
      ['!empty none', false],
      ['empty items == false', true],
      ['empty missing', ERR],
    ],
    vars,
  );
  t.strictSame(ev('empty items', { items: [] }), true, 'empty items');
});

t.test('conditional and parentheses', async (t) => {
  table(
    t,
    [
      ['true ? 1 : 2', 1],
      ['false ? 1 : 2', 2],
      ["null ? 'a' : 'b'", 'b'],
      ["'TRUE' ? 'a' : 'b'", 'a'],
      ['1 ? 2 : 3', ERR],
      ['true ? 1 : missing', 1],
      ['false ? missing : 2', 2],
      ["two > 1 ? 'big' : 'small'", 'big'],
      ['false ? 1 : true ? 2 : 3', 2],
      ['false ? 1 : false ? 2 : 3', 3],
      ['true ? false ? 1 : 2 : 3', 2],
      ['(true ? 1 : 2) + 10', 11],
      ['true ? 1 : 2 + 10', 1],
      ['(1 + 2) * 3', 9],
      ['((((((((((1))))))))))', 1],
      ['(((1 + (2)) * ((3))))', 9],
      ['-(2 + 3)', -5],
      ['!(true && false)', true],
    ],
    vars,
  );
});

t.test('operator precedence and associativity', async (t) => {
  table(
    t,
    [
      ['1 + 2 * 3', 7],
      ['(1 + 2) * 3', 9],
      ['1 + 6 / 2', 4],
      ['10 - 4 - 3', 3],
      ['2 * 3 - 4 * 1', 2],
      ['not true || true', true],
      ['not (true || true)', false],
      ['true || false && false', true],
      ['(true || false) && false', false],
      ['1 + 2 < 4', true],
      ['1 < 2 == true', true],
      ['2 == 2 && 3 > 1', true],
      ['-2 * -3', 6],
      ['- 2 + 3', 1],
      ['empty none == true', true],
      ['items[1] + items[2] * 2', 80],
      ['obj.a + 1 > 1 ? "y" : "n"', 'y'],
      ['1 < 2 and 2 < 3 or false', true],
      ['5 mod 3 div 2', 1],
      ['true ? 1 : 0 + 5', 1],
    ],
    vars,
  );
  t.match(parseJuel('a and b or c'), { kind: 'binary', op: '||', left: { kind: 'binary', op: '&&' } });
  t.match(parseJuel('a - b - c'), { kind: 'binary', op: '-', left: { kind: 'binary', op: '-' }, right: { name: 'c' } });
});

t.test('evaluation errors carry the position of the failing node', async (t) => {
  t.throws(() => ev('1 + missing'), { code: 'EXPRESSION_ERROR', position: 4 });
  t.throws(() => ev("2 * 'x'"), { code: 'EXPRESSION_ERROR', position: 2 });
  t.throws(() => ev('a.b.c', { a: { b: 5 } }), { code: 'EXPRESSION_ERROR', position: 3 });
});
