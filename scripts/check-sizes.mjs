#!/usr/bin/env node
// Source files stay small enough to read in one sitting: no file in src/ is over MAX_LINES
// lines. A file that grows past it is split by concern; there is no way to excuse one. Past
// WARN_LINES the check names the file, so it is split at its next change rather than trimmed.
// Run by `npm run lint`; exits 1 listing every file over the limit.
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
// The line no file crosses, and the one past which a file is due a split.
const MAX_LINES = 400;
const WARN_LINES = 350;

function sourceFiles(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return sourceFiles(path);
    return /\.tsx?$/.test(e.name) ? [path] : [];
  });
}

const long = [];
const near = [];
for (const file of sourceFiles(join(ROOT, 'src'))) {
  const lines = readFileSync(file, 'utf8').split('\n');
  const count = lines.at(-1) === '' ? lines.length - 1 : lines.length;
  if (count > MAX_LINES) long.push(`${relative(ROOT, file)}: ${count} lines, over ${MAX_LINES}: split it by concern`);
  else if (count > WARN_LINES)
    near.push(`${relative(ROOT, file)}: ${count} lines, past ${WARN_LINES}: split it at its next change`);
}
for (const n of near) console.warn(`warning: ${n}`);
if (long.length > 0) {
  for (const l of long) console.error(l);
  process.exit(1);
}
console.log(`sizes: every src/ file within ${MAX_LINES} lines`);
