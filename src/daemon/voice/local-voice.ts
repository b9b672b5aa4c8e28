/**
 * The local speech engines, run as external programs (an argument array, never a shell; a
 * timeout; killed on cancel): espeak-ng speaks (it writes WAV), pocketsphinx transcribes
 * English. Both are Debian packages (`espeak-ng`, `pocketsphinx pocketsphinx-en-us`); a
 * missing one is VOICE_ENGINE_MISSING naming what to install.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, readFile, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { ExecaError } from 'execa';
import { MAX_TIMER_MS } from '../outbound/http-request.js';
import type { WorkResult } from '../outbound/result.js';
import { readWav } from './wav.js';

/** The programs the local engines run (tests point them elsewhere). */
export interface LocalPrograms {
  readonly espeak: string;
  readonly pocketsphinx: string;
}

export const DEFAULT_PROGRAMS: LocalPrograms = { espeak: 'espeak-ng', pocketsphinx: 'pocketsphinx_continuous' };

const INSTALL: Readonly<Record<keyof LocalPrograms, string>> = {
  espeak: 'apt-get install espeak-ng (Debian, Ubuntu), brew install espeak-ng (macOS)',
  pocketsphinx: 'apt-get install pocketsphinx pocketsphinx-en-us (Debian, Ubuntu)',
};

/** What running a program came to: its output, or the failure as a WorkResult. */
type Ran = { readonly ok: true; readonly stdout: string } | { readonly ok: false; readonly failure: WorkResult };

/**
 * Runs `program` with `args`, bounded by `timeoutMs` and `signal`. Never rejects. The program
 * leads a process group of its own, and the whole group is killed at the timeout or on cancel:
 * a wrapper script's children would otherwise hold its output open and outlive it.
 */
async function run(
  which: keyof LocalPrograms,
  program: string,
  args: readonly string[],
  timeoutMs: number,
  signal: AbortSignal,
): Promise<Ran> {
  // Loaded on first use: execa is a hundred modules, and a daemon that never speaks would load
  // them at every start, before its API answers.
  const { execa } = await import('execa');
  if (signal.aborted)
    return { ok: false, failure: { ok: false, code: 'CANCELLED', message: `${program} was cancelled` } };
  let stopped: 'timeout' | 'cancel' | null = null;
  const sub = execa(program, args, { detached: true, stdin: 'ignore', maxBuffer: 1024 * 1024, reject: true });
  const killGroup = (why: 'timeout' | 'cancel') => {
    stopped ??= why;
    try {
      if (sub.pid !== undefined) process.kill(-sub.pid, 'SIGKILL');
    } catch {
      // already gone
    }
  };
  const timer = setTimeout(() => killGroup('timeout'), Math.min(timeoutMs, MAX_TIMER_MS));
  const onAbort = () => killGroup('cancel');
  signal.addEventListener('abort', onAbort, { once: true });
  try {
    const r = await sub;
    return { ok: true, stdout: r.stdout };
  } catch (err) {
    const e = err as ExecaError;
    if (stopped === 'cancel')
      return { ok: false, failure: { ok: false, code: 'CANCELLED', message: `${program} was cancelled` } };
    if (stopped === 'timeout')
      return {
        ok: false,
        failure: { ok: false, code: 'VOICE_TIMEOUT', message: `${program} ran longer than ${timeoutMs} ms` },
      };
    if ((e as { code?: string }).code === 'ENOENT')
      return {
        ok: false,
        failure: {
          ok: false,
          code: 'VOICE_ENGINE_MISSING',
          message: `${program} is not installed on the daemon's host: ${INSTALL[which]}; or name a provider`,
        },
      };
    const detail =
      String(e.stderr ?? '')
        .trim()
        .split('\n')
        .at(-1) || e.shortMessage;
    return { ok: false, failure: { ok: false, code: 'VOICE_FAILED', message: `${program} failed: ${detail}` } };
  } finally {
    clearTimeout(timer);
    signal.removeEventListener('abort', onAbort);
  }
}

/**
 * Speaks `text` with espeak-ng into a WAV in `tmpDir`; resolves with its bytes (the caller
 * stores them), or the failure.
 */
