/** A voiceTask's speak in a case (mocks.ts): the file it made, named and typed as a real one. */
import { createHash } from 'node:crypto';
import type { Spoken, VoiceCall } from '../voice/types.js';

/** How long a spoken file is kept, as a daemon's retention would keep it. */
const DEFAULT_RETENTION_MS = 7 * 24 * 60 * 60 * 1000;

/** The audio formats a speak writes, by their types. */
const AUDIO_TYPES: Readonly<Record<string, string>> = {
  wav: 'audio/wav',
  mp3: 'audio/mpeg',
  opus: 'audio/ogg',
  flac: 'audio/flac',
};

/**
 * What a mocked speak made: a file of the case (its id the same in every run of the case, its
 * content empty) named and typed as the real one would be.
 */
export function spokenFile(
  call: Extract<VoiceCall, { operation: 'speak' }>,
  spoken: { readonly durationMs?: number; readonly bytes?: number },
  nodeId: string,
  n: number,
  now: Date,
): Spoken {
  const at = now.toISOString();
  return {
    file: {
      fileId: `file_${createHash('sha256').update(`${nodeId}\n${n}`).digest('hex').slice(0, 32)}`,
      organization: call.organization,
      name: call.fileName,
      mimeType: AUDIO_TYPES[call.format] ?? 'application/octet-stream',
      bytes: spoken.bytes ?? 0,
      sha256: createHash('sha256').digest('hex'),
      createdAt: at,
      expiresAt: new Date(now.getTime() + DEFAULT_RETENTION_MS).toISOString(),
    },
    durationMs: spoken.durationMs ?? null,
  };
}
