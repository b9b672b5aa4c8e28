import '../setup/fixtures.js'; // fixtures under the OS temp dir (see there)
import { execFile } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';

const BUILD = fileURLToPath(new URL('../../../scripts/build.mjs', import.meta.url));
const CONFIG = JSON.stringify({
  compilerOptions: { module: 'NodeNext', target: 'ES2022', rootDir: '.', outDir: 'dist' },
  include: ['src/**/*'],
});

function build(cwd: string): Promise<number> {
  return new Promise((resolve) => {
    execFile(process.execPath, [BUILD], { cwd, timeout: 120_000 }, (err) => resolve(err ? Number(err.code ?? 1) : 0));
  });
}

t.test('npm run build swaps a complete dist/ in; a failed build leaves dist/ as it was', async (t) => {
  const cwd = t.testdir({
    'tsconfig.json': CONFIG,
    'tsconfig.worker.json': JSON.stringify({
      extends: './tsconfig.json',
      compilerOptions: { declaration: true, emitDeclarationOnly: true },
    }),
    src: { 'a.ts': 'export const a: number = 2;\n' },
    dist: { src: { 'a.js': 'export const a = 1;\n', 'gone.js': '// a file of an older build\n' } },
  });
  t.equal(await build(cwd), 0);
  t.match(readFileSync(join(cwd, 'dist/src/a.js'), 'utf8'), /a = 2/, 'the new output');
  t.ok(existsSync(join(cwd, 'dist/src/a.d.ts')), "the worker project's declarations too");
  t.notOk(existsSync(join(cwd, 'dist/src/gone.js')), 'nothing of the old build left');
  t.notOk(existsSync(join(cwd, 'dist.next')) || existsSync(join(cwd, 'dist.old')), 'no build aside left');

  writeFileSync(join(cwd, 'src/a.ts'), 'export const a: number = "not a number";\n');
  t.not(await build(cwd), 0, 'a type error fails the build');
  t.match(readFileSync(join(cwd, 'dist/src/a.js'), 'utf8'), /a = 2/, 'dist/ is the last good build, untouched');
  t.notOk(existsSync(join(cwd, 'dist.next')), 'the failed build is not left aside');
});
