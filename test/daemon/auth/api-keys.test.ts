import t from 'tap';
import { generateApiKey, hashSecret, keyMatches, parseApiKey } from '../../../src/daemon/auth/api-keys.js';

t.test('keyMatches: the right secret matches, every time; any other never does', async (t) => {
  const made = generateApiKey();
  const { secret } = parseApiKey(made.apiKey)!;
  const other = parseApiKey(generateApiKey().apiKey)!.secret;
  const key = { secretHash: made.secretHash };

  t.notOk(keyMatches(other, key), 'a wrong secret before any match (checked by hash)');
  t.ok(keyMatches(secret, key), 'the right secret (checked by hash, then remembered)');
  t.ok(keyMatches(secret, key), 'the right secret again (compared with the one that matched)');
  t.notOk(keyMatches(other, key), 'a wrong secret after a match');
  t.notOk(
    keyMatches(`${secret.slice(0, 42)}${secret[42] === 'A' ? 'B' : 'A'}`, key),
    'one character off after a match',
  );
  t.notOk(keyMatches(secret, null), 'no such key');
  t.notOk(keyMatches('A'.repeat(43), null), 'no such key, any secret');
});

t.test(
  'keyMatches: a key whose hash changed is checked against its new hash, not the secret that matched before',
  async (t) => {
    const first = parseApiKey(generateApiKey().apiKey)!.secret;
    const second = parseApiKey(generateApiKey().apiKey)!.secret;
    const key = { secretHash: hashSecret(first) };
    t.ok(keyMatches(first, key));
    key.secretHash = hashSecret(second);
    t.notOk(keyMatches(first, key), 'the old secret no longer matches');
    t.ok(keyMatches(second, key), 'the new one does');
    t.ok(keyMatches(second, key), 'and again, remembered');
    t.notOk(keyMatches(first, key));
  },
);

t.test('keyMatches: what one key remembered does not open another', async (t) => {
  const a = generateApiKey();
  const b = generateApiKey();
  const secretA = parseApiKey(a.apiKey)!.secret;
  const keyA = { secretHash: a.secretHash };
  const keyB = { secretHash: b.secretHash };
  t.ok(keyMatches(secretA, keyA));
  t.notOk(keyMatches(secretA, keyB));
  t.ok(keyMatches(parseApiKey(b.apiKey)!.secret, keyB));
});
