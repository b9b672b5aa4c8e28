/**
 * The daemon's VoiceRunner: a voiceTask's speak or transcribe with the local engines
 * (local-voice.ts) or an openai-compatible provider (speech-api.ts). A spoken file is written to
 * the file store as a blob here, outside the step; its metadata goes back in the result, and
 * the node's completion journals it (`file.stored`) in the same step.
 */
import { OpenAiCompatibleKind } from '../ai/openai-compatible.js';
import { findProvider } from '../ai/lookup.js';
import type { AiProviderLookup } from '../ai/types.js';
import type { NetworkPolicy } from '../outbound/network-policy.js';
import type { WorkResult } from '../outbound/result.js';
import type { FileStore } from '../files/file-store.js';
import { DEFAULT_PROGRAMS, speakLocally, transcribeLocally, type LocalPrograms } from './local-voice.js';
import { withProvider } from './speech-api.js';
import type { Spoken, Transcribed, VoiceCall, VoiceRunner } from './types.js';
import { readWav } from './wav.js';

/** Content types of the formats a voiceTask speaks. */
const MIME: Readonly<Record<string, string>> = {
  wav: 'audio/wav',
  mp3: 'audio/mpeg',
  opus: 'audio/ogg',
  flac: 'audio/flac',
};

/** Options of createVoiceRunner. */
export interface VoiceRunnerOptions {
  readonly files: FileStore;
  /** Where temporary audio goes (`<data-dir>/files/tmp`). */
  readonly tmpDir: string;
  /** Provider connections go through it, as model calls do. */
  readonly network?: NetworkPolicy;
  /** The local programs (default espeak-ng, pocketsphinx_continuous on the PATH). */
  readonly programs?: LocalPrograms;
}

/** Creates the daemon's VoiceRunner. */
export function createVoiceRunner(options: VoiceRunnerOptions): VoiceRunner {
  const kind = new OpenAiCompatibleKind(options.network);
  const programs = options.programs ?? DEFAULT_PROGRAMS;
  const { files, tmpDir } = options;

  const stored = async (call: Extract<VoiceCall, { operation: 'speak' }>, audio: Buffer): Promise<Spoken> => {
    const blob = await files.writeBlob(audio);
    const file = files.describe(
      {
        organization: call.organization,
        name: call.fileName,
        mimeType: MIME[call.format] ?? 'application/octet-stream',
      },
      blob,
    );
    return { file, durationMs: readWav(audio)?.durationMs ?? null };
  };

  return {
    async run(call: VoiceCall, providers: AiProviderLookup, signal: AbortSignal): Promise<WorkResult> {
      try {
        if (call.provider === null) {
          if (call.operation === 'speak') {
            const spoken = await speakLocally(call, tmpDir, signal, programs);
            return spoken.ok ? { ok: true, value: await stored(call, spoken.wav) } : spoken.failure;
          }
          const wav = await files.readAll(call.audio);
          // The engine reads a file: the blob's own, or a copy where blobs are not files.
          const file = await files.path(call.audio);
          const heard = await transcribeLocally(
            {
              wavPath: file.path,
              wav,
              language: call.language,
              vocabulary: call.vocabulary,
              timeoutMs: call.timeoutMs,
            },
            tmpDir,
            signal,
            programs,
          ).finally(() => file.release());
          return heard.ok
            ? { ok: true, value: { text: heard.text, language: call.language } satisfies Transcribed }
            : heard.failure;
        }
        const found = findProvider(providers, call);
        if ('failure' in found) return found.failure;
        const provider = found.provider;
        if (!provider || provider.kind !== 'openai-compatible')
          return {
            ok: false,
            code: 'AI_PROVIDER_NOT_FOUND',
            message: provider
              ? `provider ${JSON.stringify(call.provider)} is ${provider.kind}: speech needs an openai-compatible one`
              : `no model provider ${JSON.stringify(call.provider)} in organization ${JSON.stringify(call.organization)}`,
          };
        if (call.operation === 'speak') {
          const r = await withProvider(kind, provider, call, signal, async (client, s) => {
            const res = await client.audio.speech.create(
              {
                model: call.model ?? 'tts-1',
                voice: (call.voice ?? 'alloy') as 'alloy',
                input: call.text,
                response_format: call.format,
                ...(call.rate !== undefined && { speed: call.rate / 175 }),
              },
              { signal: s, maxRetries: 0 },
            );
            return Buffer.from(await res.arrayBuffer());
          });
          return r.ok ? { ok: true, value: await stored(call, r.value) } : r;
        }
        const audio = await files.readAll(call.audio);
        const r = await withProvider(kind, provider, call, signal, async (client, s) => {
          const { toFile } = await import('openai');
          const res = await client.audio.transcriptions.create(
            {
              file: await toFile(audio, call.audio.name, { type: call.audio.mimeType }),
              model: call.model ?? 'whisper-1',
              language: call.language.slice(0, 2),
              response_format: 'json',
            },
            { signal: s, maxRetries: 0 },
          );
          return (res as { text: string }).text;
        });
        return r.ok ? { ok: true, value: { text: r.value, language: call.language } satisfies Transcribed } : r;
      } catch (err) {
        // I/O of the file store (a blob that went missing, a full disk): the node's failure.
        return {
          ok: false,
          code: 'VOICE_FAILED',
          message: `the audio cannot be read or stored: ${(err as Error).message}`,
        };
      }
    },
  };
}
