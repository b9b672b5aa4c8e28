import { execFileSync } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import {
  DEFAULT_PROGRAMS,
  speakLocally,
  transcribeLocally,
  vocabularyGrammar,
} from '../../../src/daemon/voice/local-voice.js';
import { readWav } from '../../../src/daemon/voice/wav.js';
import { silentWav } from '../../helpers/openai-server.js';

/** Whether `program` runs here. */
function have(program: string, arg: string): boolean {
  try {
    execFileSync(program, [arg], { stdio: 'ignore' });
    return true;
  } catch (err) {
    return (err as { code?: string }).code !== 'ENOENT';
  }
}
const HAVE_ESPEAK = have('espeak-ng', '--version');
const HAVE_SPHINX = have('pocketsphinx_continuous', '-h');
const skipEngines =
  !(HAVE_ESPEAK && HAVE_SPHINX) &&
  !process.env.CI &&
  'espeak-ng or pocketsphinx is not installed (apt-get install espeak-ng pocketsphinx pocketsphinx-en-us)';

const dir = mkdtempSync(join(tmpdir(), 'wfx-voice-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));
const signal = new AbortController().signal;

t.test('vocabularyGrammar: one JSGF rule of the words, in lower case, each once', async (t) => {
  t.equal(
    vocabularyGrammar(['Yes', 'no', 'yes', ' thank you ']),
    '#JSGF V1.0;\ngrammar vocabulary;\npublic <utterance> = ( yes | no | thank you )+ ;\n',
  );
});

t.test(
  'espeak-ng speaks a WAV; pocketsphinx hears the words back with a vocabulary',
  { skip: skipEngines },
  async (t) => {
    const spoken = await speakLocally(
      { text: 'yes no stop go', voice: 'en-us', rate: 140, timeoutMs: 30_000 },
      dir,
      signal,
    );
    if (!spoken.ok) return t.fail(JSON.stringify(spoken.failure));
    const info = readWav(spoken.wav);
    t.match(info, { audioFormat: 1, channels: 1, bitsPerSample: 16 }, 'a 16-bit PCM mono WAV');
    t.ok(info && info.sampleRate >= 16000, `sample rate ${info?.sampleRate}`);
    t.ok(info && info.durationMs > 500 && info.durationMs < 10_000, `${info?.durationMs} ms of speech`);
    t.equal(info?.dataBytes, spoken.wav.length - 44, 'a complete header: the sizes are the real ones');

    const path = join(dir, 'said.wav');
    writeFileSync(path, spoken.wav);
    const heard = await transcribeLocally(
      {
        wavPath: path,
        wav: spoken.wav,
        language: 'en',
        vocabulary: ['yes', 'no', 'stop', 'go', 'hello', 'world'],
        timeoutMs: 30_000,
      },
      dir,
      signal,
    );
    t.same(heard, { ok: true, text: 'yes no stop go' }, 'the words spoken');
  },
);

t.test('a missing engine is VOICE_ENGINE_MISSING naming the package', async (t) => {
  const programs = { espeak: join(dir, 'no-such-espeak'), pocketsphinx: join(dir, 'no-such-sphinx') };
  const spoken = await speakLocally({ text: 'hi', timeoutMs: 5000 }, dir, signal, programs);
  t.match(spoken, { ok: false, failure: { code: 'VOICE_ENGINE_MISSING', message: /apt-get install espeak-ng/ } });
  const wav = silentWav(16000, 0.2);
  const path = join(dir, 'silence.wav');
  writeFileSync(path, wav);
  const heard = await transcribeLocally({ wavPath: path, wav, language: 'en', timeoutMs: 5000 }, dir, signal, programs);
  t.match(heard, { ok: false, failure: { code: 'VOICE_ENGINE_MISSING', message: /pocketsphinx-en-us/ } });
  t.equal(DEFAULT_PROGRAMS.espeak, 'espeak-ng');
});

t.test('English only, 16-bit mono WAV only: others fail before any program runs', async (t) => {
  const wav = silentWav(16000, 0.2);
  const path = join(dir, 'mono.wav');
  writeFileSync(path, wav);
  const missing = { espeak: join(dir, 'none'), pocketsphinx: join(dir, 'none') };
  t.match(await transcribeLocally({ wavPath: path, wav, language: 'de', timeoutMs: 5000 }, dir, signal, missing), {
    ok: false,
    failure: { code: 'VOICE_ENGINE_MISSING', message: /English only, not de: name a provider/ },
  });
  const stereo = Buffer.from(wav);
  stereo.writeUInt16LE(2, 22);
  t.match(
    await transcribeLocally({ wavPath: path, wav: stereo, language: 'en', timeoutMs: 5000 }, dir, signal, missing),
    {
      ok: false,
      failure: { code: 'VOICE_FAILED', message: /16-bit PCM mono WAV/ },
    },
  );
  t.match(
    await transcribeLocally(
      { wavPath: path, wav: Buffer.from('ID3 mp3'), language: 'en', timeoutMs: 5000 },
      dir,
      signal,
      missing,
    ),
    { ok: false, failure: { code: 'VOICE_FAILED' } },
  );
});

t.test('an engine that runs past its timeout is killed: VOICE_TIMEOUT; a failing one VOICE_FAILED', async (t) => {
  const slow = join(dir, 'slow.sh');
  writeFileSync(slow, '#!/bin/sh\nsleep 30\n');
  chmodSync(slow, 0o755);
  const started = Date.now();
  const r = await speakLocally({ text: 'hi', timeoutMs: 300 }, dir, signal, { espeak: slow, pocketsphinx: slow });
  t.match(r, { ok: false, failure: { code: 'VOICE_TIMEOUT' } });
  t.ok(Date.now() - started < 25_000, 'it did not wait for the program');
  const failing = join(dir, 'fail.sh');
  writeFileSync(failing, '#!/bin/sh\necho "no such voice: xx" >&2\nexit 1\n');
  chmodSync(failing, 0o755);
  t.match(
    await speakLocally({ text: 'hi', voice: 'xx', timeoutMs: 5000 }, dir, signal, {
      espeak: failing,
      pocketsphinx: failing,
    }),
    {
      ok: false,
      failure: { code: 'VOICE_FAILED', message: /no such voice: xx/ },
    },
  );
  const aborted = new AbortController();
  const running = speakLocally({ text: 'hi', timeoutMs: 30_000 }, dir, aborted.signal, {
    espeak: slow,
    pocketsphinx: slow,
  });
  aborted.abort();
  t.match(await running, { ok: false, failure: { code: 'CANCELLED' } }, 'a cancelled node kills its program');
});
