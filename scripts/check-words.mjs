#!/usr/bin/env node
// The words docs/glossary.md retired stay retired: no identifier or module path in src/, test/
// or bench/ uses one. A retired word's concept has another name now (the glossary says which);
// journal record types and the wire's names are not checked here (they never change).
// Run by `npm run lint` (or with a tree's root as argument); exits 1 listing each use.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(process.argv[2] ?? join(dirname(fileURLToPath(import.meta.url)), '..'));

/** Each retired word as a pattern, and what to say instead (the glossary's table). */
const RETIRED = [
  [
    /(?<![.\w])Instance(?:Table|TableHolder|Error|Start)?\b/,
    'an execution: Execution, ExecutionTable, ExecutionError, ExecutionStart',
  ],
  [/\bSHARED_PARTITION\b/, 'the commons partition: COMMONS_PARTITION'],
  [/\b(?:ExecutionDirectory|DirectoryEntry)\b/, 'the execution index: ExecutionIndex, ExecutionIndexEntry'],
  [/\b(?:DirectoryRecord|directoryHandlers|takeDirectory|directorySeq|directoryAt)\b/, 'the catalogue (partition 0)'],
  [/\b(?:Recovery(?:Request|Deps|Input|Answers|Record)|recoveryHandlers)\b/, 'repair (retry, replay): Repair…'],
  [/state\/directory\//, 'the execution index: state/execution-index/'],
  [
    /instance-table\.js|recovery-ops\.js|(?:routes|step|records)\/recovery\.js|records\/directory\.js/,
    'execution-table.js, repair.js, records/catalogue.js',
  ],
];

/**
 * Files not held to it: two name another library's `Instance` (ink's, autocannon's), not ours
 * to rename; this check's own test plants retired words to see them refused.
 */
const EXEMPT = new Set(['test/helpers/ink.ts', 'bench/load-worker.ts', 'test/scripts/check-words.test.ts']);

function sourceFiles(dir) {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return sourceFiles(path);
    return /\.(tsx?|mjs)$/.test(e.name) ? [path] : [];
  });
}

const found = [];
for (const file of ['src', 'test', 'bench'].flatMap((d) => sourceFiles(join(ROOT, d)))) {
  const rel = relative(ROOT, file);
  if (EXEMPT.has(rel)) continue;
  readFileSync(file, 'utf8')
    .split('\n')
    .forEach((line, i) => {
      for (const [pattern, instead] of RETIRED)
        if (pattern.test(line)) found.push(`${rel}:${i + 1}: a retired word (${pattern.source}); say ${instead}`);
    });
}
if (found.length > 0) {
  for (const f of found) console.error(f);
  console.error('words: see docs/glossary.md for the words in use');
  process.exit(1);
}
console.log('words: no retired word in src/, test/ or bench/');
