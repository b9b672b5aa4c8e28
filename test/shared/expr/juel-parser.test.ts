import t from 'tap';
import { ExpressionError, compileCondition, evaluateJuel, parseJuel } from '../../../src/shared/expr/juel.js';

const ev = (source: string, vars: Record<string, unknown> = {}): unknown => evaluateJuel(parseJuel(source), vars);

t.test('literals', async (t) => {
  for (const [source, expected] of [
    ['true', true],
    ['false', false],
    ['null', null],
    ['42', 42],
    ['0', 0],
    ['1.5', 1.5],
    ['.5', 0.5],
    ['1.', 1],
    ['1e3', 1000],
    ['1.5E-2', 0.015],
    ['2E+2', 200],
    ["'single'", 'single'],
    ['"double"', 'double'],
    ["''", ''],
    ["'it\\'s'", "it's"],
    ['"say \\"hi\\""', 'say "hi"'],
    ["'back\\\\slash'", 'back\\slash'],
    ['"mixed \\\' ok"', "mixed ' ok"],
    ['\'a "quoted" word\'', 'a "quoted" word'],
    ["'${not} {an} expression'", '${not} {an} expression'],
  ] as const) {
    t.strictSame(ev(source), expected, source);
  }
  t.throws(() => parseJuel("'bad \\n escape'"), { code: 'EXPRESSION_ERROR', position: 5 });
});

t.test('reserved words and unsupported features are clear errors', async (t) => {
  for (const word of ['and', 'or', 'not', 'eq', 'ne', 'lt', 'gt', 'le', 'ge', 'instanceof', 'empty', 'div', 'mod']) {
    t.throws(() => parseJuel(word), { code: 'EXPRESSION_ERROR' }, `${word} is not an identifier`);
    t.throws(() => parseJuel(`obj.${word}`), { code: 'EXPRESSION_ERROR' }, `obj.${word}`);
  }
  t.equal(ev("obj['and']", { obj: { and: 1 } }), 1, 'reserved words are fine as bracket keys');
  t.equal(ev('android + orange', { android: 1, orange: 2 }), 3, 'reserved words only as whole words');
  t.throws(() => parseJuel('a instanceof b'), { code: 'EXPRESSION_ERROR', position: 2 });
  t.throws(() => parseJuel('fn:upper(s)'), { code: 'EXPRESSION_ERROR', position: 0 });
  t.throws(() => parseJuel('upper(s)'), { code: 'EXPRESSION_ERROR', position: 0 });
  t.throws(() => parseJuel('s.toUpperCase()'), { code: 'EXPRESSION_ERROR', position: 13 });
  t.throws(() => parseJuel('a = 1'), { code: 'EXPRESSION_ERROR', position: 2 });
  t.throws(() => parseJuel('a & b'), { code: 'EXPRESSION_ERROR', position: 2 });
  t.throws(() => parseJuel('[1]'), { code: 'EXPRESSION_ERROR', position: 0 });
  t.throws(() => parseJuel('{1, 2}'), { code: 'EXPRESSION_ERROR', position: 0 });
  t.throws(() => parseJuel('a; b'), { code: 'EXPRESSION_ERROR', position: 1 });
});

t.test('syntax errors carry the position where parsing failed', async (t) => {
  const rows: [string, number][] = [
    ['', 0],
    ['   ', 3],
    ['1 +', 3],
    ['a..b', 2],
    ['a.', 2],
    ['a.1', 1],
    ["'unterminated", 0],
    ['"also', 0],
    ["'ends with escape\\", 0],
    ['a}', 1],
    ['${a}', 1],
    ['(1 + 2', 6],
    ['1 + 2)', 5],
    ['items[0', 7],
    ['a ? b', 5],
    ['a ? b :', 7],
    ['1 2', 2],
    ['a b', 2],
    ['* 3', 0],
    ['1 + * 3', 4],
    ['a # b', 2],
    ['not', 3],
    ['empty', 5],
    ['()', 1],
    ['a[]', 2],
  ];
  for (const [source, position] of rows) {
    try {
      parseJuel(source);
      t.fail(`${JSON.stringify(source)} should not parse`);
    } catch (err) {
      t.ok(err instanceof ExpressionError, `${JSON.stringify(source)} throws ExpressionError`);
      t.match(err, { code: 'EXPRESSION_ERROR', position }, `${JSON.stringify(source)} fails at ${position}`);
    }
  }
});

