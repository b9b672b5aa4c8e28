import t from 'tap';
import {
  findReferences,
  resolveDeep,
  resolveTemplate,
  type TemplateContext,
} from '../../../src/shared/expr/template.js';

const order = { id: 42, total: 99.5, paid: false, lines: [{ sku: 'A-1' }, { sku: 'B-2' }], note: null };
const ctx: TemplateContext = {
  vars: {
    order,
    customer: { name: 'Ada', address: { city: 'London', zip: null } },
    items: [{ id: 'i0' }, { id: 'i1' }, 'plain'],
    count: 3,
    flag: true,
    name: 'World',
    nothing: null,
    undef: undefined,
    empty: '',
    _under: 'u',
    a1_b2: 'mixed',
    formData: { approve: true },
  },
  env: { API_URL: 'https://api.example.com', EMPTY: '' },
};

const resolve = (text: string): unknown => resolveTemplate(text, ctx).value;
const missingOf = (text: string): string[] => resolveTemplate(text, ctx).missing;

t.test('rule 1: names, dotted paths, array indexes and env values', async (t) => {
  t.equal(resolve('Approve order {order.id}?'), 'Approve order 42?');
  t.equal(resolve('Hello {name}!'), 'Hello World!');
  t.equal(resolve('{customer.address.city}'), 'London');
  t.equal(resolve('{items.0.id}'), 'i0');
  t.same(resolve('{items.1}'), { id: 'i1' });
  t.equal(resolve('{order.lines.1.sku}'), 'B-2');
  t.equal(resolve('{env.API_URL}/x'), 'https://api.example.com/x');
  t.equal(resolve('{env.EMPTY}'), '');
  t.equal(resolve('{_under}-{a1_b2}'), 'u-mixed');
  t.equal(resolve('{name}{name}'), 'WorldWorld', 'adjacent references');
  t.equal(resolve('x{name}y{count}z'), 'xWorldy3z');
  t.strictSame(missingOf('{order.id} {env.API_URL}'), []);
});

t.test('rule 2: ${...} is left exactly as written', async (t) => {
  const same = [
    '${formData.approve}',
    '${a.b == 1 && c < 2}',
    "${x == '}'}",
    '${x == "{name}"}',
    '${ {"a": {"b": 1}} }',
    '${unterminated {name}',
    'text ${a',
  ];
  for (const text of same) {
    t.strictSame(resolveTemplate(text, ctx), { value: text, missing: [] }, text);
  }
  t.equal(resolve('cost: ${a} and {name}'), 'cost: ${a} and World', 'only the {ref} is resolved');
  t.equal(resolve('${a}{name}${b}'), '${a}World${b}');
  t.equal(resolve('$ {name}'), '$ World', 'a $ not directly before { is plain text');
  t.equal(resolve('$$ {name} $'), '$$ World $');
  t.equal(resolve("${a} then {name} then ${x == '}'} then {count}"), "${a} then World then ${x == '}'} then 3");
});

t.test('rule 3: a whole-string reference keeps its type', async (t) => {
  t.strictSame(resolve('{order.id}'), 42);
  t.strictSame(resolve('{order.total}'), 99.5);
  t.strictSame(resolve('{order.paid}'), false);
  t.strictSame(resolve('{flag}'), true);
  t.strictSame(resolve('{nothing}'), null);
  t.strictSame(resolve('{undef}'), null, 'a key holding undefined reads as null');
  t.strictSame(resolve('{order.note}'), null);
  t.strictSame(resolve('{empty}'), '');
  t.strictSame(resolve('{order}'), order, 'the object, same content');
  t.strictSame(resolve('{order.lines}'), order.lines);
  const r = resolveTemplate('{order}', ctx);
  t.not(r.value, order, 'a copy: changing it cannot change the variables');
  (r.value as { id: number }).id = 7;
  t.equal(order.id, 42);
  t.strictSame(r.missing, []);
  t.equal(resolve(' {order.id}'), ' 42', 'a space makes it text');
  t.equal(resolve('{order.id} '), '42 ');
  t.equal(resolve('{order.id}{order.id}'), '4242');
});

