import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import t, { type Test } from 'tap';
import { bucketOf } from '../../../src/daemon/state/ids.js';
import { readWav } from '../../../src/daemon/voice/wav.js';
import { STATE } from '../../../src/daemon/state/state.js';
import { ended, engineHarness } from '../../helpers/engine.js';
import { reply, startOpenAiServer } from '../../helpers/openai-server.js';

function have(program: string, arg: string): boolean {
  try {
    execFileSync(program, [arg], { stdio: 'ignore' });
    return true;
  } catch (err) {
    return (err as { code?: string }).code !== 'ENOENT';
  }
}
const skipEngines =
  !(have('espeak-ng', '--version') && have('pocketsphinx_continuous', '-h')) &&
  !process.env.CI &&
  'espeak-ng or pocketsphinx is not installed (apt-get install espeak-ng pocketsphinx pocketsphinx-en-us)';

const ROUND_TRIP = (speak: string, hear: string) => `processId: AUTO
name: Round trip
nodes:
  start: { type: startEvent, next: say }
  say:
    type: voiceTask
    operation: speak
    text: "{words}"
${speak}
    resultVariable: spoken
    next: hear
  hear:
    type: voiceTask
    operation: transcribe
    audio: "{spoken.fileId}"
${hear}
    resultVariable: heard
    next: done
  done: { type: endEvent }
`;

t.test(
  'the local engines: a WAV stored with the completion, transcribed back to the words',
  { skip: skipEngines },
  async (t) => {
    const h = await engineHarness(t);
    const pid = await h.publish(
      ROUND_TRIP('    voice: en-us\n    rate: 140', '    vocabulary: [yes, no, stop, go, hello]'),
    );
    const inst = await ended(h, (await h.start(pid, { words: 'hello stop go' })).processInstanceId);
    t.equal(inst.stateCd, STATE.COMPLETED, JSON.stringify(inst.error));
    const spoken = inst.variables.spoken as {
      fileId: string;
      mimeType: string;
      bytes: number;
      durationMs: number;
      sha256: string;
      name: string;
    };
    t.match(spoken, { name: 'say.wav', mimeType: 'audio/wav' });
    const file = h.store.state.files[spoken.fileId]!;
    t.match(file, { organization: 'default', bytes: spoken.bytes, sha256: spoken.sha256 }, 'the file is recorded');
    const wav = readFileSync(h.files.blobPath(file.sha256));
    t.equal(wav.length, spoken.bytes);
    t.equal(readWav(wav)?.durationMs, spoken.durationMs, 'its duration from its header');
    t.same(inst.variables.heard, { text: 'hello stop go', language: 'en' });
    await h.archived(inst.processInstanceId);
    const held = h.store.state.files[spoken.fileId]!;
    t.same(held, { ...file, inHistory: [bucketOf(inst.processInstanceId)] }, 'held by the history it went to');
    const restarted = await h.restart();
    t.same(restarted.store.state.files[spoken.fileId], held, 'journaled: it survives a restart');
  },
);

t.test('audio that names no file of the organization fails FILE_NOT_FOUND before any engine runs', async (t) => {
  const h = await engineHarness(t, undefined, undefined, {
    voicePrograms: { espeak: '/nonexistent/espeak', pocketsphinx: '/nonexistent/sphinx' },
  });
  const theirs = await h.files.put({
    organization: 'acme',
    name: 'a.wav',
    mimeType: 'audio/wav',
    content: Buffer.from('RIFF'),
  });
  const pid = await h.publish(`processId: AUTO
name: Hear
nodes:
  start: { type: startEvent, next: hear }
  hear: { type: voiceTask, operation: transcribe, audio: "{audio}", next: done }
  done: { type: endEvent }
`);
  for (const [audio, message] of [
    ['not a reference', /audio is not a file reference/],
    [theirs.fileId, /no file file_[0-9a-f]{32} in this organization/],
  ] as const) {
    const inst = await ended(h, (await h.start(pid, { audio })).processInstanceId);
    t.match(inst.error, { code: 'FILE_NOT_FOUND', nodeId: 'hear', message });
  }
});

