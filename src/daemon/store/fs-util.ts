import { constants } from 'node:fs';
import { mkdir, open, chmod, rename, stat, type FileHandle } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';

/** Mode of every directory wfx creates in a data dir: owner only. */
export const DIR_MODE = 0o700;
/** Mode of every file wfx creates in a data dir: owner read/write only. */
export const FILE_MODE = 0o600;

/**
 * Creates `dir` (and parents) with mode 0700, and tightens an existing one to 0700.
 * Throws the fs error when the path exists and is not a directory.
 */
export async function ensurePrivateDir(dir: string): Promise<void> {
  await mkdir(dir, { recursive: true, mode: DIR_MODE });
  const st = await stat(dir);
  if (!st.isDirectory()) throw Object.assign(new Error(`${dir} is not a directory`), { code: 'ENOTDIR' });
  if ((st.mode & 0o777) !== DIR_MODE) await chmod(dir, DIR_MODE);
}

/**
 * fsyncs a directory so that entries created, renamed or removed in it survive a power cut.
 * A file's own fsync does not cover its name in the directory.
 */
export async function fsyncDir(dir: string): Promise<void> {
  const fh = await open(dir, constants.O_RDONLY | constants.O_DIRECTORY);
  try {
    await fh.sync();
  } finally {
    await fh.close();
  }
}

/**
 * Writes text given in pieces, about 1 MiB at a time: never one string (and one Buffer) as big
 * as the whole file, nor a write call per piece.
 */
async function writePieces(fh: FileHandle, pieces: readonly string[]): Promise<void> {
  let group: string[] = [];
  let length = 0;
  for (const piece of pieces) {
    group.push(piece);
    length += piece.length;
    if (length < 1 << 20) continue;
    await fh.writeFile(group.join('')); // at the current position, all of it
    group = [];
    length = 0;
  }
  if (group.length > 0) await fh.writeFile(group.join(''));
}

/**
 * Replaces `path` with `content` (text or bytes, or text in pieces) atomically and durably (mode 0600): write a temporary file,
 * fsync it, rename it over `path`, fsync the directory. After a crash or power cut at any
 * instant the file holds either the old or the new content, never neither and never a mix.
 */
export async function writeFileAtomic(path: string, content: string | Buffer | readonly string[]): Promise<void> {
  const tmp = join(dirname(path), `.${basename(path)}.tmp`);
  const fh = await open(tmp, 'w', FILE_MODE);
  try {
    if (typeof content === 'string' || Buffer.isBuffer(content)) await fh.writeFile(content);
    else await writePieces(fh, content);
    await fh.sync();
  } finally {
    await fh.close();
  }
  await rename(tmp, path);
  await fsyncDir(dirname(path));
}