t.test('rule 4: values inside longer text', async (t) => {
  t.equal(resolve('n={count}'), 'n=3');
  t.equal(resolve('t={order.total}'), 't=99.5');
  t.equal(resolve('b={flag}/{order.paid}'), 'b=true/false');
  t.equal(resolve('null=[{nothing}]'), 'null=[]');
  t.equal(resolve('order: {order.lines}'), 'order: [{"sku":"A-1"},{"sku":"B-2"}]');
  t.equal(resolve('c: {customer.address}'), 'c: {"city":"London","zip":null}');
  t.equal(resolve('s: {name}'), 's: World');
});

t.test('rule 5: missing references resolve to "" and are reported', async (t) => {
  t.strictSame(resolveTemplate('{nope}', ctx), { value: '', missing: ['nope'] });
  t.strictSame(resolveTemplate('Order {order.code}!', ctx), { value: 'Order !', missing: ['order.code'] });
  t.strictSame(resolveTemplate('{order.id.x}', ctx), { value: '', missing: ['order.id.x'] }, 'into a number');
  t.strictSame(resolveTemplate('{name.length}', ctx), { value: '', missing: ['name.length'] }, 'into a string');
  t.strictSame(resolveTemplate('{nothing.x}', ctx), { value: '', missing: ['nothing.x'] }, 'into null');
  t.strictSame(resolveTemplate('{customer.address.zip.code}', ctx), {
    value: '',
    missing: ['customer.address.zip.code'],
  });
  t.strictSame(resolveTemplate('{items.3}', ctx), { value: '', missing: ['items.3'] }, 'past the end');
  t.strictSame(resolveTemplate('{items.01}', ctx), { value: '', missing: ['items.01'] }, 'not a canonical index');
  t.strictSame(resolveTemplate('{items.length}', ctx), { value: '', missing: ['items.length'] });
  t.strictSame(resolveTemplate('{order.0}', ctx), { value: '', missing: ['order.0'] });
  t.strictSame(resolveTemplate('{env.NOPE}', ctx), { value: '', missing: ['env.NOPE'] });
  t.strictSame(
    resolveTemplate('{env}', ctx),
    { value: '', missing: ['env'] },
    'the environment as a whole is not a value',
  );
  t.strictSame(resolveTemplate('{env.API_URL.x}', ctx), { value: '', missing: ['env.API_URL.x'] });
  t.strictSame(
    resolveTemplate('{a} {b} {a} {name}', ctx),
    { value: '   World', missing: ['a', 'b', 'a'] },
    'once per occurrence',
  );
});

t.test('rule 6: braces without a valid reference stay literal; \\{ escapes', async (t) => {
  const same = [
    '{"a":1}',
    '{ name }',
    '{name }',
    '{1abc}',
    '{}',
    '{a.}',
    '{.a}',
    '{a..b}',
    '{a-b}',
    '{a.1b}',
    '{',
    '}',
    '{{',
    'a { b } c',
    '{é}',
  ];
  for (const text of same) t.strictSame(resolveTemplate(text, ctx), { value: text, missing: [] }, text);
  t.equal(resolve('{"id": 1, "name": "x"}'), '{"id": 1, "name": "x"}', 'JSON-looking text untouched');
  t.equal(resolve('[{"a":1},{"b":[2]}]'), '[{"a":1},{"b":[2]}]');
  t.equal(resolve('{{name}}'), '{World}', 'a valid reference inside stray braces still resolves');
  t.equal(resolve('\\{name}'), '{name}', 'escaped');
  t.strictSame(resolveTemplate('\\{nope}', ctx), { value: '{nope}', missing: [] }, 'escaped is not a reference');
  t.equal(resolve('\\{name} is {name}'), '{name} is World');
  t.equal(resolve('a\\b \\n'), 'a\\b \\n', 'other backslashes are ordinary characters');
  t.equal(resolve('\\\\{name}'), '\\{name}', 'only the backslash directly before { escapes');
  t.equal(resolve('$\\{name}'), '${name}');
  t.equal(resolve('\\${a}'), '\\${a}');
});