t.test('a missing local engine fails the node with VOICE_ENGINE_MISSING', async (t) => {
  const h = await engineHarness(t, undefined, undefined, {
    voicePrograms: { espeak: '/nonexistent/espeak-ng', pocketsphinx: '/nonexistent/sphinx' },
  });
  const pid = await h.publish(ROUND_TRIP('', ''));
  const inst = await ended(h, (await h.start(pid, { words: 'hi' })).processInstanceId);
  t.match(inst.error, { code: 'VOICE_ENGINE_MISSING', nodeId: 'say', message: /apt-get install espeak-ng/ });
  t.same(h.store.state.files, {}, 'no file');
});

async function providerHarness(t: Test) {
  const server = await startOpenAiServer({ apiKey: 'sk-voice-secret-0123456789' });
  t.teardown(() => server.close());
  const h = await engineHarness(t);
  await h.store.commit({
    type: 'aiProvider.saved',
    provider: {
      providerId: 'speech',
      name: 'speech',
      organization: 'default',
      kind: 'openai-compatible',
      baseUrl: server.baseUrl,
      model: 'gpt-x',
      apiKey: 'sk-voice-secret-0123456789',
      isDefault: false,
      createdAt: '2026-11-21T00:00:00.000Z',
      updatedAt: '2026-11-21T00:00:00.000Z',
    },
  });
  return { h, server };
}

t.test('a provider speaks (/audio/speech) and transcribes (/audio/transcriptions)', async (t) => {
  const { h, server } = await providerHarness(t);
  server.script(reply.status(429, 'slow down', { 'retry-after': '0' }));
  server.script(reply.text('unused for speech'), reply.text('hello from the provider'));
  const pid = await h.publish(
    ROUND_TRIP(
      '    provider: speech\n    voice: nova\n    rate: 350\n    retry: { maxAttempts: 2, initialInterval: 10ms }',
      '    provider: speech\n    model: whisper-large',
    ),
  );
  const inst = await ended(h, (await h.start(pid, { words: 'Hello there' })).processInstanceId);
  t.equal(inst.stateCd, STATE.COMPLETED, JSON.stringify(inst.error));
  const [refused, speech, transcription] = server.requests;
  t.equal(refused!.url, '/v1/audio/speech', 'the 429 was retried');
  t.match(speech!.body, { model: 'tts-1', input: 'Hello there', voice: 'nova', response_format: 'wav', speed: 2 });
  t.equal(speech!.headers.authorization, 'Bearer sk-voice-secret-0123456789');
  t.match(transcription!.body, { model: 'whisper-large', language: 'en', file: { filename: 'say.wav' } });
  t.match(inst.variables.spoken, { mimeType: 'audio/wav', durationMs: 250, name: 'say.wav' });
  t.same(inst.variables.heard, { text: 'hello from the provider', language: 'en' });
  t.notMatch(JSON.stringify(inst), 'sk-voice-secret', 'the key is nowhere in the execution');
});

t.test("a provider's refusal fails with its AI_ code, the key scrubbed", async (t) => {
  const { h, server } = await providerHarness(t);
  server.script(reply.status(401, 'Incorrect API key provided: sk-voice-secret-0123456789'));
  const pid = await h.publish(ROUND_TRIP('    provider: speech', '    provider: speech'));
  const inst = await ended(h, (await h.start(pid, { words: 'hi' })).processInstanceId);
  t.match(inst.error, { code: 'AI_AUTH', nodeId: 'say' });
  t.notMatch(JSON.stringify(inst), 'sk-voice-secret');
  const unknown = await h.publish(ROUND_TRIP('    provider: nobody', ''));
  const again = await ended(h, (await h.start(unknown, { words: 'hi' })).processInstanceId);
  t.match(again.error, { code: 'AI_PROVIDER_NOT_FOUND' });
});
