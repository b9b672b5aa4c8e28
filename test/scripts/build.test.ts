import '../setup/fixtures.js'; // fixtures under the OS temp dir (see there)
import { execFile } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';

const BUILD = fileURLToPath(new URL('../../../scripts/build.mjs', import.meta.url));
/**
 * The daemon's project of a tree built here: no type packages, and the library's declarations
 * taken as they are (the project's own tsconfig.json does too), so tsc checks the tree's own
 * files, which are what these tests break.
 */
const NODE_OPTIONS = {
  module: 'NodeNext',
  target: 'ES2022',
  rootDir: '.',
  outDir: 'dist',
  types: [],
  skipLibCheck: true,
};
const CONFIG = JSON.stringify({ compilerOptions: NODE_OPTIONS, include: ['src/**/*'] });

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
  writeFileSync(join(cwd, 'dist/marker'), '');
  t.equal(await build(cwd), 0);
  t.ok(existsSync(join(cwd, 'dist/marker')), 'an unchanged tree is not built again');

  writeFileSync(join(cwd, 'src/a.ts'), 'export const a: number = "not a number";\n');
  t.not(await build(cwd), 0, 'a type error fails the build');
  t.match(readFileSync(join(cwd, 'dist/src/a.js'), 'utf8'), /a = 2/, 'dist/ is the last good build, untouched');
  t.notOk(existsSync(join(cwd, 'dist.next')), 'the failed build is not left aside');
});

t.test('the console is typechecked and bundled into dist/console with hashed names', async (t) => {
  const project = fileURLToPath(new URL('../../../', import.meta.url));
  const consoleConfig = {
    compilerOptions: {
      target: 'ES2023',
      module: 'ESNext',
      moduleResolution: 'Bundler',
      lib: ['ES2023', 'DOM'],
      jsx: 'react-jsx',
      jsxImportSource: 'preact',
      strict: true,
      noEmit: true,
      skipLibCheck: true,
      types: [],
    },
    include: ['./**/*'],
  };
  const cwd = t.testdir({
    'tsconfig.json': JSON.stringify({ compilerOptions: NODE_OPTIONS, include: ['src/**/*'], exclude: ['src/console'] }),
    'tsconfig.worker.json': JSON.stringify({ extends: './tsconfig.json', compilerOptions: { noEmit: true } }),
    node_modules: t.fixture('symlink', join(project, 'node_modules')),
    src: {
      'a.ts': 'export const a: number = 2;\n',
      console: {
        'tsconfig.json': JSON.stringify(consoleConfig),
        'main.tsx':
          "import { render } from 'preact';\nimport './styles.css';\nconst later = () => import('./later.js');\nrender(<button onClick={() => void later()}>go</button>, document.body);\n",
        'later.tsx': 'export const later: number = 1;\n',
        'styles.css': 'button { color: red; }\n',
      },
    },
  });
  t.equal(await build(cwd), 0);
  const html = readFileSync(join(cwd, 'dist/console/index.html'), 'utf8');
  const script = /<script type="module" src="\/assets\/(main-[A-Z0-9]+\.js)"><\/script>/.exec(html)?.[1];
  const style = /<link rel="stylesheet" href="\/assets\/(main-[A-Z0-9]+\.css)">/.exec(html)?.[1];
  t.ok(script && existsSync(join(cwd, 'dist/console/assets', script)), 'the entry, by its hashed name');
  t.ok(style && existsSync(join(cwd, 'dist/console/assets', style)), 'the stylesheet, by its hashed name');
  t.ok(existsSync(join(cwd, 'dist/console/assets', `${script}.map`)), 'its source map, a file of its own');
  t.ok(
    readdirSync(join(cwd, 'dist/console/assets')).some((f) => /^later-[A-Z0-9]+\.js$/.test(f)),
    'a dynamic import is a chunk of its own',
  );
  t.notMatch(html, /<script>|<style|style=/, 'nothing inline');

  writeFileSync(join(cwd, 'src/console/later.tsx'), 'export const later: number = "one";\n');
  t.not(await build(cwd), 0, 'a type error in the console fails the build');
  t.equal(readFileSync(join(cwd, 'dist/console/index.html'), 'utf8'), html, 'dist/ is the last good build');
});
