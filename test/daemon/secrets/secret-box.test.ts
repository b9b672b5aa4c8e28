import '../../setup/fixtures.js'; // fixtures under the OS temp dir (see there)
import { randomBytes } from 'node:crypto';
import { appendFileSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { KEY_BYTES, secretsKeyOf } from '../../../src/daemon/secrets/envelope.js';
import { envSource, fileSource, parseKeys, withNewKey } from '../../../src/daemon/secrets/key-source.js';
import { SecretBox } from '../../../src/daemon/secrets/secret-box.js';
import { codeOfCall } from '../../helpers/error-code.js';

t.test('key text: one key a line, base64 or base64url, comments; a bad line named, never shown', async (t) => {
  const a = randomBytes(KEY_BYTES);
  const b = randomBytes(KEY_BYTES);
  const keys = parseKeys(
    `# comment\n\n${a.toString('base64')}\n  ${b.toString('base64url')}  \n${a.toString('base64')}\n`,
    'f',
  );
  t.same(
    keys.map((k) => k.id),
    [secretsKeyOf(a).id, secretsKeyOf(b).id],
    'in order, a repeated key once',
  );
  t.same(
    parseKeys(`${a.toString('base64')},${b.toString('base64url')}`, 'WFX_SECRETS_KEY').map((k) => k.id),
    keys.map((k) => k.id),
    'one line with commas (the environment)',
  );
  const secretLooking = 'not-a-key-but-maybe-a-password';
  let error: unknown;
  try {
    parseKeys(`${a.toString('base64')}\n${secretLooking}\n`, '/x/secrets.key');
  } catch (err) {
    error = err;
  }
  t.match(error, { code: 'SECRETS_KEY_INVALID', details: { line: 2 } });
  t.notMatch((error as Error).message, secretLooking, 'the line is not echoed');
  t.equal(
    codeOfCall(() => parseKeys(randomBytes(16).toString('base64'), 'f')),
    'SECRETS_KEY_INVALID',
    '16 bytes',
  );
  t.equal(
    codeOfCall(() => parseKeys('# only comments\n', 'f')),
    'SECRETS_KEY_INVALID',
    'no key at all',
  );
  const added = withNewKey(withNewKey(null, new Date()).text, new Date());
  t.equal(parseKeys(added.text, 'f').at(-1)!.id, added.keyId, 'a key added comes last, its id in a comment');
  t.match(added.text, new RegExp(`# key ${added.keyId}, added `));
});

t.test('a key file: created 0600 when absent, never replaced by a second create, read again on a use', async (t) => {
  const dir = t.testdir({});
  const path = join(dir, 'secrets.key');
  const source = fileSource(path);
  t.equal(source.read(), null, 'absent');
  const first = withNewKey(null, new Date());
  const second = withNewKey(null, new Date());
  const [x, y] = await Promise.all([source.create(first.text), source.create(second.text)]);
  t.equal(x, y, 'two daemons creating it at once end with one file');
  t.equal(readFileSync(path, 'utf8'), x);
  t.equal(statSync(path).mode & 0o777, 0o600);
  const box = new SecretBox(source, parseKeys(x, path));
  const sealed = box.seal('hunter2', 'ctx');

  // Another daemon sharing the file rotated: a key added there, and a value sealed with it.
  const newer = withNewKey(readFileSync(path, 'utf8'), new Date());
  writeFileSync(path, newer.text);
  const other = new SecretBox(fileSource(path), parseKeys(newer.text, path), newer.keyId);
  const fromOther = other.seal('swordfish', 'ctx');
  t.equal(box.open(fromOther, 'ctx'), 'swordfish', 'a key it lacked is read from the file at the use');
  t.equal(box.open(sealed, 'ctx'), 'hunter2');
  t.equal(box.open('plain-from-an-earlier-version', 'ctx'), 'plain-from-an-earlier-version');

  const stranger = new SecretBox(
    envSource(withNewKey(null, new Date()).text),
    parseKeys(withNewKey(null, new Date()).text, 'e'),
  );
  t.equal(
    codeOfCall(() => box.open(stranger.seal('x', 'ctx'), 'ctx')),
    'SECRETS_KEY_MISSING',
  );
  t.equal(
    codeOfCall(() => box.useKey('0123456789abcdef')),
    'SECRETS_KEY_MISSING',
    'cannot seal with a key it lacks',
  );
  appendFileSync(path, 'garbage\n');
  t.equal(
    codeOfCall(() => box.reload()),
    'SECRETS_KEY_INVALID',
    'a damaged file is reported, not half read',
  );
});

t.test('a box seals with the state key or its last, pins it, adds keys only where it can', async (t) => {
  const dir = t.testdir({});
  const path = join(dir, 'k');
  const source = fileSource(path);
  const text = await source.create(withNewKey(withNewKey(null, new Date()).text, new Date()).text);
  const [k1, k2] = parseKeys(text, path);
  const box = new SecretBox(source, [k1!, k2!]);
  t.equal(box.sealingKeyId, k2!.id, 'the last key of the file');
  t.same(box.pin({ secretsKey: null }), [{ type: 'secretsKey.changed', keyId: k2!.id }]);
  t.same(box.pin({ secretsKey: k2!.id }), [], 'nothing to commit when the state has it');
  t.equal(new SecretBox(source, [k1!, k2!], k1!.id).sealingKeyId, k1!.id, 'the state key wins over the last');
  const added = await box.addKey(new Date());
  t.ok(box.has(added));
  t.equal(parseKeys(readFileSync(path, 'utf8'), path).at(-1)!.id, added, 'written to the file');
  t.equal(statSync(path).mode & 0o777, 0o600);
  box.useKey(added);
  t.equal(box.sealingKeyId, added);

  const env = new SecretBox(envSource(text), [k1!, k2!]);
  t.notOk(env.writable);
  await t.rejects(env.addKey(new Date()), { code: 'VALIDATION_ERROR' }, 'the environment cannot be written');
  t.equal(
    codeOfCall(() => SecretBox.ephemeral().open(SecretBox.ephemeral().seal('a', 'c'), 'c')),
    'SECRETS_KEY_MISSING',
    'each ephemeral box has a key of its own',
  );
});