t.test('rule 7: only own properties are followed', async (t) => {
  for (const path of [
    'order.__proto__',
    'order.constructor',
    'order.constructor.name',
    'order.toString',
    'order.hasOwnProperty',
    'items.constructor',
    'items.map',
    'constructor',
    'toString',
    '__proto__',
    'env.constructor',
    'name.constructor',
  ]) {
    t.strictSame(resolveTemplate(`{${path}}`, ctx), { value: '', missing: [path] }, path);
  }
  const parsed = JSON.parse('{"__proto__": {"x": 1}}') as unknown;
  t.strictSame(
    resolveTemplate('{p.__proto__.x}', { vars: { p: parsed }, env: {} }).value,
    1,
    'an own __proto__ key is data',
  );
});

t.test('resolveDeep walks arrays and objects without mutating them', async (t) => {
  const input = {
    title: 'Order {order.id}',
    '{name}': 'keys are not resolved',
    amount: '{order.total}',
    nested: { list: ['{items.0.id}', 5, null, true, { deep: '{missing.x}' }], expr: '${a}' },
    untouched: 12,
  };
  const before = JSON.stringify(input);
  const r = resolveDeep(input, ctx);
  t.strictSame(r.value, {
    title: 'Order 42',
    '{name}': 'keys are not resolved',
    amount: 99.5,
    nested: { list: ['i0', 5, null, true, { deep: '' }], expr: '${a}' },
    untouched: 12,
  });
  t.strictSame(r.missing, ['missing.x']);
  t.equal(JSON.stringify(input), before, 'input unchanged');
  t.not(r.value, input);
  t.not((r.value as typeof input).nested, input.nested);
  t.not((r.value as typeof input).nested.list, input.nested.list);
  t.strictSame(resolveDeep('{count}', ctx), { value: 3, missing: [] }, 'a bare string');
  t.strictSame(resolveDeep(7, ctx), { value: 7, missing: [] });
  t.strictSame(resolveDeep(null, ctx), { value: null, missing: [] });
  t.strictSame(resolveDeep(['{a}', ['{b}', '{a}']], ctx), { value: ['', ['', '']], missing: ['a', 'b', 'a'] });
  const date = new Date(0);
  t.equal((resolveDeep({ d: date }, ctx).value as { d: Date }).d, date, 'class instances are leaves');
  const withProtoKey = JSON.parse('{"__proto__": "{name}"}') as unknown;
  const out = resolveDeep(withProtoKey, ctx).value as Record<string, unknown>;
  t.ok(Object.hasOwn(out, '__proto__'), 'an own __proto__ key stays an own key');
  t.equal(out.__proto__, 'World');
  t.equal(Object.getPrototypeOf(out), Object.prototype);
});

t.test('findReferences lists reference paths for validation', async (t) => {
  t.strictSame(findReferences('Approve order {order.id} for {customer.name}?'), ['order.id', 'customer.name']);
  t.strictSame(findReferences('{a} {a}'), ['a', 'a']);
  t.strictSame(findReferences('{env.API_URL}/x/{items.0.id}'), ['env.API_URL', 'items.0.id']);
  t.strictSame(findReferences('cost: ${a} and {b}'), ['b']);
  t.strictSame(findReferences("${x == '{c}'} {d}"), ['d']);
  t.strictSame(findReferences('\\{escaped} {"a":1} { spaced } {1x} {}'), []);
  t.strictSame(findReferences('no braces at all'), []);
  t.strictSame(findReferences(''), []);
  t.strictSame(findReferences('{nope.missing}'), ['nope.missing'], 'whether it resolves does not matter');
});

t.test('plain text and empty strings', async (t) => {
  t.strictSame(resolveTemplate('', ctx), { value: '', missing: [] });
  t.strictSame(resolveTemplate('just text', ctx), { value: 'just text', missing: [] });
  t.strictSame(resolveTemplate('😀 {name} 😀', ctx), { value: '😀 World 😀', missing: [] });
  const long = `${'x'.repeat(100_000)}{name}`;
  t.equal((resolve(long) as string).length, 100_005);
});
