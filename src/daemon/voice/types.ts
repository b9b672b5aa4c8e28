/**
 * The contract between the engine and the speech engines: what a voiceTask asks for
 * (VoiceCall), and what it comes back with (a WorkResult whose value is Spoken or Transcribed).
 */
import type { AiProviderLookup, AiRetryPolicy } from '../ai/types.js';
import type { WorkResult } from '../outbound/result.js';
import type { StoredFile } from '../state/state.js';

/** One voiceTask's work, its `{ref}` references resolved. Not journaled: the node's properties are. */
export type VoiceCall = {
  readonly organization: string;
  /** A registered provider's name (openai-compatible); null: the local engine. */
  readonly provider: string | null;
  readonly model?: string;
  /** Per attempt. */
  readonly timeoutMs: number;
  /** A provider's retries (the local engine tries once). */
  readonly retry: AiRetryPolicy;
} & (
  | {
      readonly operation: 'speak';
      readonly text: string;
      readonly voice?: string;
      readonly rate?: number;
      readonly format: 'wav' | 'mp3' | 'opus' | 'flac';
      /** The stored file's name (`<nodeId>.wav`). */
      readonly fileName: string;
    }
  | {
      readonly operation: 'transcribe';
      /** The audio, as the file store holds it. */
      readonly audio: StoredFile;
      readonly language: string;
      readonly vocabulary?: readonly string[];
    }
);

/** A speak's result: the audio, stored (its `file.stored` is journaled with the node's completion). */
export interface Spoken {
  readonly file: StoredFile;
  /** From the WAV header; null for another format. */
  readonly durationMs: number | null;
}

/** A transcription's result. */
export interface Transcribed {
  readonly text: string;
  readonly language: string;
}

/**
 * Carries out voiceTasks. Never rejects for an engine's or provider's failure: the result has a
 * code (VOICE_ENGINE_MISSING, VOICE_TIMEOUT, VOICE_FAILED, AI_*), CANCELLED when `signal` aborts.
 */
export interface VoiceRunner {
  run(call: VoiceCall, providers: AiProviderLookup, signal: AbortSignal): Promise<WorkResult>;
}
