import { execFileSync } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import { cpus, totalmem } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** docs/benchmarks/, where every benchmark writes its latest figures (a file each); docs/performance.md sums them up. */
export const BENCHMARKS_DIR = fileURLToPath(new URL('../../docs/benchmarks/', import.meta.url));

/**
 * One line naming when and where figures were measured. The commit is named only on request
 * (the console): docs/benchmarks/ is a reference, and a decision record that quotes figures
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

/** Replaces the text between `<!-- bench:NAME -->` and `<!-- /bench:NAME -->` in docs/benchmarks/NAME.md. */
export async function writeSection(name: string, body: string): Promise<void> {
  const open = `<!-- bench:${name} -->`;
  const close = `<!-- /bench:${name} -->`;
  const file = join(BENCHMARKS_DIR, `${name}.md`);
  const doc = await readFile(file, 'utf8');
  const start = doc.indexOf(open);
  const end = doc.indexOf(close);
  if (start < 0 || end < start) throw new Error(`docs/benchmarks/${name}.md has no ${open} ... ${close} section`);
  await writeFile(file, `${doc.slice(0, start + open.length)}\n${body.trim()}\n${doc.slice(end)}`);
}
