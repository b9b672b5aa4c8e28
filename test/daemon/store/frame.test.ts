import t from 'tap';
import { decodeFrames, encodeFrame, frameBytes, inspectTail } from '../../../src/daemon/store/frame.js';

const lines = (...values: unknown[]) => Buffer.from(values.map((v, i) => encodeFrame(i + 1, v, `k${i}`)).join(''));

t.test('frames round-trip with sequence, key and value', async (t) => {
  const buf = lines({ a: 1 }, 'two', [3, { d: 'é\n' }]);
  const { frames, badOffset } = decodeFrames(buf);
  t.equal(badOffset, null);
  t.same(
    frames.map((f) => [f.seq, f.key, f.value]),
    [
      [1, 'k0', { a: 1 }],
      [2, 'k1', 'two'],
      [3, 'k2', [3, { d: 'é\n' }]],
    ],
  );
  t.equal(frames[1]!.offset, frames[0]!.length, 'offsets are byte positions');
});

t.test('an incomplete last line is a torn tail', async (t) => {
  const whole = lines({ a: 1 }, { b: 2 });
  const torn = whole.subarray(0, whole.length - 5);
  const { frames, badOffset, validAfterBad } = decodeFrames(torn);
  t.equal(frames.length, 1);
  t.equal(badOffset, frames[0]!.length);
  t.equal(validAfterBad, false);
});

t.test('a flipped byte in the middle is damage, not a tail', async (t) => {
  const buf = lines({ a: 1 }, { b: 2 }, { c: 3 });
  const first = decodeFrames(buf).frames[0]!;
  buf[first.length + 20]! ^= 0x01;
  const { frames, badOffset, validAfterBad } = decodeFrames(buf);
  t.equal(frames.length, 1);
  t.equal(badOffset, first.length);
  t.equal(validAfterBad, true, 'a valid frame follows the bad one');
});

t.test('a flipped byte in the last frame is a torn tail', async (t) => {
  const buf = lines({ a: 1 }, { b: 2 });
  buf[buf.length - 3]! ^= 0x01;
  const { frames, validAfterBad } = decodeFrames(buf);
  t.equal(frames.length, 1);
  t.equal(validAfterBad, false);
});

t.test('inspectTail tells zeros, a line damaged by zeros and one damaged otherwise apart', async (t) => {
  const buf = Buffer.concat([lines({ a: 1 }, { b: 2 }, { c: 3 }), Buffer.alloc(100)]);
  const [first, second] = decodeFrames(buf).frames;
  const dataEnd = buf.length - 100;
  t.same(inspectTail(buf, dataEnd), { zeros: true, keys: [], garbled: false, whole: false }, 'zeros alone');
  const zeroed = Buffer.from(buf).fill(0, first!.length + 12, first!.length + 16);
  t.same(
    inspectTail(zeroed, first!.length),
    { zeros: false, keys: ['k2'], garbled: false, whole: false },
    'bytes that never landed: zeros',
  );
  const flipped = Buffer.from(buf);
  flipped[first!.length + 12]! ^= 0x01;
  t.same(
    inspectTail(flipped, first!.length),
    { zeros: false, keys: ['k2'], garbled: true, whole: true },
    'a flipped bit before a valid frame',
  );
  const lastFlipped = Buffer.from(buf);
  lastFlipped[first!.length + second!.length + 12]! ^= 0x01;
  t.same(
    inspectTail(lastFlipped, first!.length + second!.length),
    { zeros: false, keys: [], garbled: false, whole: true },
    'nothing valid after it: a whole line, changed since it was written',
  );
});

t.test('garbage never throws', async (t) => {
  for (const junk of ['', '\n', 'zzzzzzzz 1 - {}\n', '00000000 x - {}\n', 'not a frame at all\n', '12345678\n']) {
    const r = decodeFrames(Buffer.from(junk));
    t.equal(r.frames.length, 0, JSON.stringify(junk));
  }
});

t.test(
  'frameBytes writes JSON given in pieces exactly as the joined text, multi-byte characters included',
  async (t) => {
    const cases = [
      { open: '[', parts: ['{"a":1}', '{"b":"héllo ✓"}', '"\\u2028"'], close: ']' },
      { open: '{"records":[', parts: ['{"x":"日本"}'], close: ']}' },
      { open: '[', parts: [], close: ']' },
    ];
    for (const pieces of cases) {
      const joined = `${pieces.open}${pieces.parts.join(',')}${pieces.close}`;
      const bytes = frameBytes(7, pieces, 'key|tag');
      t.same(bytes, frameBytes(7, joined, 'key|tag'), joined);
      const decoded = decodeFrames(bytes);
      t.equal(decoded.badOffset, null, 'the checksum holds');
      t.same(decoded.frames[0], { seq: 7, key: 'key|tag', value: JSON.parse(joined), offset: 0, length: bytes.length });
    }
  },
);

t.test(
  'frames share slabs: each stays whole and unchanged while later ones are made, across slabs and sizes',
  async (t) => {
    // Characters of every UTF-8 length, a lone surrogate (3 bytes, as U+FFFD), and frames from a
    // few bytes to past the largest one a slab takes (32 KiB), so that slabs fill and turn over.
    const texts = ['a', 'é', '✓', '😀', '\ud800', '日本語'];
    const made: Array<{ bytes: Buffer; copy: Buffer; value: unknown; key: string }> = [];
    for (let i = 0; i < 600; i++) {
      const size = i % 50 === 0 ? 20_000 : (i * 37) % 700;
      const value = { i, text: texts[i % texts.length]!.repeat(size) };
      const key = `id${i}|${texts[i % texts.length]}`;
      const bytes =
        i % 2 === 0
          ? frameBytes(i, JSON.stringify(value), key)
          : frameBytes(i, { open: '[', parts: [JSON.stringify(value)], close: ']' }, key);
      made.push({ bytes, copy: Buffer.from(bytes), value: i % 2 === 0 ? value : [value], key });
    }
    let whole = 0;
    for (const [i, m] of made.entries()) {
      if (!m.bytes.equals(m.copy)) t.fail(`frame ${i} changed after it was made`);
      const decoded = decodeFrames(m.bytes);
      if (decoded.badOffset !== null || decoded.frames.length !== 1) t.fail(`frame ${i} does not decode`);
      else if (
        JSON.stringify(decoded.frames[0]!.value) === JSON.stringify(m.value) &&
        decoded.frames[0]!.key === m.key.replace('\ud800', '\ufffd')
      )
        whole++;
    }
    t.equal(whole, made.length, 'every frame decodes to its value and key');
    const joined = decodeFrames(Buffer.concat(made.map((m) => m.bytes)));
    t.equal(joined.badOffset, null);
    t.equal(joined.frames.length, made.length, 'and they read back one after the other as a file');
  },
);
