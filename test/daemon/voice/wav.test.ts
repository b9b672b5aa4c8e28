import t from 'tap';
import { readWav } from '../../../src/daemon/voice/wav.js';
import { silentWav } from '../../helpers/openai-server.js';

t.test('a PCM WAV: format, channels, rate, sample size and duration', async (t) => {
  const wav = silentWav(16000, 0.5);
  t.same(readWav(wav), {
    audioFormat: 1,
    channels: 1,
    sampleRate: 16000,
    bitsPerSample: 16,
    dataBytes: 16000,
    dataOffset: 44,
    durationMs: 500,
  });
});

t.test('a chunk before data is skipped; a placeholder size is cut to the bytes there are', async (t) => {
  const plain = silentWav(8000, 0.25);
  const list = Buffer.concat([
    Buffer.from('LIST', 'latin1'),
    Buffer.from([5, 0, 0, 0]),
    Buffer.from('INFOx\0', 'latin1'),
  ]);
  const withList = Buffer.concat([plain.subarray(0, 36), list, plain.subarray(36)]);
  t.match(readWav(withList), { dataBytes: 4000, durationMs: 250 }, 'an odd-sized chunk is padded to even');
  const streamed = Buffer.from(plain);
  streamed.writeUInt32LE(0x7ffff000, 40); // what a program writing to a pipe puts there
  t.match(readWav(streamed), { dataBytes: 4000, durationMs: 250 });
});

t.test('anything else is no WAV', async (t) => {
  for (const bytes of [Buffer.alloc(0), Buffer.from('RIFF\0\0\0\0AVI LIST'), Buffer.from('ID3\u0004 mp3 data')])
    t.equal(readWav(bytes), null);
  const noData = silentWav(8000, 0.1).subarray(0, 36);
  t.equal(readWav(noData), null, 'no data chunk');
});