t.test('long and deeply nested expressions', async (t) => {
  const chain = `0${' + 1'.repeat(10_000)}`;
  t.equal(ev(chain), 10_000, '10,000 chained + 1');
  t.equal(ev(`x${' - 1'.repeat(10_000)}`, { x: 0 }), -10_000);
  t.equal(ev(Array.from({ length: 5000 }, () => 'true').join(' && ')), true, '5,000 chained &&');
  t.equal(ev(`false${' || false'.repeat(5000)} || true`), true);
  t.equal(ev(`x${'.next'.repeat(10_000)}`, { x: null }), null, '10,000 chained property accesses');
  const linked: Record<string, unknown> = { v: 'end' };
  let head = linked;
  for (let i = 0; i < 3000; i++) head = { next: head };
  t.equal(ev(`h${'.next'.repeat(3000)}.v`, { h: head }), 'end');
  t.equal(ev(`${'false ? 0 : '.repeat(5000)}7`), 7, '5,000 chained ternaries');
  t.equal(ev(`${'('.repeat(150)}1 + 2${')'.repeat(150)} * 3`), 9, '150 nested parentheses');
  t.equal(ev(`${'(1 + '.repeat(150)}1${')'.repeat(150)}`), 151);
  t.equal(ev(`${'-'.repeat(150)}5`), 5);
  t.throws(() => parseJuel(`${'('.repeat(10_000)}1${')'.repeat(10_000)}`), { code: 'EXPRESSION_ERROR' });
  t.throws(() => parseJuel(`${'!'.repeat(10_000)}true`), { code: 'EXPRESSION_ERROR' });
  t.throws(() => parseJuel(`${'a['.repeat(10_000)}0${']'.repeat(10_000)}`), { code: 'EXPRESSION_ERROR' });
});

t.test('the AST is a plain discriminated union with keyword operators normalised', async (t) => {
  t.strictSame(parseJuel('a.b eq 1'), {
    kind: 'binary',
    op: '==',
    left: {
      kind: 'member',
      object: { kind: 'identifier', name: 'a', pos: 0 },
      property: { kind: 'literal', value: 'b', pos: 2 },
      pos: 1,
    },
    right: { kind: 'literal', value: 1, pos: 7 },
    pos: 4,
  });
  t.match(parseJuel('not x'), { kind: 'unary', op: '!' });
  t.match(parseJuel('x mod 2'), { kind: 'binary', op: '%' });
  t.match(parseJuel('x div 2'), { kind: 'binary', op: '/' });
  t.match(parseJuel('a ? b : c'), { kind: 'conditional', test: { name: 'a' }, consequent: { name: 'b' } });
  const ast = parseJuel('x + 1');
  t.equal(evaluateJuel(ast, { x: 1 }), 2, 'an AST can be evaluated many times');
  t.equal(evaluateJuel(ast, { x: 41 }), 42);
});

t.test('compileCondition accepts one ${...} or a bare expression', async (t) => {
  t.match(compileCondition('${a == 1}'), { kind: 'binary', op: '==' });
  t.match(compileCondition('  ${ a }  '), { kind: 'identifier', name: 'a', pos: 5 });
  t.match(compileCondition('a == 1'), { kind: 'binary' });
  t.match(compileCondition("${s == '}'}"), { kind: 'binary', right: { value: '}' } });
  const bad: [string, number][] = [
    ['${}', 2],
    ['${', 2],
    ['${a', 3],
    ['${a}}', 3],
    ['${a} && ${b}', 3],
    ['x ${a}', 3],
    ['${a} x', 6],
    ['${1 +}', 5],
    ['  ${ a..b }', 7],
    ['#{a}', 0],
    ['', 0],
  ];
  for (const [text, position] of bad) {
    t.throws(() => compileCondition(text), { code: 'EXPRESSION_ERROR', position }, JSON.stringify(text));
  }
});
