#!/usr/bin/env node
// Source files stay small enough to read in one sitting: a file in src/ over MAX_LINES lines
// must say why at its top, in a comment starting "Long file:" within its first 20 lines.
// Run by `npm run lint`; exits 1 listing every file over the limit without a reason.
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
// About 400, as the house style says: a file a few lines over after formatting is no second
// concern to split out.
const MAX_LINES = 420;

function sourceFiles(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return sourceFiles(path);
    return /\.tsx?$/.test(e.name) ? [path] : [];
  });
}

const long = [];
for (const file of sourceFiles(join(ROOT, 'src'))) {
  const lines = readFileSync(file, 'utf8').split('\n');
  const count = lines.at(-1) === '' ? lines.length - 1 : lines.length;
  if (count <= MAX_LINES) continue;
  const reason = lines.slice(0, 20).some((l) => /^\s*(\/\/|\*|\/\*\*?)\s*Long file:/.test(l));
  if (!reason)
    long.push(`${relative(ROOT, file)}: ${count} lines, over ${MAX_LINES}, and no "Long file:" reason at its top`);
}
if (long.length > 0) {
  for (const l of long) console.error(l);
  process.exit(1);
}
console.log(`sizes: every src/ file within ${MAX_LINES} lines or says why`);
