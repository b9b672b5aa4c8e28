import { createHash } from 'node:crypto';
import t from 'tap';
import { decodeBase64, decodeHex } from '../../../src/shared/webhooks/encoding.js';

const digest = createHash('sha256').update('wfx').digest();
const hex = digest.toString('hex');
const b64 = digest.toString('base64');

t.test('hex: exactly the digest length in lower case; anything else is refused', async (t) => {
  t.same(decodeHex(hex, 32), digest, 'the exact text');
  t.equal(decodeHex(`${hex}zz`, 32), null, 'trailing garbage (Buffer.from stops before it)');
  t.equal(decodeHex(`${hex}00`, 32), null, 'trailing hex digits: too long');
  t.equal(decodeHex(hex.slice(0, 62), 32), null, 'too short');
  t.equal(decodeHex(`${hex.slice(0, 63)}g`, 32), null, 'a non-hex digit');
  t.equal(decodeHex(` ${hex.slice(1)}`, 32), null, 'whitespace');
  t.equal(decodeHex(hex.toUpperCase(), 32), null, 'upper case, when lower case is the encoding');
  t.same(decodeHex(hex.toUpperCase(), 32, 'either'), digest, 'upper case throughout, when either is allowed');
  const mixed = hex.replace(/[a-f]/, (c) => c.toUpperCase());
  t.not(mixed, hex);
  t.equal(decodeHex(mixed, 32, 'either'), null, 'a mix of cases, even when either is allowed');
});

t.test('base64: only the canonical text of the digest (padded, standard alphabet, zero unused bits)', async (t) => {
  t.same(decodeBase64(b64, 32), digest, 'the exact text');
  t.ok(b64.endsWith('='), 'a 32-byte digest is padded');
  t.equal(decodeBase64(`${b64}AAAA`, 32), null, 'trailing base64: too long');
  t.equal(decodeBase64(`${b64}!`, 32), null, 'trailing garbage');
  t.equal(decodeBase64(b64.replace(/=+$/, ''), 32), null, 'without its padding');
  t.equal(decodeBase64(`${b64.slice(0, 20)} ${b64.slice(21)}`, 32), null, 'whitespace inside');
  t.equal(decodeBase64(`${b64.slice(0, 43)}\n`, 32), null, 'a newline instead of the padding');
  const plusSlash = Buffer.alloc(32, 0xfb);
  t.match(plusSlash.toString('base64'), /[+/]/);
  t.same(decodeBase64(plusSlash.toString('base64'), 32), plusSlash, 'the standard alphabet');
  t.equal(decodeBase64(`${plusSlash.toString('base64url')}=`, 32), null, 'base64url letters for + and /');
  t.equal(decodeBase64(`${b64.slice(0, 20)}-${b64.slice(21)}`, 32), null, 'a base64url letter');
  // The last character before "=" carries 2 unused bits: set, the text decodes to the same bytes, but is not canonical.
  const last = b64[42]!;
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
  const noncanonical = `${b64.slice(0, 42)}${alphabet[alphabet.indexOf(last) | 1]}=`;
  t.not(noncanonical, b64);
  t.same(Buffer.from(noncanonical, 'base64'), digest, 'Node decodes it to the same bytes');
  t.equal(decodeBase64(noncanonical, 32), null, 'non-zero unused bits');
  t.equal(decodeBase64(b64, 20), null, 'another length than the digest');
});
