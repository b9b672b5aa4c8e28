import { execFileSync } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import { cpus, totalmem } from 'node:os';
import { fileURLToPath } from 'node:url';

/** docs/performance.md, where every benchmark writes its latest figures. */
export const PERFORMANCE_MD = fileURLToPath(new URL('../../docs/performance.md', import.meta.url));

/**
 * One line naming when and where figures were measured. The commit is named only on request
 * (the console): docs/performance.md is a reference, and a decision record that quotes figures
 * names its commit itself.
 */
export function machineLine(options: { readonly commit?: boolean } = {}): string {
  const cpu = cpus();
  const where = `Measured ${new Date().toISOString().slice(0, 10)} on ${cpu.length} cores (${cpu[0]?.model.trim() ?? 'unknown CPU'}), ${Math.round(totalmem() / 2 ** 30)} GiB, Node ${process.version}`;
  return options.commit === true ? `${where}, commit ${headCommit()}.` : `${where}.`;
}

/** The checked-out commit, short; 'unknown' outside a git checkout. */
function headCommit(): string {
  try {
    return execFileSync('git', ['rev-parse', '--short', 'HEAD'], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    }).trim();
  } catch {
    return 'unknown';
  }
}

/** Replaces the text between `<!-- bench:NAME -->` and `<!-- /bench:NAME -->` in docs/performance.md. */
export async function writeSection(name: string, body: string): Promise<void> {
  const open = `<!-- bench:${name} -->`;
  const close = `<!-- /bench:${name} -->`;
  const doc = await readFile(PERFORMANCE_MD, 'utf8');
  const start = doc.indexOf(open);
  const end = doc.indexOf(close);
  if (start < 0 || end < start) throw new Error(`docs/performance.md has no ${open} ... ${close} section`);
  await writeFile(PERFORMANCE_MD, `${doc.slice(0, start + open.length)}\n${body.trim()}\n${doc.slice(end)}`);
}
