import { randomBytes } from 'node:crypto';
import t from 'tap';
import {
  envelopeKeyId,
  isSealed,
  KEY_BYTES,
  open,
  seal,
  secretsKeyOf,
  type SecretsKey,
} from '../../../src/daemon/secrets/envelope.js';
import { codeOfCall } from '../../helpers/error-code.js';

const key = secretsKeyOf(randomBytes(KEY_BYTES));
const other = secretsKeyOf(randomBytes(KEY_BYTES));
const keys = new Map<string, SecretsKey>([[key.id, key]]);
const keyOf = (id: string) => keys.get(id);
const CONTEXT = JSON.stringify(['aiProvider.apiKey', 'acme', 'p-1']);

t.test('a sealed value opens to what was sealed, and shows nothing of it', async (t) => {
  for (const plain of ['sk-live-1234567890', '', 'ünïcödé 🔑', 'x'.repeat(5000)]) {
    const sealed = seal(key, plain, CONTEXT);
    t.match(sealed, /^wfxenc:v1:[0-9a-f]{16}:[A-Za-z0-9_-]+$/, 'the envelope: prefix, version, key id, base64url');
    t.ok(isSealed(sealed));
    t.equal(envelopeKeyId(sealed), key.id);
    t.equal(open(sealed, CONTEXT, keyOf), plain);
    if (plain.length >= 4) {
      t.notOk(sealed.includes(plain), 'not in the envelope as it is');
      t.notOk(sealed.includes(Buffer.from(plain).toString('base64url').slice(0, 12)), 'nor in base64url');
    }
  }
  const a = seal(key, 'same', CONTEXT);
  const b = seal(key, 'same', CONTEXT);
  t.not(a, b, 'a new IV each time: equal secrets do not look equal');
  t.notOk(isSealed('sk-plain-from-an-earlier-version'), 'a plain value is told apart');
  t.equal(envelopeKeyId('sk-plain'), null);
});

t.test('a key id is derived from the key: the same key gives the same id, another key another', async (t) => {
  const raw = randomBytes(KEY_BYTES);
  t.equal(secretsKeyOf(raw).id, secretsKeyOf(Buffer.from(raw)).id);
  t.match(secretsKeyOf(raw).id, /^[0-9a-f]{16}$/);
  t.not(key.id, other.id);
  t.notOk(secretsKeyOf(raw).aes.equals(raw), 'the AES key is derived, not the file key itself');
  t.throws(() => secretsKeyOf(randomBytes(16)), 'a key of another length is refused');
});

t.test('tampering, another record, another key: refused, never a wrong plaintext', async (t) => {
  const sealed = seal(key, 'imap-password', CONTEXT);
  const [head, body] = [sealed.slice(0, sealed.lastIndexOf(':') + 1), sealed.slice(sealed.lastIndexOf(':') + 1)];
  const bytes = Buffer.from(body, 'base64url');
  for (const at of [0, 11, 12, bytes.length - 17, bytes.length - 1]) {
    const flipped = Buffer.from(bytes);
    flipped[at] = flipped[at]! ^ 1;
    t.equal(
      codeOfCall(() => open(head + flipped.toString('base64url'), CONTEXT, keyOf)),
      'SECRET_UNREADABLE',
      `byte ${at}`,
    );
  }
  t.equal(
    codeOfCall(() => open(head + bytes.subarray(0, bytes.length - 1).toString('base64url'), CONTEXT, keyOf)),
    'SECRET_UNREADABLE',
    'cut short',
  );
  t.equal(
    codeOfCall(() => open(`${head}AAAA`, CONTEXT, keyOf)),
    'SECRET_UNREADABLE',
    'too short to hold an IV and tag',
  );
  t.equal(
    codeOfCall(() => open(sealed, JSON.stringify(['aiProvider.apiKey', 'acme', 'p-2']), keyOf)),
    'SECRET_UNREADABLE',
    'moved to another record',
  );
  t.equal(
    codeOfCall(() => open(sealed, JSON.stringify(['aiProvider.apiKey', 'globex', 'p-1']), keyOf)),
    'SECRET_UNREADABLE',
    'moved to another organization',
  );
  const relabelled = sealed.replace(key.id, other.id);
  t.equal(
    codeOfCall(() => open(relabelled, CONTEXT, (id) => (id === other.id ? other : undefined))),
    'SECRET_UNREADABLE',
    'given another key id whose key is held: the header is authenticated too',
  );
  t.equal(
    codeOfCall(() => open(relabelled, CONTEXT, (id) => (id === other.id ? key : undefined))),
    'SECRET_UNREADABLE',
    'the right key under another id: the id is part of the associated data',
  );
  t.equal(
    codeOfCall(() => open(seal(other, 'x', CONTEXT), CONTEXT, keyOf)),
    'SECRETS_KEY_MISSING',
    'a key not held',
  );
  try {
    open(seal(other, 'x', CONTEXT), CONTEXT, keyOf);
  } catch (err) {
    t.match(err, { details: { keyId: other.id } }, 'the missing key is named');
    t.notMatch((err as Error).message, /x$/);
  }
  t.equal(
    codeOfCall(() => open('wfxenc:v2:abc:def', CONTEXT, keyOf)),
    'SECRET_UNREADABLE',
    'an unknown version',
  );
  t.equal(
    codeOfCall(() => open('wfxenc:v1:nothex!!!!!!!!!!!:AAAA', CONTEXT, keyOf)),
    'SECRET_UNREADABLE',
  );
});
