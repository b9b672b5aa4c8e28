// `npm run build`: compiles into dist.next/ and then swaps it in for dist/. A CLI or daemon
// started from dist/ keeps working during a build: deleting dist/ first took its modules away
// from under it (a command that loads a module lazily then failed).
//
// The browser console (src/console, its own TypeScript project) is typechecked and bundled by
// esbuild into dist.next/console/, beside the daemon's tsc while it runs: the daemon serves it
// from there (src/daemon/api/console/assets.ts). Its component tests (test/console) are bundled into
// dist.next/test/console/, where tap finds the rest of the tests. A tree without src/console
// (the build's own test fixtures) builds without it.
//
// A tree built already is not built again: dist/ holds the digest of what the build reads, and a
// build that finds it equal stops there (`npm ci` builds through `prepare`, then `npm test`
// would build the same sources again through `pretest`). Remove dist/ to build anyway.
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const require = createRequire(import.meta.url);
const tsc = require.resolve('typescript/bin/tsc');
const NEXT = 'dist.next';
const OLD = 'dist.old';
const CONSOLE = 'src/console';
const CONSOLE_TESTS = 'test/console';
/** Browsers released from 2024 on: what the console's bundle is written for. */
const BROWSERS = ['chrome121', 'edge121', 'firefox122', 'safari17.3'];

/** Runs tsc with `args`; resolves when it succeeded, rejects when it did not (its output shown). */
function runTsc(args) {
  return new Promise((resolve, reject) => {
    const child = execFile(process.execPath, [tsc, ...args], { maxBuffer: 64 * 1024 * 1024 }, (err, stdout, stderr) => {
      process.stdout.write(stdout);
      process.stderr.write(stderr);
      if (err) reject(new Error(`tsc ${args.join(' ')} failed`));
      else resolve();
    });
    child.stdin?.end();
  });
}

/** The daemon, CLI and tests (tsconfig.json), then the worker's declarations. */
async function buildNode() {
  for (const project of ['tsconfig.json', 'tsconfig.worker.json']) await runTsc(['-p', project, '--outDir', NEXT]);
}

/** The console: typechecked (its tests' project too), bundled, and its index.html written. */
async function buildConsole() {
  const esbuild = await import('esbuild');
  // One after the other: with the daemon's tsc beside them, two cores are kept busy, not oversubscribed.
  const checks = runTsc(['-p', `${CONSOLE}/tsconfig.json`]).then(
    () => existsSync(`${CONSOLE_TESTS}/tsconfig.json`) && runTsc(['-p', `${CONSOLE_TESTS}/tsconfig.json`]),
  );
  const common = {
    bundle: true,
    format: 'esm',
    jsx: 'automatic',
    jsxImportSource: 'preact',
    logLevel: 'warning',
  };
  const out = join(NEXT, 'console');
  const app = esbuild.build({
    ...common,
    entryPoints: { main: `${CONSOLE}/main.tsx` },
    tsconfig: `${CONSOLE}/tsconfig.json`,
    outdir: out,
    entryNames: 'assets/[name]-[hash]',
    chunkNames: 'assets/[name]-[hash]',
    assetNames: 'assets/[name]-[hash]',
    splitting: true,
    minify: true,
    sourcemap: 'linked',
    legalComments: 'none',
    target: BROWSERS,
    platform: 'browser',
    metafile: true,
    define: { 'process.env.NODE_ENV': '"production"' },
  });
  const tests = existsSync(CONSOLE_TESTS)
    ? esbuild.build({
        ...common,
        entryPoints: readdirSync(CONSOLE_TESTS)
          .filter((f) => /\.test\.tsx?$/.test(f))
          .map((f) => join(CONSOLE_TESTS, f)),
        tsconfig: `${CONSOLE_TESTS}/tsconfig.json`,
        outdir: join(NEXT, CONSOLE_TESTS),
        platform: 'node',
        target: 'node20',
        packages: 'external',
        sourcemap: true,
      })
    : Promise.resolve();
  const [built] = await Promise.all([app, tests, checks]);
  writeFileSync(join(out, 'index.html'), indexHtml(built.metafile, out));
}

/**
 * The console's index.html: the entry's script and stylesheet by their hashed names, its static
 * imports preloaded. No inline script or style (the Content-Security-Policy forbids both).
 */
function indexHtml(metafile, out) {
  const outputs = Object.entries(metafile.outputs);
  const [entryPath, entry] = outputs.find(([, o]) => o.entryPoint === `${CONSOLE}/main.tsx`);
  const url = (path) => `/${path.slice(out.length + 1)}`;
  const preloads = entry.imports.filter((i) => i.kind === 'import-statement').map((i) => i.path);
  const lines = [
    '<!doctype html>',
    '<html lang="en">',
    '<head>',
    '<meta charset="utf-8">',
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    '<meta name="color-scheme" content="light dark">',
    '<title>wfx console</title>',
    '<link rel="icon" href="data:,">',
    `<link rel="stylesheet" href="${url(entry.cssBundle)}">`,
    ...preloads.map((p) => `<link rel="modulepreload" href="${url(p)}">`),
    `<script type="module" src="${url(entryPath)}"></script>`,
    '</head>',
    '<body>',
    '<noscript>The wfx console needs JavaScript.</noscript>',
    '<div id="app"></div>',
    '</body>',
    '</html>',
    '',
  ];
  return lines.join('\n');
}

/** Where dist/ keeps the digest of the inputs it was built from. */
const STAMP = join('dist', '.inputs.sha256');

/**
 * The digest of what the build reads: every file under src/, test/ and bench/ (the projects'
 * includes), the tsconfigs, package.json and its lock (the compiler and the types), and this
 * script.
 */
function inputsDigest() {
  const hash = createHash('sha256');
  const add = (path) => {
    hash.update(`${path}\0`);
    hash.update(readFileSync(path));
    hash.update('\0');
  };
  const walk = (dir) => {
    const entries = readdirSync(dir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1));
    for (const e of entries) {
      const path = join(dir, e.name);
      if (e.isDirectory()) walk(path);
      else if (e.isFile()) add(path);
    }
  };
  for (const dir of ['src', 'test', 'bench']) if (existsSync(dir)) walk(dir);
  for (const f of readdirSync('.').sort())
    if (/^tsconfig.*\.json$/.test(f) || f === 'package.json' || f === 'package-lock.json') add(f);
  add(fileURLToPath(import.meta.url));
  return hash.digest('hex');
}

const digest = inputsDigest();
if (existsSync(STAMP) && readFileSync(STAMP, 'utf8') === digest) {
  console.log('build: dist/ is up to date with its sources');
  process.exit(0);
}
for (const dir of [NEXT, OLD]) rmSync(dir, { recursive: true, force: true });
// Both halves run to their end, so that a failed one never leaves the other writing into NEXT.
const results = await Promise.allSettled([
  buildNode(),
  ...(existsSync(`${CONSOLE}/tsconfig.json`) ? [buildConsole()] : []),
]);
const failed = results.filter((r) => r.status === 'rejected');
if (failed.length > 0) {
  for (const r of failed) console.error(`build: ${r.reason instanceof Error ? r.reason.message : r.reason}`);
  rmSync(NEXT, { recursive: true, force: true });
  process.exit(1);
}
writeFileSync(join(NEXT, '.inputs.sha256'), digest);
if (existsSync('dist')) renameSync('dist', OLD);
renameSync(NEXT, 'dist');
rmSync(OLD, { recursive: true, force: true });
