import t from 'tap';
import { isOrganizationName, isSafeKey, RESERVED_NAMES } from '../../src/shared/names.js';

t.test('isSafeKey refuses every property of Object.prototype, nothing else', async (t) => {
  for (const name of ['__proto__', 'constructor', 'toString', 'hasOwnProperty']) t.notOk(isSafeKey(name), name);
  for (const name of ['order', 'proto', 'Constructor', '']) t.ok(isSafeKey(name), JSON.stringify(name));
  t.ok(RESERVED_NAMES.includes('__proto__'));
});

t.test('isOrganizationName: letters, digits, _ . -, not first a punctuation, at most 100, not reserved', async (t) => {
  for (const name of ['acme', 'a', 'Acme_2.eu-west', '9lives', 'x'.repeat(100)]) t.ok(isOrganizationName(name), name);
  for (const name of ['', '-acme', '.acme', 'ac me', 'a/b', 'x'.repeat(101), 'constructor', 42, null])
    t.notOk(isOrganizationName(name), String(name));
});
