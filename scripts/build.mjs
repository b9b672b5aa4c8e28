// `npm run build`: compiles into dist.next/ and then swaps it in for dist/. A CLI or daemon
// started from dist/ keeps working during a build: deleting dist/ first took its modules away
// from under it (a command that loads a module lazily then failed).
import { execFileSync } from 'node:child_process';
import { existsSync, renameSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';

const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
const NEXT = 'dist.next';
const OLD = 'dist.old';
for (const dir of [NEXT, OLD]) rmSync(dir, { recursive: true, force: true });
try {
  for (const project of ['tsconfig.json', 'tsconfig.worker.json'])
    execFileSync(process.execPath, [tsc, '-p', project, '--outDir', NEXT], { stdio: 'inherit' });
} catch {
  rmSync(NEXT, { recursive: true, force: true });
  process.exit(1);
}
if (existsSync('dist')) renameSync('dist', OLD);
renameSync(NEXT, 'dist');
rmSync(OLD, { recursive: true, force: true });
