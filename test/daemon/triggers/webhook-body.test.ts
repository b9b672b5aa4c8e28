import { createHash } from 'node:crypto';
import t from 'tap';
import { DELIVERY_PREVIEW_BYTES } from '../../../src/shared/api/index.js';
import { bodySummary, clipText, previewOf } from '../../../src/daemon/triggers/webhook-body.js';

const utf8 = (s: string) => Buffer.byteLength(s);
/** True when `s` survives a round trip through UTF-8 (no lone surrogate). */
const wellFormed = (s: string) => Buffer.from(s, 'utf8').toString('utf8') === s;

t.test('a short body is its own preview, whole', async (t) => {
  t.same(previewOf(Buffer.from('{"zen":"ok"}')), { preview: '{"zen":"ok"}', truncated: false });
  t.same(previewOf(Buffer.alloc(0)), { preview: '', truncated: false });
});

t.test('a long body: at most DELIVERY_PREVIEW_BYTES of UTF-8, never a character cut, marked truncated', async (t) => {
  t.ok(DELIVERY_PREVIEW_BYTES <= 512, 'a few hundred bytes at most');
  const ascii = previewOf(Buffer.alloc(500_000, 'x'));
  t.equal(utf8(ascii.preview), DELIVERY_PREVIEW_BYTES);
  t.equal(ascii.truncated, true);
  // Every offset of a 2-, 3- and 4-byte character against the cut.
  for (const ch of ['é', '€', '💡']) {
    for (let pad = 0; pad < 4; pad++) {
      const body = Buffer.from('a'.repeat(DELIVERY_PREVIEW_BYTES - 3 + pad) + ch.repeat(10));
      const { preview, truncated } = previewOf(body);
      t.ok(utf8(preview) <= DELIVERY_PREVIEW_BYTES, `${ch} +${pad}: within the budget`);
      t.ok(wellFormed(preview) && !preview.includes('\uFFFD'), `${ch} +${pad}: no character cut in two`);
      t.ok(body.toString('utf8').startsWith(preview), `${ch} +${pad}: the body's own first characters`);
      t.equal(truncated, true);
    }
  }
});

t.test('bytes that are not UTF-8 and control characters become U+FFFD, within the byte budget', async (t) => {
  const binary = previewOf(Buffer.alloc(1000, 0xff));
  t.ok(utf8(binary.preview) <= DELIVERY_PREVIEW_BYTES, 'each replacement takes 3 bytes: cut to the budget');
  t.match(binary.preview, /^\uFFFD+$/);
  t.equal(binary.truncated, true);
  const controls = previewOf(Buffer.from('a\u0000b\u001b[31mc\td\ne\r\u007f\u0085'));
  t.equal(
    controls.preview,
    'a\uFFFDb\uFFFD[31mc\td\ne\r\uFFFD\uFFFD',
    'tab and newlines kept; escapes and NUL replaced',
  );
  t.equal(controls.truncated, false);
  const shortBinary = previewOf(Buffer.from([0x41, 0xc3]));
  t.equal(shortBinary.preview, 'A\uFFFD', 'a character cut by the end of the body itself');
});

t.test('bodySummary: size, SHA-256, preview; never the body', async (t) => {
  const body = Buffer.alloc(512_000, 'secret-payload ');
  const summary = bodySummary(body);
  t.equal(summary.bytes, 512_000);
  t.equal(summary.sha256, `sha256:${createHash('sha256').update(body).digest('hex')}`);
  t.equal(summary.truncated, true);
  t.ok(utf8(JSON.stringify(summary)) < 1024, 'a summary is small whatever the body');
});

t.test('clipText: bounded, at a code point, marked', async (t) => {
  t.equal(clipText('push', 200), 'push');
  t.equal(clipText(null, 200), null);
  const clipped = clipText('x'.repeat(1000), 200);
  t.equal(clipped.length, 200);
  t.ok(clipped.endsWith('…'));
  const emoji = clipText('💡'.repeat(300), 200);
  t.ok(emoji.length <= 200 && wellFormed(emoji), 'no surrogate pair cut in two');
});