export async function speakLocally(
  req: { readonly text: string; readonly voice?: string; readonly rate?: number; readonly timeoutMs: number },
  tmpDir: string,
  signal: AbortSignal,
  programs: LocalPrograms = DEFAULT_PROGRAMS,
): Promise<{ readonly ok: true; readonly wav: Buffer } | { readonly ok: false; readonly failure: WorkResult }> {
  await mkdir(tmpDir, { recursive: true, mode: 0o700 });
  const out = join(tmpDir, `${randomBytes(8).toString('hex')}.wav`);
  try {
    // -w writes a complete header (to stdout espeak-ng writes placeholder sizes); `--` ends options.
    const args = ['-w', out, '-v', req.voice ?? 'en-us', '-s', String(req.rate ?? 175), '--', req.text];
    const ran = await run('espeak', programs.espeak, args, req.timeoutMs, signal);
    if (!ran.ok) return ran;
    const wav = await readFile(out);
    if (!readWav(wav))
      return { ok: false, failure: { ok: false, code: 'VOICE_FAILED', message: 'espeak-ng wrote no WAV' } };
    return { ok: true, wav };
  } finally {
    await unlink(out).catch(() => undefined);
  }
}

/** The words pocketsphinx may hear, as a JSGF grammar: any sequence of them. Pure. */
export function vocabularyGrammar(words: readonly string[]): string {
  const alternatives = [...new Set(words.map((w) => w.trim().toLowerCase()).filter((w) => w !== ''))];
  return `#JSGF V1.0;\ngrammar vocabulary;\npublic <utterance> = ( ${alternatives.join(' | ')} )+ ;\n`;
}

/**
 * Transcribes a WAV (16-bit PCM, mono) with pocketsphinx's English model; with `vocabulary`,
 * listening for those words only. Resolves with the text, or the failure.
 */
export async function transcribeLocally(
  req: {
    readonly wavPath: string;
    readonly wav: Buffer;
    readonly language: string;
    readonly vocabulary?: readonly string[];
    readonly timeoutMs: number;
  },
  tmpDir: string,
  signal: AbortSignal,
  programs: LocalPrograms = DEFAULT_PROGRAMS,
): Promise<{ readonly ok: true; readonly text: string } | { readonly ok: false; readonly failure: WorkResult }> {
  if (!/^en(-us)?$/i.test(req.language))
    return {
      ok: false,
      failure: {
        ok: false,
        code: 'VOICE_ENGINE_MISSING',
        message: `the local engine transcribes English only, not ${req.language}: name a provider`,
      },
    };
  const info = readWav(req.wav);
  if (!info || info.audioFormat !== 1 || info.bitsPerSample !== 16 || info.channels !== 1)
    return {
      ok: false,
      failure: {
        ok: false,
        code: 'VOICE_FAILED',
        message: 'the local engine reads 16-bit PCM mono WAV only: convert the audio, or name a provider',
      },
    };
  // The FFT must cover pocketsphinx's analysis window (its -wlen default) at the file's rate.
  let nfft = 256;
  while (nfft < 0.025625 * info.sampleRate) nfft *= 2;
  const args = [
    '-infile',
    req.wavPath,
    '-samprate',
    String(info.sampleRate),
    '-nfft',
    String(nfft),
    '-logfn',
    '/dev/null',
  ];
  let grammar: string | null = null;
  if (req.vocabulary && req.vocabulary.length > 0) {
    await mkdir(tmpDir, { recursive: true, mode: 0o700 });
    grammar = join(tmpDir, `${randomBytes(8).toString('hex')}.gram`);
    await writeFile(grammar, vocabularyGrammar(req.vocabulary), { mode: 0o600 });
    args.push('-jsgf', grammar);
  }
  try {
    const ran = await run('pocketsphinx', programs.pocketsphinx, args, req.timeoutMs, signal);
    if (!ran.ok) return ran;
    const text = ran.stdout
      .split('\n')
      .map((l) => l.trim())
      .filter((l) => l !== '')
      .join(' ');
    return { ok: true, text };
  } finally {
    if (grammar) await unlink(grammar).catch(() => undefined);
  }
}
