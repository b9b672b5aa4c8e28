/**
 * What a WAV file's header says: format, channels, rate, sample size, and how long the sound
 * is. Reads RIFF chunks in order (a `LIST` chunk before `data` is common), and trusts no size
 * past the end of the file: programs writing to a pipe put placeholder sizes there.
 */

/** A WAV file's format and length. */
export interface WavInfo {
  /** 1: PCM integer samples; 3: float; 0xfffe: extensible (its sub-format not read). */
  readonly audioFormat: number;
  readonly channels: number;
  readonly sampleRate: number;
  readonly bitsPerSample: number;
  /** Bytes of sound data present in the file. */
  readonly dataBytes: number;
  /** Where the sound data starts. */
  readonly dataOffset: number;
  readonly durationMs: number;
}

/** The header of `wav`, or null when it is no WAV (RIFF/WAVE with fmt and data chunks). Pure. */
export function readWav(wav: Buffer): WavInfo | null {
  if (wav.length < 12 || wav.toString('latin1', 0, 4) !== 'RIFF' || wav.toString('latin1', 8, 12) !== 'WAVE')
    return null;
  let fmt: Omit<WavInfo, 'dataBytes' | 'dataOffset' | 'durationMs'> | null = null;
  let byteRate = 0;
  for (let at = 12; at + 8 <= wav.length;) {
    const id = wav.toString('latin1', at, at + 4);
    const size = wav.readUInt32LE(at + 4);
    const body = at + 8;
    if (id === 'fmt ' && body + 16 <= wav.length) {
      fmt = {
        audioFormat: wav.readUInt16LE(body),
        channels: wav.readUInt16LE(body + 2),
        sampleRate: wav.readUInt32LE(body + 4),
        bitsPerSample: wav.readUInt16LE(body + 14),
      };
      byteRate = wav.readUInt32LE(body + 8);
    } else if (id === 'data') {
      if (!fmt || byteRate === 0) return null;
      const dataBytes = Math.min(size, wav.length - body);
      return { ...fmt, dataBytes, dataOffset: body, durationMs: Math.round((dataBytes / byteRate) * 1000) };
    }
    at = body + size + (size % 2); // chunks are padded to an even size
  }
  return null;
}
